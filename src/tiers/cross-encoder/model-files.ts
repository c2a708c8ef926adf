/**
 * Which ONNX file of a model folder is loaded. Without a variant: `onnx/model.onnx`, else
 * `model.onnx`, else the folder's only ONNX file (a folder that ships one variant, such as the
 * shipped cross-encoder's `onnx/model_int8.onnx`). With `variant: 'qint8_avx512_vnni'` (or `quint8_avx2`, `O4`, `quantized`, `fp16`, …):
 * `onnx/model_<variant>.onnx`, else `model_<variant>.onnx` — the names sentence-transformers
 * (`export_dynamic_quantized_onnx_model`, `export_optimized_onnx_model`), Optimum and
 * transformers.js publish. `fp32` also finds the plain `model.onnx`.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from '../../errors.js';
import { ModelVariantNotFoundError } from './errors.js';

/** A variant is a file-name suffix: letters, digits, `_`, `-`, `.` (never a path). */
const VARIANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** The ONNX files of a folder, relative (`onnx/…` first, then top level), sorted. */
export function listOnnxFiles(dir: string): string[] {
  const found: string[] = [];
  for (const sub of ['onnx', '']) {
    const at = sub === '' ? dir : join(dir, sub);
    let names: string[];
    try {
      names = readdirSync(at);
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      if (!name.endsWith('.onnx')) continue;
      try {
        if (statSync(join(at, name)).isFile()) found.push(sub === '' ? name : `${sub}/${name}`);
      } catch {
        // vanished between readdir and stat: not a candidate
      }
    }
  }
  return found;
}

/** Candidate paths of a variant, in lookup order. */
export function variantCandidates(variant: string | undefined): string[] {
  if (variant === undefined) return [join('onnx', 'model.onnx'), 'model.onnx'];
  const names = [`model_${variant}.onnx`, ...(variant === 'fp32' ? ['model.onnx'] : [])];
  return [...names.map((n) => join('onnx', n)), ...names];
}

export function validateVariant(variant: unknown): string | undefined {
  if (variant === undefined) return undefined;
  if (typeof variant !== 'string' || !VARIANT_PATTERN.test(variant)) {
    throw new InvalidArgumentError(
      `variant must be a file-name suffix such as 'qint8_avx512_vnni', 'quint8_avx2', 'O4' or 'quantized'; got ${String(variant)}`,
    );
  }
  return variant;
}

/** The model file of `dir` for `variant`; ModelVariantNotFoundError (listing the folder's ONNX files) when absent. */
export function resolveModelFile(dir: string, variant: string | undefined): string | null {
  for (const candidate of variantCandidates(variant)) {
    const path = join(dir, candidate);
    if (existsSync(path)) return path;
  }
  if (variant === undefined) {
    const files = listOnnxFiles(dir);
    return files.length === 1 ? join(dir, files[0]) : null;
  }
  throw new ModelVariantNotFoundError(dir, variant, variantCandidates(variant), listOnnxFiles(dir));
}
