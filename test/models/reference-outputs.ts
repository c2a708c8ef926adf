/**
 * The imported all-MiniLM-L6-v2 folders and the parity set's reference outputs that
 * scripts/fetch-reference-models.sh writes under models/.cache/ (git-ignored), and a reader of the
 * `f32le-rows/v1` files of python/reference_embed.py and python/reference_cross.py.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/package-root.js';

export const CACHE = join(packageRoot(), 'models', '.cache');
export const MINILM_HF = join(CACHE, 'hf', 'all-MiniLM-L6-v2');
export const MINILM_BI = join(CACHE, 'all-minilm-l6-v2');
export const MINILM_CROSS = join(CACHE, 'all-minilm-l6-v2-cross');
export const REFERENCE = join(CACHE, 'reference');
export const PARITY_TEXTS = join(REFERENCE, 'parity-texts.jsonl');
export const PARITY_PAIRS = join(REFERENCE, 'parity-pairs.jsonl');
export const EMBEDDINGS_PREFIX = join(REFERENCE, 'all-minilm-l6-v2');
export const LOGITS_PREFIX = join(REFERENCE, 'all-minilm-l6-v2-cross');

/** Every file the parity checks read. */
export const PARITY_FILES = [
  join(MINILM_BI, 'onnx', 'model.onnx'),
  join(MINILM_BI, 'onnx', 'model_int8.onnx'),
  join(MINILM_BI, 'relevance-gate-model.json'),
  join(MINILM_CROSS, 'onnx', 'model.onnx'),
  join(MINILM_CROSS, 'relevance-gate-model.json'),
  PARITY_TEXTS,
  PARITY_PAIRS,
  `${EMBEDDINGS_PREFIX}.json`,
  `${EMBEDDINGS_PREFIX}.f32`,
  `${LOGITS_PREFIX}.json`,
  `${LOGITS_PREFIX}.f32`,
];

export function missingParityFiles(): string[] {
  return PARITY_FILES.filter((f) => !existsSync(f));
}

export interface ReferenceRows {
  readonly meta: {
    readonly format: string;
    readonly count: number;
    readonly dims: number;
    readonly ids: readonly string[];
    readonly token_ids?: readonly (readonly number[])[];
    readonly type_ids?: readonly (readonly number[])[];
    readonly [key: string]: unknown;
  };
  readonly rows: Float32Array[];
}

/** PREFIX.json + PREFIX.f32 (count × dims little-endian float32). */
export function readReferenceRows(prefix: string): ReferenceRows {
  const meta = JSON.parse(readFileSync(`${prefix}.json`, 'utf8')) as ReferenceRows['meta'];
  if (meta.format !== 'f32le-rows/v1') throw new Error(`${prefix}.json: format ${meta.format}, expected f32le-rows/v1`);
  const buf = readFileSync(`${prefix}.f32`);
  if (buf.length !== meta.count * meta.dims * 4) {
    throw new Error(`${prefix}.f32 has ${buf.length} bytes, expected ${meta.count} × ${meta.dims} × 4`);
  }
  const rows = Array.from({ length: meta.count }, (_, r) =>
    Float32Array.from({ length: meta.dims }, (_, j) => buf.readFloatLE(4 * (r * meta.dims + j))),
  );
  return { meta, rows };
}

export function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}
