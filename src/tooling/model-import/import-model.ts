/**
 * `importModel(folder, { kind, outDir })` (CLI: `relevance-gate import-model <folder> --as
 * bi-encoder|cross-encoder --out <dir>`): a Hugging Face folder with safetensors weights → the
 * engine's model folder (docs/models.md, "Bring your own model"):
 *
 *   onnx/model.onnx             fp32 graph (graph.ts: `embeddings` [batch, dims] or `logits` [batch, labels])
 *   onnx/model_int8.onnx        the same graph, dynamically quantized (int8 weights, MatMulInteger)
 *   config.json, tokenizer.json, tokenizer_config.json, special_tokens_map.json, vocab.txt, …  copied
 *   modules.json, 1_Pooling/config.json, sentence_bert_config.json  copied (bi-encoder, when present)
 *   README.md                   the source's model card, copied when present
 *   head.safetensors            cross-encoder only, when the checkpoint lacks a head: the seeded one
 *   relevance-gate-model.json   what the folder holds and how to run it (ImportedModelDescriptor)
 *   PROVENANCE.json             the source (its PROVENANCE.json carried over), every file's sha256
 *
 * The folder is written next to its final place and swapped in by rename. An output whose
 * descriptor records the same inputs (sha256 of every file read, the importer version and the
 * options) and whose files still match their recorded sha256 is left as it is.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { InvalidArgumentError } from '../../errors.js';
import { normalizeSeed } from '../model-gen/bert-onnx.js';
import { encodeOnnxModel, OnnxDataType } from '../model-gen/onnx-proto.js';
import { quantizeDynamic } from '../model-gen/quantize.js';
import { bertSpecFromConfig, configSummary } from './architecture.js';
import { CheckpointWeights } from './checkpoint-weights.js';
import { MissingTensorsError, UnknownTensorsError } from './errors.js';
import {
  buildImportedGraph,
  EMBEDDINGS_OUTPUT,
  IMPORTED_MODEL_KINDS,
  type ImportedModelKind,
  LOGITS_OUTPUT,
} from './graph.js';
import { type HfModelFolder, POOLING_MODES, type PoolingMode, readHfModelFolder } from './hf-folder.js';
import { encodeSafetensors, type Float32TensorEntry, parseSafetensors, type SafetensorsFile } from './safetensors.js';

/** Bumped when the importer's output for the same inputs changes (forces a rebuild). */
export const IMPORTER_VERSION = 1;
/** `format` of relevance-gate-model.json (the embedding tier reads format 1). */
export const IMPORTED_MODEL_FORMAT = 1;
export const IMPORTED_MODEL_FILE = 'relevance-gate-model.json';
export const PROVENANCE_FILE = 'PROVENANCE.json';
export const HEAD_FILE = 'head.safetensors';
/** The ONNX files of an imported folder. */
export const IMPORTED_ONNX_FILES = { fp32: 'onnx/model.onnx', int8: 'onnx/model_int8.onnx' } as const;
/** Graph inputs of every imported model (int64 [batch, sequence]). */
export const IMPORTED_MODEL_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'] as const;

/** tokenizer_config.json writes huge sentinels (1e30) for "no limit". */
const SENTINEL_LIMIT = 1_000_000;

export interface ImportModelOptions {
  /** 'bi-encoder' (pooled, normalised `embeddings`) or 'cross-encoder' (`logits`). */
  readonly kind: ImportedModelKind;
  /** Output folder (created; replaced when out of date). */
  readonly outDir: string;
  /** Bi-encoder pooling instead of the folder's 1_Pooling/config.json (default there, else 'mean'). */
  readonly pooling?: PoolingMode;
  /** Seed of a head the checkpoint lacks (cross-encoder from a bi-encoder checkpoint). Default 42. */
  readonly seed?: number;
  /** Also write onnx/model_int8.onnx. Default true. */
  readonly int8?: boolean;
  /** Rebuild even when the output is up to date. */
  readonly force?: boolean;
}

export interface FileDigest {
  readonly size: number;
  readonly sha256: string;
}

/** Where the cross-encoder's pooler and classifier came from. */
export interface ImportedHead {
  readonly pooler: 'checkpoint' | 'seeded';
  readonly classifier: 'checkpoint' | 'seeded';
  /** Seed of the seeded parts (null when both come from the checkpoint). */
  readonly seed: number | null;
  /** The seeded tensors, Hugging Face names and orientation ([out, in]); null when none. */
  readonly file: string | null;
  readonly note: string;
}

