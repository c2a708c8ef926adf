/**
 * The bi-encoder model folder the embedding tier loads: the layout `relevance-gate import-model
 * <hf-folder> --as bi-encoder --out <dir>` writes.
 *
 *   onnx/model.onnx           fp32; inputs input_ids, attention_mask, token_type_ids (int64 [batch, seq])
 *   onnx/model_int8.onnx      the same graph with int8 weights (`variant: 'int8'`)
 *                             → output `embeddings` float32 [batch, dims], pooled and L2-normalised in the graph
 *   tokenizer.json, vocab.txt, tokenizer_config.json, special_tokens_map.json, config.json
 *   relevance-gate-model.json {format, kind: 'bi-encoder', pooling, normalize, dimensions, maxLength, lowercase, source}
 *   PROVENANCE.json
 *   calibration.json          optional: Platt parameters over cosine (`relevance-gate fit-points --tier embedding`)
 *
 * Everything here is read on the main thread before a worker starts, so a folder that is not a
 * bi-encoder fails fast with an EmbeddingModelError that says what is wrong.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { resolveModelFile, validateVariant } from '../cross-encoder/model-files.js';
import { EmbeddingModelError } from './errors.js';

/** The manifest file of a bi-encoder folder. */
export const MODEL_MANIFEST_FILE = 'relevance-gate-model.json';
/** The optional calibration file of a bi-encoder folder (written by `relevance-gate fit-points --tier embedding`). */
export const CALIBRATION_FILE = 'calibration.json';
/** The output the graph returns the pooled, normalised vectors at. */
export const EMBEDDINGS_OUTPUT = 'embeddings';
/** Manifest format versions this engine reads. */
const SUPPORTED_FORMATS: readonly unknown[] = [1, '1'];
/** Largest dimension count accepted (far above any published bi-encoder; bounds allocations). */
export const MAX_DIMENSIONS = 16_384;

/** What `relevance-gate-model.json` declares, checked. */
export interface BiEncoderManifest {
  readonly kind: 'bi-encoder';
  /** Vector length of the `embeddings` output. */
  readonly dimensions: number;
  /** Tokens per text the model was exported for (special tokens included). */
  readonly maxLength: number;
  /** How the graph pools token vectors ('mean', 'cls', …): information only, the graph does it. */
  readonly pooling: string | undefined;
  /** Whether the graph L2-normalises (the tier normalises again either way). */
  readonly normalize: boolean | undefined;
  readonly lowercase: boolean | undefined;
  /** Where the weights came from, as the importer recorded it. */
  readonly source: unknown;
}

/** The files of a bi-encoder folder, resolved. */
export interface BiEncoderFiles {
  readonly dir: string;
  readonly modelPath: string;
  readonly tokenizerPath: string;
  readonly configPath: string | null;
  readonly tokenizerConfigPath: string | null;
  readonly manifestPath: string;
  readonly calibrationPath: string | null;
  readonly manifest: BiEncoderManifest;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function positiveIntegerField(dir: string, record: Record<string, unknown>, key: string, max: number): number {
  const value = record[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new EmbeddingModelError(
      dir,
      `${MODEL_MANIFEST_FILE} ${key} must be an integer in 1..${max}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** Reads and checks `relevance-gate-model.json`. */
export function readManifest(dir: string): BiEncoderManifest {
  const path = join(dir, MODEL_MANIFEST_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new EmbeddingModelError(
      dir,
      `no ${MODEL_MANIFEST_FILE}: not a bi-encoder folder (make one with \`relevance-gate import-model <hf-folder> --as bi-encoder --out <dir>\`)`,
      { cause },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new EmbeddingModelError(dir, `${MODEL_MANIFEST_FILE} is not valid JSON`, { cause });
  }
  if (!isRecord(parsed)) throw new EmbeddingModelError(dir, `${MODEL_MANIFEST_FILE} must hold a JSON object`);
  if (parsed.format !== undefined && !SUPPORTED_FORMATS.includes(parsed.format)) {
    throw new EmbeddingModelError(
      dir,
      `${MODEL_MANIFEST_FILE} format ${JSON.stringify(parsed.format)} is not one this version reads (1)`,
    );
  }
  if (parsed.kind !== 'bi-encoder') {
    throw new EmbeddingModelError(
      dir,
      `${MODEL_MANIFEST_FILE} kind is ${JSON.stringify(parsed.kind)}, not "bi-encoder"${
        parsed.kind === 'cross-encoder' ? ' (a cross-encoder folder: load it with createCrossEncoder)' : ''
      }`,
    );
  }
  return {
    kind: 'bi-encoder',
    dimensions: positiveIntegerField(dir, parsed, 'dimensions', MAX_DIMENSIONS),
    maxLength: positiveIntegerField(dir, parsed, 'maxLength', 1 << 20),
    pooling: typeof parsed.pooling === 'string' ? parsed.pooling : undefined,
    normalize: typeof parsed.normalize === 'boolean' ? parsed.normalize : undefined,
    lowercase: typeof parsed.lowercase === 'boolean' ? parsed.lowercase : undefined,
    source: parsed.source,
  };
}

/** The ONNX file for the variant: `onnx/model.onnx` by default, `onnx/model_int8.onnx` for 'int8'. */
export function resolveBiEncoderFiles(dir: unknown, variant: unknown): BiEncoderFiles {
  if (typeof dir !== 'string' || dir.length === 0) {
    throw new EmbeddingModelError(String(dir), 'modelDir must be a non-empty string (a bi-encoder folder)');
  }
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new EmbeddingModelError(dir, 'the model folder does not exist');
  }
  if (!isDir) throw new EmbeddingModelError(dir, 'modelDir is not a folder');
  const manifest = readManifest(dir);
  const modelPath = resolveModelFile(dir, validateVariant(variant));
  if (modelPath === null) throw new EmbeddingModelError(dir, 'no onnx/model.onnx (or model.onnx)');
  const inDir = (...names: string[]): string | null => {
    for (const name of names) {
      const p = join(dir, name);
      if (existsSync(p)) return p;
    }
    return null;
  };
  const tokenizerPath = inDir('tokenizer.json', 'vocab.txt');
  if (tokenizerPath === null) throw new EmbeddingModelError(dir, 'no tokenizer.json or vocab.txt');
  for (const p of [modelPath, tokenizerPath]) {
    let file: boolean;
    try {
      file = statSync(p).isFile();
    } catch {
      file = false;
    }
    if (!file) throw new EmbeddingModelError(dir, `${p} is not a regular file`);
  }
  return {
    dir,
    modelPath,
    tokenizerPath,
    configPath: inDir('config.json'),
    tokenizerConfigPath: inDir('tokenizer_config.json'),
    manifestPath: join(dir, MODEL_MANIFEST_FILE),
    calibrationPath: inDir(CALIBRATION_FILE),
    manifest,
  };
}
