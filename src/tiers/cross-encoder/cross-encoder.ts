/**
 * Public surface of the cross-encoder tier: `createCrossEncoder(...)` loads an ONNX cross-encoder
 * (HF folder, or explicit model + tokenizer paths) into a worker-thread pool behind the dynamic
 * batcher. `createCrossEncoder` is async and resolves only once every worker has loaded the model
 * and the model contract has been checked, so load errors (bad model, missing CUDA) surface there.
 */
import { integerInRange } from '../../util/validate-options.js';
import { existsSync, statSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { join } from 'node:path';
import { DisposedError, InvalidArgumentError } from '../../errors.js';
import { DynamicBatcher, type BatcherStats } from './batcher.js';
import { InputLimitError, ModelContractError } from './errors.js';
import { columnProbabilities, type HeadActivation, type ModelContract } from './model-contract.js';
import { modelConfigFields, readConfigJson } from './model-config.js';
import { resolveModelFile, validateVariant } from './model-files.js';
import { resolvePairInput, type PairInput } from './pair-input.js';
import { defaultPoolSize, modelDimensionsFromConfig, type PoolSize } from './pool-sizing.js';
import type { ExecutionProviderName, WorkerConfig, WorkerFaults } from './protocol.js';
import {
  readModelLengthLimits,
  resolveChunking,
  resolveMaxLength,
  type PairChunking,
  type TruncationMode,
} from './tokenize-pairs.js';
import { tokenizerSourceFiles } from './vocab-tokenizer.js';
import { CrossEncoderWorkerPool, DEFAULT_CLOSE_TIMEOUT_MS, type WorkerPoolStats } from './worker-pool.js';
import { hashFiles } from '../../util/hash-files.js';
import { OPERATING_POINTS_FILE, readOperatingPointsFile } from '../../operating-points/file.js';
import { modelIdOf, type ModelDecisions } from '../../operating-points/types.js';

export interface CrossEncoderOptions {
  /** HF-style folder: `onnx/model.onnx` (or `model.onnx`), `tokenizer.json`, optional `config.json`, `tokenizer_config.json`. */
  readonly modelDir?: string;
  /** Explicit ONNX file (overrides the folder's). */
  readonly modelPath?: string;
  /** Explicit tokenizer.json, or a WordPiece vocab.txt (read with its folder's tokenizer_config.json); overrides the folder's. */
  readonly tokenizerPath?: string;
  /**
   * Worker threads, each with its own session. Default from the host's cores and the model's size
   * (`defaultPoolSize`, docs/cross-encoder-sizing.md): one single-threaded worker per core, one core
   * kept for the event loop on hosts with ≥ 8 cores, at most 16.
   */
  readonly workers?: number;
  /** onnxruntime intra-op threads per worker. Default 1. */
  readonly intraOpThreads?: number;
  /** Padded-token budget per batch (longest pair × pairs). Default 4096. */
  readonly maxBatchTokens?: number;
  /** Max wait for a partial batch while a worker is idle, ms. Default 2. */
  readonly maxQueueDelayMs?: number;
  /** Tokens per pair incl. special tokens; default 512, never above the model's limit. */
  readonly maxLength?: number;
  /** 'longest_first' (HF default) or 'only_second' (truncate only the passage). */
  readonly truncation?: TruncationMode;
  /**
   * A passage longer than the window: 'truncate' (default: one pair, the rest is not read) or
   * 'chunk' (windows of what the query and special tokens leave, `chunkStride` tokens of overlap,
   * at most `maxChunksPerPassage`; each window is a pair batched like any other; the passage's
   * logit is the max over its windows, per signal). Needs pairInput 'query-passage'.
   */
  readonly longPassages?: LongPassages;
  /** Tokens each window repeats from the previous one (at most half a window). Default 32. */
  readonly chunkStride?: number;
  /** Windows per passage (1..256), like hosted rerankers' max_chunks_per_doc. Default 16. */
  readonly maxChunksPerPassage?: number;
  /** 'cpu' (default) or 'cuda' (fails with ExecutionProviderUnavailableError when unavailable). */
  readonly executionProvider?: ExecutionProviderName;
  /** Pairs waiting beyond which score() rejects with OverloadedError. Default 4096. */
  readonly maxPendingPairs?: number;
  /** Passages accepted in one score() call. Default 1024. */
  readonly maxPassagesPerRequest?: number;
  /** Characters accepted in a query (InputLimitError above). Default 20,000. */
  readonly maxQueryChars?: number;
  /** Characters accepted in one passage (InputLimitError above). Default 200,000. */
  readonly maxPassageChars?: number;
  /** Characters accepted in one score() call, query + passages (InputLimitError above). Default 4,000,000. */
  readonly maxRequestChars?: number;
  /**
   * How long close() lets running batches finish before it rejects what is left and returns.
   * A worker still inside a run then finishes it and exits right after (never terminated mid-run).
   * Default 10,000 ms.
   */
  readonly closeTimeoutMs?: number;
  /**
   * Unix nice increment for the worker threads (0–19), best effort (the optional @napi-rs/nice;
   * without it the workers keep their priority). > 0 lets the main thread (event loop) preempt
   * inference under saturation, so answers leave on time when the host is busy; the cost is CPU
   * share lost to other processes of normal priority. Default DEFAULT_WORKER_NICE (10); 0 keeps
   * the workers at the process's priority.
   */
  readonly workerNice?: number;
  /**
   * What the model reads: 'query-passage' (default; a reranker), 'passage-query' (an NLI model:
   * premise = passage, hypothesis = query) or 'passage' (a sequence classifier reading the passage
   * alone with the tokenizer's single-sequence template; `truncation` then has one side to cut).
   */
  readonly pairInput?: PairInput;
  /**
   * ONNX file of `modelDir` by its published suffix: 'qint8_avx512_vnni' → `onnx/model_qint8_avx512_vnni.onnx`
   * (else `model_qint8_avx512_vnni.onnx`); also 'quint8_avx2', 'O4', 'quantized', … Absent: `onnx/model.onnx`.
   * A name the folder lacks → ModelVariantNotFoundError listing its ONNX files.
   */
  readonly variant?: string;
}

export interface CrossEncoderScoreOptions {
  readonly signal?: AbortSignal;
  /** Absolute deadline, ms on the Date.now() clock. */
  readonly deadline?: number;
}

/**
 * Per-pair values of a multi-signal or labelled model, row-major [pairs × names.length]. For a
 * labelled head (config.json id2label) `names` are the labels in label-id order, spelled as
 * config.json spells them, and `probabilities` are the softmax over them (multi-class) or a sigmoid
 * per label (one logit, or problem_type multi_label_classification).
 */
export interface CrossEncoderSignals {
  readonly names: readonly string[];
  readonly logits: Float32Array;
  readonly probabilities: Float64Array;
}

export interface CrossEncoderScores {
  /** Raw logit per passage, input order (the first signal's for multi-signal and labelled models). */
  readonly logits: Float32Array;
  /** Probability per passage in float64, input order (the first signal's, as in `signals`). */
  readonly probabilities: Float64Array;
  /** Present for multi-signal and labelled models: every named signal. */
  readonly signals?: CrossEncoderSignals;
  /** With longPassages 'chunk': windows each passage was scored as (1 = it fit), input order. */
  readonly chunks?: Int32Array;
}

export interface CrossEncoderInfo {
  readonly modelPath: string;
  readonly tokenizerPath: string;
  readonly maxLength: number;
  readonly truncation: TruncationMode;
  readonly workers: number;
  readonly intraOpThreads: number;
  readonly executionProvider: ExecutionProviderName;
  readonly contract: ModelContract;
  /** Long passages as windows (longPassages 'chunk'), or null: truncated. */
  readonly chunking: PairChunking | null;
  /** Model identity: hash of model + tokenizer files, max length and truncation mode. */
  readonly id: string;
  /** What the model reads per pair. */
  readonly pairInput: PairInput;
  /** The `variant` option that chose `modelPath`, null without one. */
  readonly variant: string | null;
  /**
   * The operating points and score calibration of `modelDir`'s operating-points.json, when the
   * folder has one fitted for exactly this model and configuration (file, max length, truncation);
   * absent otherwise (points fitted for another configuration would decide on a different score).
   */
  readonly decisions?: ModelDecisions;
}

export interface CrossEncoderStats extends BatcherStats {
  /** Worker health: ready/loading workers, crashes, replacements. */
  readonly workers: WorkerPoolStats;
}

export interface CrossEncoder {
  readonly info: CrossEncoderInfo;
  score(
    query: string,
    passages: readonly string[],
    options?: CrossEncoderScoreOptions | null,
  ): Promise<CrossEncoderScores>;
  stats(): CrossEncoderStats;
  /** Pairs being tokenized, queued or in flight (cheap: no stats object). */
  pendingPairs(): number;
  /** Predicted ms until a request of `pairs` pairs submitted now would complete. */
  estimateWaitMs(pairs: number, tokensPerPair?: number): number;
  /**
   * Stops intake; rejects queued work with DisposedError; lets running batches finish (their
   * requests resolve) for up to closeTimeoutMs, then rejects the rest; asks the workers to exit.
   * Never terminates a worker inside a run. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * The default pool for this host and model (explicit `workers` / `intraOpThreads` override it):
 * the measured rule of docs/cross-encoder-sizing.md.
 */
function sizePool(modelPath: string, config: unknown, executionProvider: ExecutionProviderName): PoolSize {
  return defaultPoolSize({
    cores: availableParallelism(),
    model: modelDimensionsFromConfig(config),
    executionProvider,
    modelBytes: statSync(modelPath).size,
    memoryBytes: totalmem() / 2,
  });
}
export const DEFAULT_MAX_BATCH_TOKENS = 4096;
export const DEFAULT_MAX_QUEUE_DELAY_MS = 2;
export const DEFAULT_MAX_PENDING_PAIRS = 4096;
export const DEFAULT_MAX_PASSAGES_PER_REQUEST = 1024;
export const DEFAULT_ENCODER_QUERY_CHARS = 20_000;
/**
 * Worker threads run at this nice increment by default: with neighbours on the host, nice 0 let
 * inference delay the event loop's answers past their deadlines (26 of 30,126 seed-scenario calls
 * late in one minute), nice 10 did not (docs/router.md, "Hard deadline").
 */
export const DEFAULT_WORKER_NICE = 10;
export const DEFAULT_ENCODER_PASSAGE_CHARS = 200_000;
export const DEFAULT_ENCODER_REQUEST_CHARS = 4_000_000;
export { DEFAULT_CLOSE_TIMEOUT_MS };

function positiveInt(name: string, value: number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  return value === undefined ? fallback : integerInRange(name, value, 1, max);
}

/** Upper bound of workers and intra-op threads: far above any sensible value, below resource exhaustion. */
const MAX_THREADS = 256;

interface ResolvedPaths {
  modelPath: string;
  tokenizerPath: string;
  configPath: string | null;
  tokenizerConfigPath: string | null;
}

/**
 * The model folder's operating points for this configuration: undefined without a file or when
 * the file was fitted for another model id (another ONNX variant, max length or truncation). A
 * file that exists but is malformed fails the load (OperatingPointsFormatError).
 */
async function folderDecisions(modelDir: string, id: string): Promise<ModelDecisions | undefined> {
  const path = join(modelDir, OPERATING_POINTS_FILE);
  if (!existsSync(path)) return undefined;
  const file = await readOperatingPointsFile(path);
  if (file.model !== modelIdOf(id)) return undefined;
  return file.scoreCalibration === undefined
    ? { operatingPoints: file.points }
    : { operatingPoints: file.points, scoreCalibration: file.scoreCalibration };
}

function resolvePaths(options: CrossEncoderOptions): ResolvedPaths {
  const dir = options.modelDir;
  if (dir !== undefined && typeof dir !== 'string') throw new InvalidArgumentError('modelDir must be a string');
  const inDir = (...names: string[]): string | null => {
    if (dir === undefined) return null;
    for (const name of names) {
      const p = join(dir, name);
      if (existsSync(p)) return p;
    }
    return null;
  };
  const variant = validateVariant(options.variant);
  if (variant !== undefined && (dir === undefined || options.modelPath !== undefined)) {
    throw new InvalidArgumentError('variant selects a file of modelDir: give modelDir and no modelPath');
  }
  const modelPath = options.modelPath ?? (dir === undefined ? null : resolveModelFile(dir, variant));
  // tokenizer.json first; a folder with only the slow tokenizer's vocab.txt gets WordPiece built from it.
  const tokenizerPath = options.tokenizerPath ?? inDir('tokenizer.json', 'vocab.txt');
  if (modelPath === null || modelPath === undefined) {
    throw new InvalidArgumentError(
      dir === undefined
        ? 'createCrossEncoder needs modelDir or modelPath'
        : `no onnx/model.onnx, model.onnx or single ONNX file in ${dir}`,
    );
  }
  if (tokenizerPath === null || tokenizerPath === undefined) {
    throw new InvalidArgumentError(
      dir === undefined
        ? 'createCrossEncoder needs tokenizerPath with modelPath'
        : `no tokenizer.json or vocab.txt in ${dir}`,
    );
  }
  if (typeof modelPath !== 'string') throw new InvalidArgumentError('modelPath must be a string');
  if (typeof tokenizerPath !== 'string') throw new InvalidArgumentError('tokenizerPath must be a string');
  for (const p of [modelPath, tokenizerPath]) {
    let isFile: boolean;
    try {
      isFile = statSync(p).isFile();
    } catch {
      throw new InvalidArgumentError(`file not found: ${p}`);
    }
    if (!isFile) throw new InvalidArgumentError(`${p} is not a regular file (a directory?)`);
  }
  return {
    modelPath,
    tokenizerPath,
    configPath: inDir('config.json'),
    tokenizerConfigPath: inDir('tokenizer_config.json'),
  };
}

/** How a passage longer than the window is read. */
export type LongPassages = 'truncate' | 'chunk';

/** The chunking of `longPassages: 'chunk'` (null for 'truncate'); options checked. */
function resolveLongPassages(options: CrossEncoderOptions, pairInput: PairInput): PairChunking | null {
  const mode = options.longPassages ?? 'truncate';
  if (mode !== 'truncate' && mode !== 'chunk') {
    throw new InvalidArgumentError(`longPassages must be 'truncate' or 'chunk', got ${String(mode)}`);
  }
  if (mode === 'truncate') {
    if (options.chunkStride !== undefined || options.maxChunksPerPassage !== undefined) {
      throw new InvalidArgumentError("chunkStride and maxChunksPerPassage need longPassages: 'chunk'");
    }
    return null;
  }
  if (pairInput !== 'query-passage') {
    throw new InvalidArgumentError(`longPassages 'chunk' needs pairInput 'query-passage', got '${pairInput}'`);
  }
  return resolveChunking(options.chunkStride, options.maxChunksPerPassage);
}

export function createCrossEncoder(options: CrossEncoderOptions = {}): Promise<CrossEncoder> {
  return createPooledCrossEncoder(options, undefined);
}

/**
 * createCrossEncoder with faults injected into the workers: for the fault suite only (not
 * exported from the package root).
 */
export function createCrossEncoderWithFaults(
  options: CrossEncoderOptions,
  faults: WorkerFaults,
): Promise<CrossEncoder> {
  return createPooledCrossEncoder(options, faults);
}

async function createPooledCrossEncoder(
  options: CrossEncoderOptions,
  faults: WorkerFaults | undefined,
): Promise<CrossEncoder> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options must be an object');
  const paths = resolvePaths(options);
  const truncation = options.truncation ?? 'longest_first';
  if (truncation !== 'longest_first' && truncation !== 'only_second') {
    throw new InvalidArgumentError(`truncation must be 'longest_first' or 'only_second', got ${String(truncation)}`);
  }
  const executionProvider = options.executionProvider ?? 'cpu';
  if (executionProvider !== 'cpu' && executionProvider !== 'cuda') {
    throw new InvalidArgumentError(`executionProvider must be 'cpu' or 'cuda', got ${String(executionProvider)}`);
  }
  const maxLength = resolveMaxLength(
    options.maxLength,
    readModelLengthLimits(paths.configPath, paths.tokenizerConfigPath),
  );
  const pairInput = resolvePairInput(options.pairInput);
  const chunking = resolveLongPassages(options, pairInput);
  // config.json read once: the loader's fields, the pool size and the vocabulary check below.
  const configJson = readConfigJson(paths.configPath);
  const modelConfig = modelConfigFields(configJson);
  const sized = sizePool(paths.modelPath, configJson, executionProvider);
  const workers = positiveInt('workers', options.workers, sized.workers, MAX_THREADS);
  const intraOpThreads = positiveInt('intraOpThreads', options.intraOpThreads, sized.intraOpThreads, MAX_THREADS);
  const maxBatchTokens = positiveInt('maxBatchTokens', options.maxBatchTokens, DEFAULT_MAX_BATCH_TOKENS);
  const maxPendingPairs = positiveInt('maxPendingPairs', options.maxPendingPairs, DEFAULT_MAX_PENDING_PAIRS);
  const maxPassages = positiveInt(
    'maxPassagesPerRequest',
    options.maxPassagesPerRequest,
    DEFAULT_MAX_PASSAGES_PER_REQUEST,
  );
  const limits: InputLimits = {
    maxPassages,
    maxQueryChars: positiveInt('maxQueryChars', options.maxQueryChars, DEFAULT_ENCODER_QUERY_CHARS),
    maxPassageChars: positiveInt('maxPassageChars', options.maxPassageChars, DEFAULT_ENCODER_PASSAGE_CHARS),
    maxRequestChars: positiveInt('maxRequestChars', options.maxRequestChars, DEFAULT_ENCODER_REQUEST_CHARS),
  };
  const closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
  if (typeof closeTimeoutMs !== 'number' || !(closeTimeoutMs >= 0) || !Number.isFinite(closeTimeoutMs)) {
    throw new InvalidArgumentError(`closeTimeoutMs must be a finite number >= 0, got ${String(closeTimeoutMs)}`);
  }
  const maxQueueDelayMs = options.maxQueueDelayMs ?? DEFAULT_MAX_QUEUE_DELAY_MS;
  if (typeof maxQueueDelayMs !== 'number' || !Number.isFinite(maxQueueDelayMs) || maxQueueDelayMs < 0) {
    throw new InvalidArgumentError(`maxQueueDelayMs must be a finite number >= 0, got ${String(maxQueueDelayMs)}`);
  }

  const config: WorkerConfig = {
    modelPath: paths.modelPath,
    tokenizerPath: paths.tokenizerPath,
    maxLength,
    truncation,
    ...(chunking === null ? {} : { chunking }),
    intraOpThreads,
    executionProvider,
    faults,
    pairInput,
    modelConfig,
  };
  const workerNice = options.workerNice ?? DEFAULT_WORKER_NICE;
  if (!Number.isInteger(workerNice) || workerNice < 0 || workerNice > 19) {
    throw new InvalidArgumentError(`workerNice must be an integer in 0..19, got ${String(workerNice)}`);
  }
  // Both settle before anything is torn down: a failed hash must not stop workers mid-probe.
  const [started, hashed] = await Promise.allSettled([
    CrossEncoderWorkerPool.start(config, { workers, niceIncrement: workerNice }),
    // config.json names the labels and decides positions and probabilities: part of the identity.
    hashFiles([
      paths.modelPath,
      ...tokenizerSourceFiles(paths.tokenizerPath),
      ...(paths.configPath === null ? [] : [paths.configPath]),
    ]),
  ]);
  if (started.status === 'rejected') throw started.reason;
  const { pool, describe: described } = started.value;
  if (hashed.status === 'rejected') {
    await pool.close();
    throw new InvalidArgumentError(`cannot read the model files: ${String(hashed.reason)}`, { cause: hashed.reason });
  }
  const fileHash = hashed.value;
  const contract = described.contract;
  const vocabSize = (configJson as { vocab_size?: unknown } | undefined)?.vocab_size;
  const modelVocab = typeof vocabSize === 'number' ? vocabSize : undefined;
  if (modelVocab !== undefined && described.maxTokenId >= modelVocab) {
    await pool.close();
    throw new ModelContractError(
      `tokenizer has ${described.vocabSize} tokens (ids up to ${described.maxTokenId}) but the model's config.json vocab_size is ${modelVocab}: tokenizer and model do not match`,
    );
  }
  const info: CrossEncoderInfo = {
    modelPath: config.modelPath,
    tokenizerPath: config.tokenizerPath,
    maxLength,
    truncation,
    intraOpThreads,
    executionProvider,
    workers,
    contract,
    // With 'passage' there is one side to cut, so the truncation mode does not enter the id.
    id: `cross-encoder:${fileHash.slice(0, 16)}:len${maxLength}:${
      pairInput === 'passage' ? 'passage' : pairInput === 'passage-query' ? `${truncation}:passage-query` : truncation
    }${chunking === null ? '' : `:chunk${chunking.maxChunks}s${chunking.stride}`}`,
    pairInput,
    chunking,
    variant: options.variant ?? null,
  };
  let decisions: ModelDecisions | undefined;
  try {
    decisions = options.modelDir === undefined ? undefined : await folderDecisions(options.modelDir, info.id);
  } catch (err) {
    await pool.close();
    throw err;
  }
  const batcher = new DynamicBatcher(pool, {
    workers,
    signals: contract.signalNames.length,
    maxBatchTokens,
    maxQueueDelayMs,
    maxPendingPairs,
    useTypeIds: contract.tokenTypeIds !== null,
  });
  return new PooledCrossEncoder(
    decisions === undefined ? info : { ...info, decisions },
    pool,
    batcher,
    limits,
    closeTimeoutMs,
  );
}

interface InputLimits {
  readonly maxPassages: number;
  readonly maxQueryChars: number;
  readonly maxPassageChars: number;
  readonly maxRequestChars: number;
}

class PooledCrossEncoder implements CrossEncoder {
  private closing: Promise<void> | null = null;

  constructor(
    readonly info: CrossEncoderInfo,
    private readonly pool: CrossEncoderWorkerPool,
    private readonly batcher: DynamicBatcher,
    private readonly limits: InputLimits,
    private readonly closeTimeoutMs: number,
  ) {}

  async score(
    query: string,
    passages: readonly string[],
    options?: CrossEncoderScoreOptions | null,
  ): Promise<CrossEncoderScores> {
    if (this.closing) throw new DisposedError('cross-encoder');
    const opts = options ?? {};
    if (typeof opts !== 'object') throw new InvalidArgumentError(`options must be an object, got ${typeof opts}`);
    if (typeof query !== 'string') throw new InvalidArgumentError(`query must be a string, got ${typeof query}`);
    if (!Array.isArray(passages)) throw new InvalidArgumentError('passages must be an array of strings');
    const { maxPassages, maxQueryChars, maxPassageChars, maxRequestChars } = this.limits;
    if (passages.length > maxPassages) {
      throw new InputLimitError('maxPassagesPerRequest', maxPassages, passages.length, 'the number of passages');
    }
    if (query.length > maxQueryChars) {
      throw new InputLimitError('maxQueryChars', maxQueryChars, query.length, 'the query length in characters');
    }
    let total = query.length;
    for (let i = 0; i < passages.length; i++) {
      const p = passages[i];
      if (typeof p !== 'string') throw new InvalidArgumentError(`passages[${i}] must be a string, got ${typeof p}`);
      if (p.length > maxPassageChars) {
        throw new InputLimitError('maxPassageChars', maxPassageChars, p.length, `passages[${i}] length in characters`);
      }
      total += p.length;
    }
    if (total > maxRequestChars) {
      throw new InputLimitError('maxRequestChars', maxRequestChars, total, 'the request length in characters');
    }
    if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) {
      throw new InvalidArgumentError('signal must be an AbortSignal');
    }
    if (opts.deadline !== undefined && (typeof opts.deadline !== 'number' || Number.isNaN(opts.deadline))) {
      throw new InvalidArgumentError('deadline must be a number (ms on the Date.now() clock)');
    }
    const raw = await this.batcher.submitWithChunks(query, passages, opts);
    const scores = toScores(raw.logits, passages.length, this.info.contract.signalNames, scoreRule(this.info.contract));
    return this.info.chunking === null ? scores : { ...scores, chunks: raw.chunks };
  }

  stats(): CrossEncoderStats {
    return { ...this.batcher.stats(), workers: this.pool.stats() };
  }

  pendingPairs(): number {
    return this.batcher.pendingPairs();
  }

  estimateWaitMs(pairs: number, tokensPerPair?: number): number {
    return this.batcher.estimateWaitMs(pairs, tokensPerPair);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const started = Date.now();
      await this.batcher.drain(this.closeTimeoutMs);
      await this.pool.close(Math.max(0, this.closeTimeoutMs - (Date.now() - started)));
    })();
    return this.closing;
  }
}