/** relevance-gate-model.json: what an imported folder holds and how to run it. */
export interface ImportedModelDescriptor {
  readonly format: typeof IMPORTED_MODEL_FORMAT;
  readonly kind: ImportedModelKind;
  /** Bi-encoder pooling; a cross-encoder's pooler reads the first token: 'cls'. */
  readonly pooling: PoolingMode;
  /** Whether the output is L2-normalised (bi-encoder: always, in the graph). */
  readonly normalize: boolean;
  /** Embedding size (bi-encoder) or logits per pair (cross-encoder). */
  readonly dimensions: number;
  /** Tokens per text the model was trained with, special tokens included (sentence-transformers' max_seq_length). */
  readonly maxLength: number;
  /** Whether the model reads lowercased text (its tokenizer or its pipeline lowercases). */
  readonly lowercase: boolean;
  /** Whether the tokenizer file lowercases by itself (else a caller lowercases when `lowercase`). */
  readonly tokenizerLowercases: boolean;
  readonly inputs: readonly string[];
  readonly output: { readonly name: string; readonly shape: readonly [string, number] };
  readonly files: {
    readonly fp32: string;
    readonly int8: string | null;
    readonly tokenizer: string;
    readonly config: string;
  };
  readonly head: ImportedHead | null;
  readonly source: {
    /** The source folder, relative to this folder. */
    readonly folder: string;
    readonly name: string;
    readonly hfId: string | null;
    readonly modelType: string;
    readonly architectures: readonly string[];
    readonly package: { readonly name: string; readonly version: string } | null;
    readonly license: string | null;
    readonly weights: readonly string[];
    /** Element types of the weights the graph took (converted to float32). */
    readonly weightDtypes: readonly string[];
    /** sentence-transformers pipeline (modules.json types), null for a plain transformers folder. */
    readonly pipeline: readonly string[] | null;
    /** Whether the source pipeline normalises (sentence-transformers Normalize). */
    readonly normalize: boolean;
    readonly files: Readonly<Record<string, FileDigest>>;
  };
  readonly importer: {
    readonly tool: 'relevance-gate import-model';
    readonly version: number;
    /** sha256 of the importer version, options and input digests: equal stamps → same output. */
    readonly stamp: string;
  };
}

export interface ImportModelResult {
  /** Absolute path of the output folder. */
  readonly dir: string;
  /** True when the output was already up to date and nothing was written. */
  readonly skipped: boolean;
  readonly descriptor: ImportedModelDescriptor;
  /** Every output file but PROVENANCE.json, relative name → size and sha256. */
  readonly files: Readonly<Record<string, FileDigest>>;
  /** Wall time of the call, ms. */
  readonly elapsedMs: number;
}

function digest(bytes: Uint8Array): FileDigest {
  return { size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Every file under `dir`, relative, '/'-separated. */
function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path, `${prefix}${name}/`));
    else out.push(`${prefix}${name}`);
  }
  return out;
}

async function currentOutput(dir: string, stamp: string): Promise<ImportModelResult | null> {
  try {
    const descriptor = JSON.parse(await readFile(join(dir, IMPORTED_MODEL_FILE), 'utf8')) as ImportedModelDescriptor;
    if (descriptor.format !== IMPORTED_MODEL_FORMAT || descriptor.importer?.stamp !== stamp) return null;
    const provenance = JSON.parse(await readFile(join(dir, PROVENANCE_FILE), 'utf8')) as {
      files?: Record<string, FileDigest>;
    };
    const files = provenance.files ?? {};
    const present = listFiles(dir).filter((f) => f !== PROVENANCE_FILE);
    if (present.length !== Object.keys(files).length || !present.every((f) => Object.hasOwn(files, f))) return null;
    for (const [rel, want] of Object.entries(files)) {
      const have = digest(await readFile(join(dir, rel)));
      if (have.size !== want.size || have.sha256 !== want.sha256) return null;
    }
    return { dir, skipped: true, descriptor, files, elapsedMs: 0 };
  } catch {
    return null;
  }
}

function maxLengthOf(folder: HfModelFolder, tokenizerConfig: Record<string, unknown> | null): number {
  const st = folder.sentenceTransformers?.maxSeqLength;
  if (st !== undefined && st !== null) return st;
  const limits = [folder.config.max_position_embeddings, tokenizerConfig?.model_max_length].filter(
    (v): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0 && v < SENTINEL_LIMIT,
  );
  return Math.min(...limits);
}

/** Graph layout [in, out] of a float initializer → the checkpoint's [out, in] (Linear weights), else as is. */
function checkpointOrientation(raw: Uint8Array, dims: readonly number[], linear: boolean): Float32Array {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const values = Float32Array.from({ length: raw.byteLength / 4 }, (_, i) => view.getFloat32(4 * i, true));
  if (!linear || dims.length !== 2) return values;
  const [rows, cols] = [dims[0]!, dims[1]!];
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c]!;
  return out;
}

function validateOptions(options: ImportModelOptions): { seed: number; int8: boolean } {
  if (!IMPORTED_MODEL_KINDS.includes(options.kind)) {
    throw new InvalidArgumentError(
      `kind must be one of ${IMPORTED_MODEL_KINDS.join(', ')}, got ${JSON.stringify(options.kind)}`,
    );
  }
  if (typeof options.outDir !== 'string' || options.outDir === '') {
    throw new InvalidArgumentError('outDir must be a non-empty path');
  }
  if (options.pooling !== undefined && !POOLING_MODES.includes(options.pooling)) {
    throw new InvalidArgumentError(
      `pooling must be one of ${POOLING_MODES.join(', ')}, got ${JSON.stringify(options.pooling)}`,
    );
  }
  if (options.pooling !== undefined && options.kind !== 'bi-encoder') {
    throw new InvalidArgumentError('pooling applies to a bi-encoder only');
  }
  if (options.int8 !== undefined && typeof options.int8 !== 'boolean') {
    throw new InvalidArgumentError('int8 must be a boolean');
  }
  return { seed: normalizeSeed(options.seed), int8: options.int8 ?? true };
}

/** Names a bi-encoder or cross-encoder never uses, even when the checkpoint has them. */
function ignorable(name: string, prefix: string, kind: ImportedModelKind): boolean {
  if (name === `${prefix}embeddings.position_ids`) return true; // a buffer, not a weight
  if (name.startsWith('cls.')) return true; // pre-training heads (masked LM, next sentence)
  if (kind === 'bi-encoder') return name.startsWith(`${prefix}pooler.`) || name.startsWith('classifier.');
  return false;
}