/** How a contract's logit columns become probabilities, and whether `signals` is reported. */
export interface ScoreRule {
  /** sigmoid per column (default) or softmax over a pair's columns. */
  readonly activation?: HeadActivation;
  /** Report `signals` even for one column (a labelled head names its signal). */
  readonly namedSignals?: boolean;
}

export function scoreRule(contract: ModelContract): ScoreRule {
  return { activation: contract.activation, namedSignals: contract.head.kind === 'labels' };
}

/**
 * Raw float64 logits [n × k] → public scores: float32 logits and float64 probabilities computed
 * from the float64 logits (a sigmoid per column, or the softmax over a pair's columns). The
 * top-level `logits`/`probabilities` are the first column's.
 */
export function toScores(
  raw: Float64Array,
  n: number,
  signalNames: readonly string[],
  rule: ScoreRule = {},
): CrossEncoderScores {
  const k = signalNames.length;
  const activation = rule.activation ?? 'sigmoid';
  const allProbabilities = new Float64Array(n * k);
  for (let i = 0; i < n; i++) columnProbabilities(raw, i * k, k, activation, allProbabilities);
  const logits = new Float32Array(n);
  const probabilities = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    logits[i] = raw[i * k];
    probabilities[i] = allProbabilities[i * k];
  }
  if (k === 1 && rule.namedSignals !== true) return { logits, probabilities };
  const allLogits = new Float32Array(n * k);
  for (let j = 0; j < n * k; j++) allLogits[j] = raw[j];
  return { logits, probabilities, signals: { names: signalNames, logits: allLogits, probabilities: allProbabilities } };
}