/** Imports a Hugging Face folder (safetensors weights) as the engine's bi-encoder or cross-encoder folder. */
export async function importModel(sourceDir: string, options: ImportModelOptions): Promise<ImportModelResult> {
  const started = performance.now();
  const { seed, int8 } = validateOptions(options);
  const kind = options.kind;
  const src = resolve(sourceDir);
  const out = resolve(options.outDir);
  if (out === src || out.startsWith(`${src}${sep}`) || src.startsWith(`${out}${sep}`)) {
    throw new InvalidArgumentError(`the output folder ${out} must not contain or be inside the source folder ${src}`);
  }
  const folder = await readHfModelFolder(src);

  // ---- inputs and the up-to-date check ------------------------------------------------------------
  const inputBytes = new Map<string, Uint8Array>();
  const inputDigests: Record<string, FileDigest> = {};
  for (const rel of folder.inputFiles) {
    const bytes = await readFile(join(src, rel));
    inputBytes.set(rel, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    inputDigests[rel] = digest(bytes);
  }
  const stamp = createHash('sha256')
    .update(
      JSON.stringify({
        importer: IMPORTER_VERSION,
        kind,
        pooling: options.pooling ?? null,
        seed,
        int8,
        inputs: inputDigests,
      }),
    )
    .digest('hex');
  if (options.force !== true) {
    const current = await currentOutput(out, stamp);
    if (current !== null) return { ...current, elapsedMs: performance.now() - started };
  }

  // ---- weights and the graph --------------------------------------------------------------------
  const files: SafetensorsFile[] = folder.weightFiles.map((rel) =>
    parseSafetensors(inputBytes.get(rel)!, join(src, rel)),
  );
  const where = folder.weightFiles.length === 1 ? join(src, folder.weightFiles[0]!) : `${src} (safetensors shards)`;
  const weights = new CheckpointWeights(files, where);
  const classifierShape = weights.shapeOf('classifier.weight');
  const labels = kind === 'cross-encoder' && classifierShape !== undefined ? classifierShape[0]! : 1;
  const prov = folder.provenance ?? {};
  const pkg = isRecord(prov.package) ? prov.package : null;
  const sourceName = str(prov.name) ?? basename(src);
  const hfId = str(prov.hf_id) ?? str(folder.config._name_or_path);
  const spec = bertSpecFromConfig(folder.config, join(src, 'config.json'), sourceName, labels);
  const pooling: PoolingMode =
    kind === 'bi-encoder' ? (options.pooling ?? folder.sentenceTransformers?.pooling ?? 'mean') : 'cls';
  const description =
    kind === 'bi-encoder'
      ? `${sourceName}: bi-encoder imported from ${hfId ?? src} by relevance-gate import-model; ${pooling} pooling, L2-normalised embeddings [batch, ${spec.hiddenSize}].`
      : `${sourceName}: cross-encoder imported from ${hfId ?? src} by relevance-gate import-model; logits [batch, ${labels}].`;
  const { model, context } = buildImportedGraph({
    kind,
    spec,
    weights,
    seed,
    pooling,
    description,
    metadata: {
      'relevance_gate.source': hfId ?? sourceName,
      'relevance_gate.source_weights_sha256': folder.weightFiles.map((f) => inputDigests[f]!.sha256).join(','),
      ...(kind === 'bi-encoder' ? { 'relevance_gate.pooling': pooling, 'relevance_gate.normalize': 'l2' } : {}),
    },
  });

  const seededAllowed =
    kind === 'cross-encoder'
      ? new Set(['bert.pooler.dense.weight', 'bert.pooler.dense.bias', 'classifier.weight', 'classifier.bias'])
      : new Set<string>();
  const missing = weights.missing.filter((name) => !seededAllowed.has(name));
  if (missing.length > 0) {
    throw new MissingTensorsError(
      missing.map((name) => weights.checkpointName(name)),
      where,
    );
  }
  const unknown = weights.names().filter((name) => !weights.taken.has(name) && !ignorable(name, weights.prefix, kind));
  if (unknown.length > 0) throw new UnknownTensorsError(unknown.sort(), where);
  const dtypes = new Set<string>();
  for (const file of files) for (const t of file.tensors.values()) if (weights.taken.has(t.name)) dtypes.add(t.dtype);

  // ---- the head a checkpoint lacks ---------------------------------------------------------------
  let head: ImportedHead | null = null;
  const seeded: Float32TensorEntry[] = [];
  if (kind === 'cross-encoder') {
    const drawn = new Set(weights.missing);
    for (const name of weights.missing) {
      const init = context.g.initializers.find((t) => t.name === name && t.data_type === OnnxDataType.FLOAT)!;
      const linear = name.endsWith('.weight');
      const shape = linear && init.dims.length === 2 ? [init.dims[1]!, init.dims[0]!] : [...init.dims];
      seeded.push({
        name: weights.checkpointName(name),
        shape,
        values: checkpointOrientation(init.raw_data, init.dims, linear),
      });
    }
    const pooler = drawn.has('bert.pooler.dense.weight') ? 'seeded' : 'checkpoint';
    const classifier = drawn.has('classifier.weight') ? 'seeded' : 'checkpoint';
    head = {
      pooler,
      classifier,
      seed: seeded.length > 0 ? seed : null,
      file: seeded.length > 0 ? HEAD_FILE : null,
      note:
        seeded.length > 0
          ? `the checkpoint has no ${[pooler === 'seeded' ? 'pooler' : '', classifier === 'seeded' ? 'classifier' : ''].filter((s) => s !== '').join(' or ')}: ` +
            `drawn from seed ${seed} (normal, std 1/sqrt(fan-in), bias std 0.02) and written to ${HEAD_FILE}. ` +
            'Its logits show that the graph runs this encoder exactly (parity), NOT relevance.'
          : 'pooler and classifier from the checkpoint',
    };
  }

  const fp32 = encodeOnnxModel(model);
  const quantized = int8 ? encodeOnnxModel(quantizeDynamic(model, 'qint8', { perChannel: true }).model) : null;

  // ---- the output folder -------------------------------------------------------------------------
  const written = new Map<string, Uint8Array>();
  written.set(IMPORTED_ONNX_FILES.fp32, fp32);
  if (quantized !== null) written.set(IMPORTED_ONNX_FILES.int8, quantized);
  const skip = new Set([...folder.weightFiles, PROVENANCE_FILE, ...(folder.weightIndex ? [folder.weightIndex] : [])]);
  for (const rel of folder.inputFiles) {
    if (skip.has(rel)) continue;
    // A cross-encoder is not a sentence-transformers bi-encoder: its pipeline files stay behind.
    const pipelineFile =
      rel === 'modules.json' || rel.startsWith('sentence_') || rel.startsWith('config_sentence') || rel.includes('/');
    if (kind === 'cross-encoder' && pipelineFile) continue;
    written.set(rel, inputBytes.get(rel)!);
  }
  if (seeded.length > 0) {
    written.set(HEAD_FILE, encodeSafetensors(seeded, { format: 'pt', relevance_gate: `seeded head, seed ${seed}` }));
  }
  const tokenizerConfig = inputBytes.has('tokenizer_config.json')
    ? (JSON.parse(new TextDecoder().decode(inputBytes.get('tokenizer_config.json')!)) as Record<string, unknown>)
    : null;
  const { modelType, architectures } = configSummary(folder.config);
  const descriptor: ImportedModelDescriptor = {
    format: IMPORTED_MODEL_FORMAT,
    kind,
    pooling,
    normalize: kind === 'bi-encoder',
    dimensions: kind === 'bi-encoder' ? spec.hiddenSize : labels,
    maxLength: maxLengthOf(folder, tokenizerConfig),
    lowercase: folder.tokenizerLowercases || folder.sentenceTransformers?.doLowerCase === true,
    tokenizerLowercases: folder.tokenizerLowercases,
    inputs: [...IMPORTED_MODEL_INPUTS],
    output:
      kind === 'bi-encoder'
        ? { name: EMBEDDINGS_OUTPUT, shape: ['batch_size', spec.hiddenSize] }
        : { name: LOGITS_OUTPUT, shape: ['batch_size', labels] },
    files: {
      fp32: IMPORTED_ONNX_FILES.fp32,
      int8: quantized !== null ? IMPORTED_ONNX_FILES.int8 : null,
      tokenizer: folder.tokenizer,
      config: 'config.json',
    },
    head,
    source: {
      folder: relative(out, src).split(sep).join('/'),
      name: sourceName,
      hfId,
      modelType,
      architectures,
      package:
        pkg !== null && str(pkg.name) !== null ? { name: str(pkg.name)!, version: str(pkg.version) ?? '' } : null,
      license: str(prov.model_license),
      weights: folder.weightFiles,
      weightDtypes: [...dtypes].sort(),
      pipeline: folder.sentenceTransformers?.modules ?? null,
      normalize: folder.sentenceTransformers?.normalize ?? false,
      files: inputDigests,
    },
    importer: { tool: 'relevance-gate import-model', version: IMPORTER_VERSION, stamp },
  };
  written.set(IMPORTED_MODEL_FILE, new TextEncoder().encode(`${JSON.stringify(descriptor, null, 2)}\n`));
  const outputDigests: Record<string, FileDigest> = {};
  for (const rel of [...written.keys()].sort()) outputDigests[rel] = digest(written.get(rel)!);
  const provenance = {
    format: 'relevance-gate-provenance/v1',
    model: {
      name: sourceName,
      hf_id: hfId,
      license: str(prov.model_license),
      license_source: str(prov.model_license_source),
    },
    package: pkg,
    derivation:
      `ONNX graphs built from the source weights by relevance-gate import-model (importer version ${IMPORTER_VERSION}, ${kind}` +
      `${kind === 'bi-encoder' ? `, ${pooling} pooling, L2-normalised` : ''}); int8 = dynamic quantization of the fp32 graph` +
      (head?.file ? `; ${HEAD_FILE}: ${head.note}` : ''),
    source: { folder: descriptor.source.folder, provenance: folder.provenance, files: inputDigests },
    files: outputDigests,
  };
  written.set(PROVENANCE_FILE, new TextEncoder().encode(`${JSON.stringify(provenance, null, 2)}\n`));

  const temporary = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  await rm(temporary, { recursive: true, force: true });
  try {
    for (const [rel, bytes] of written) {
      const path = join(temporary, rel);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, bytes);
    }
    if (existsSync(out)) await rm(out, { recursive: true, force: true });
    await rename(temporary, out);
  } catch (err) {
    await rm(temporary, { recursive: true, force: true });
    throw err;
  }
  return { dir: out, skipped: false, descriptor, files: outputDigests, elapsedMs: performance.now() - started };
}
