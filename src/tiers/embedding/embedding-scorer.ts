/**
 * The embedding tier: a bi-encoder (one vector per text, cosine similarity between query and
 * passage) on the cross-encoder tier's worker pool and dynamic batcher. Texts, not pairs, are what
 * the batcher batches: each call is one batcher request holding the texts it needs embedded (the
 * query, once, and the passages not precomputed and not in the vector cache), tokenized in the
 * workers with the tokenizer's single-sequence template ('passage' input), batched across calls by
 * token length, and run on a worker whose head is the graph's `embeddings` output. The rows come
 * back L2-normalised into the call's own slots, so concurrent calls never see each other's data.
 *
 * Loaded lazily by index.ts (it pulls in tokenizers; the workers load onnxruntime-node).
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { plattProbability, type PlattParameters } from '../../calibration/platt.js';
import { DisposedError, InvalidArgumentError } from '../../errors.js';
import { RELEVANT } from '../../signals.js';
import type { DetailedPairScore, Passage } from '../../types.js';
import { integerInRange } from '../../util/validate-options.js';
import { DynamicBatcher } from '../cross-encoder/batcher.js';
import {
  DEFAULT_ENCODER_PASSAGE_CHARS,
  DEFAULT_ENCODER_QUERY_CHARS,
  DEFAULT_ENCODER_REQUEST_CHARS,
  DEFAULT_MAX_BATCH_TOKENS,
  DEFAULT_MAX_PASSAGES_PER_REQUEST,
  DEFAULT_MAX_PENDING_PAIRS,
  DEFAULT_MAX_QUEUE_DELAY_MS,
  DEFAULT_WORKER_NICE,
} from '../cross-encoder/cross-encoder.js';
import { InferenceError, InputLimitError, ModelContractError } from '../cross-encoder/errors.js';
import { modelConfigFields, readConfigJson } from '../cross-encoder/model-config.js';
import { defaultPoolSize, modelDimensionsFromConfig } from '../cross-encoder/pool-sizing.js';
import type { WorkerConfig } from '../cross-encoder/protocol.js';
import { passageText } from '../cross-encoder/scorer.js';
import { readModelLengthLimits, resolveMaxLength } from '../cross-encoder/tokenize-pairs.js';
import { tokenizerSourceFiles } from '../cross-encoder/vocab-tokenizer.js';
import { CrossEncoderWorkerPool, DEFAULT_CLOSE_TIMEOUT_MS } from '../cross-encoder/worker-pool.js';
import { checkPlatt, DEFAULT_EMBEDDING_CALIBRATION, readCalibrationFile } from './calibration.js';
import { EmbeddingModelError, EmbeddingModelMismatchError } from './errors.js';
import { EMBEDDINGS_OUTPUT, resolveBiEncoderFiles } from './model-folder.js';
import {
  EMBEDDING_TIER,
  SIMILARITY,
  type EmbeddingCalibrationSource,
  type EmbeddingScoreOptions,
  type EmbeddingScorer,
  type EmbeddingScorerInfo,
  type EmbeddingScorerOptions,
  type EmbeddingScorerStats,
  type EmbedOptions,
} from './types.js';
import { VectorCache } from './vector-cache.js';
import { checkedUnitVector, cosine, unitRow } from './vectors.js';
import { hashFiles } from '../../util/hash-files.js';

/** Default bytes of the vector cache: ≈ 40,000 vectors of 384 dimensions. */
export const DEFAULT_EMBEDDING_CACHE_BYTES = 64 * 1024 * 1024;
const MAX_THREADS = 256;
const WHAT = 'embedding scorer';
const OPTION_KEYS: ReadonlySet<string> = new Set([
  'modelDir',
  'variant',
  'modelId',
  'calibration',
  'queryPrefix',
  'passagePrefix',
  'workers',
  'intraOpThreads',
  'maxBatchTokens',
  'maxQueueDelayMs',
  'maxLength',
  'executionProvider',
  'maxPendingTexts',
  'maxPassagesPerRequest',
  'maxQueryChars',
  'maxPassageChars',
  'maxRequestChars',
  'cacheBytes',
  'closeTimeoutMs',
  'workerNice',
]);

function positiveInt(name: string, value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  return value === undefined ? fallback : integerInRange(name, value as number, 1, max);
}

function nonNegativeNumber(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`${name} must be a finite number >= 0, got ${String(value)}`);
  }
  return value;
}

function optionalString(name: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw new InvalidArgumentError(`${name} must be a string, got ${typeof value}`);
  return value;
}

/** A short, stable tag of a string for ids (prefixes). */
function tag(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

interface Limits {
  readonly maxPassages: number;
  readonly maxQueryChars: number;
  readonly maxPassageChars: number;
  readonly maxRequestChars: number;
}

export async function createEmbeddingScorer(options: EmbeddingScorerOptions): Promise<EmbeddingScorer> {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('createEmbeddingScorer needs an options object { modelDir, ... }');
  }
  const unknown = Object.keys(options).filter((k) => !OPTION_KEYS.has(k));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `unknown option${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${[...OPTION_KEYS].join(', ')})`,
    );
  }
  const files = resolveBiEncoderFiles(options.modelDir, options.variant);
  const { manifest } = files;
  const executionProvider = options.executionProvider ?? 'cpu';
  if (executionProvider !== 'cpu' && executionProvider !== 'cuda') {
    throw new InvalidArgumentError(`executionProvider must be 'cpu' or 'cuda', got ${String(executionProvider)}`);
  }
  let maxLength: number;
  try {
    maxLength = resolveMaxLength(
      options.maxLength ?? manifest.maxLength,
      readModelLengthLimits(files.configPath, files.tokenizerConfigPath),
    );
  } catch (cause) {
    if (options.maxLength !== undefined) throw cause;
    throw new EmbeddingModelError(
      files.dir,
      `its maxLength ${manifest.maxLength} does not fit the model: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  const queryPrefix = optionalString('queryPrefix', options.queryPrefix, '');
  const passagePrefix = optionalString('passagePrefix', options.passagePrefix, '');
  if (options.modelId !== undefined && (typeof options.modelId !== 'string' || options.modelId.length === 0)) {
    throw new InvalidArgumentError(`modelId must be a non-empty string, got ${String(options.modelId)}`);
  }
  let calibration: PlattParameters;
  let calibrationSource: EmbeddingCalibrationSource;
  if (options.calibration !== undefined) {
    calibration = checkPlatt(options.calibration, (why) => {
      throw new InvalidArgumentError(why);
    });
    calibrationSource = 'option';
  } else if (files.calibrationPath !== null) {
    calibration = readCalibrationFile(files.dir, files.calibrationPath);
    calibrationSource = 'file';
  } else {
    calibration = DEFAULT_EMBEDDING_CALIBRATION;
    calibrationSource = 'default';
  }
  const configJson = readConfigJson(files.configPath);
  const sized = defaultPoolSize({
    cores: availableParallelism(),
    model: modelDimensionsFromConfig(configJson),
    executionProvider,
    modelBytes: statSync(files.modelPath).size,
    memoryBytes: totalmem() / 2,
  });
  const workers = positiveInt('workers', options.workers, sized.workers, MAX_THREADS);
  const intraOpThreads = positiveInt('intraOpThreads', options.intraOpThreads, sized.intraOpThreads, MAX_THREADS);
  const maxBatchTokens = positiveInt('maxBatchTokens', options.maxBatchTokens, DEFAULT_MAX_BATCH_TOKENS);
  const maxPendingTexts = positiveInt('maxPendingTexts', options.maxPendingTexts, DEFAULT_MAX_PENDING_PAIRS);
  const limits: Limits = {
    maxPassages: positiveInt('maxPassagesPerRequest', options.maxPassagesPerRequest, DEFAULT_MAX_PASSAGES_PER_REQUEST),
    maxQueryChars: positiveInt('maxQueryChars', options.maxQueryChars, DEFAULT_ENCODER_QUERY_CHARS),
    maxPassageChars: positiveInt('maxPassageChars', options.maxPassageChars, DEFAULT_ENCODER_PASSAGE_CHARS),
    maxRequestChars: positiveInt('maxRequestChars', options.maxRequestChars, DEFAULT_ENCODER_REQUEST_CHARS),
  };
  const maxQueueDelayMs = nonNegativeNumber('maxQueueDelayMs', options.maxQueueDelayMs, DEFAULT_MAX_QUEUE_DELAY_MS);
  const closeTimeoutMs = nonNegativeNumber('closeTimeoutMs', options.closeTimeoutMs, DEFAULT_CLOSE_TIMEOUT_MS);
  const cacheBytes = nonNegativeNumber('cacheBytes', options.cacheBytes, DEFAULT_EMBEDDING_CACHE_BYTES);
  const workerNice = options.workerNice ?? DEFAULT_WORKER_NICE;
  if (!Number.isInteger(workerNice) || workerNice < 0 || workerNice > 19) {
    throw new InvalidArgumentError(`workerNice must be an integer in 0..19, got ${String(workerNice)}`);
  }

  const config: WorkerConfig = {
    modelPath: files.modelPath,
    tokenizerPath: files.tokenizerPath,
    maxLength,
    truncation: 'longest_first',
    pairInput: 'passage',
    modelConfig: modelConfigFields(configJson),
    embedding: { output: EMBEDDINGS_OUTPUT, dimensions: manifest.dimensions },
    intraOpThreads,
    executionProvider,
  };
  // Both settle before anything is torn down: a failed hash must not stop workers mid-probe.
  const [started, hashed] = await Promise.allSettled([
    CrossEncoderWorkerPool.start(config, { workers, niceIncrement: workerNice, label: 'embedding' }),
    hashFiles([
      files.modelPath,
      ...tokenizerSourceFiles(files.tokenizerPath),
      ...(files.configPath === null ? [] : [files.configPath]),
    ]),
  ]);
  if (started.status === 'rejected') throw started.reason;
  const { pool, describe } = started.value;
  if (hashed.status === 'rejected') {
    await pool.close();
    throw new EmbeddingModelError(files.dir, `cannot read the model files: ${String(hashed.reason)}`, {
      cause: hashed.reason,
    });
  }
  const vocabSize = (configJson as { vocab_size?: unknown } | undefined)?.vocab_size;
  if (typeof vocabSize === 'number' && describe.maxTokenId >= vocabSize) {
    await pool.close();
    throw new ModelContractError(
      `tokenizer has ${describe.vocabSize} tokens (ids up to ${describe.maxTokenId}) but the model's config.json vocab_size is ${vocabSize}: tokenizer and model do not match`,
    );
  }
  const modelId = options.modelId ?? `embedding:${hashed.value.slice(0, 16)}:len${maxLength}`;
  const prefixes = queryPrefix === '' && passagePrefix === '' ? '' : `:q${tag(queryPrefix)}p${tag(passagePrefix)}`;
  const info: EmbeddingScorerInfo = {
    modelDir: files.dir,
    modelPath: files.modelPath,
    tokenizerPath: files.tokenizerPath,
    variant: options.variant ?? null,
    modelId,
    dimensions: manifest.dimensions,
    maxLength,
    pooling: manifest.pooling ?? null,
    queryPrefix,
    passagePrefix,
    calibration,
    calibrationSource,
    workers,
    intraOpThreads,
    executionProvider,
  };
  const batcher = new DynamicBatcher(pool, {
    workers,
    signals: manifest.dimensions,
    maxBatchTokens,
    maxQueueDelayMs,
    maxPendingPairs: maxPendingTexts,
    useTypeIds: describe.contract.tokenTypeIds !== null,
    name: WHAT,
  });
  const id = `${modelId}${prefixes}:platt${calibration.a},${calibration.b}`;
  return new PooledEmbeddingScorer(
    id,
    info,
    pool,
    batcher,
    limits,
    new VectorCache(modelId, cacheBytes),
    closeTimeoutMs,
  );
}

/** What one call needs embedded: texts by cache key (duplicates share one slot). */
interface Wanted {
  readonly keys: string[];
  readonly texts: string[];
  readonly slotOf: Map<string, number>;
}

class PooledEmbeddingScorer implements EmbeddingScorer {
  readonly signals: readonly string[] = Object.freeze([RELEVANT, SIMILARITY]);
  readonly modelId: string;
  readonly dimensions: number;
  private closing: Promise<void> | null = null;
  private precomputed = 0;

  constructor(
    readonly id: string,
    readonly info: EmbeddingScorerInfo,
    private readonly pool: CrossEncoderWorkerPool,
    private readonly batcher: DynamicBatcher,
    private readonly limits: Limits,
    private readonly cache: VectorCache,
    private readonly closeTimeoutMs: number,
  ) {
    this.modelId = info.modelId;
    this.dimensions = info.dimensions;
  }

  async score(
    query: string,
    passages: readonly Passage[],
    options?: EmbeddingScoreOptions,
  ): Promise<ReadonlyArray<DetailedPairScore>> {
    if (this.closing) throw new DisposedError(WHAT);
    const opts = this.checkCallOptions(options);
    if (typeof query !== 'string') throw new InvalidArgumentError(`query must be a string, got ${typeof query}`);
    if (!Array.isArray(passages)) throw new InvalidArgumentError('passages must be an array of Passage');
    const { maxPassages, maxQueryChars, maxPassageChars, maxRequestChars } = this.limits;
    if (passages.length > maxPassages) {
      throw new InputLimitError('maxPassagesPerRequest', maxPassages, passages.length, 'the number of passages');
    }
    if (query.length > maxQueryChars) {
      throw new InputLimitError('maxQueryChars', maxQueryChars, query.length, 'the query length in characters');
    }
    const callModel = opts.embeddingModel;
    // Everything the caller sent is checked before anything is embedded or scored.
    const queryVector =
      opts.queryEmbedding === undefined
        ? undefined
        : this.precomputedVector(opts.queryEmbedding, callModel, undefined, 'queryEmbedding');
    const passageVectors: Array<Float32Array | undefined> = new Array(passages.length);
    const texts: Array<string | undefined> = new Array(passages.length);
    let total = query.length;
    for (let i = 0; i < passages.length; i++) {
      const p = passages[i];
      if (typeof p !== 'object' || p === null || typeof p.text !== 'string') {
        throw new InvalidArgumentError(`passages[${i}] must be a Passage with a string text`);
      }
      if (p.title !== undefined && typeof p.title !== 'string') {
        throw new InvalidArgumentError(`passages[${i}].title must be a string`);
      }
      if (p.embedding !== undefined && p.embedding !== null) {
        passageVectors[i] = this.precomputedVector(
          p.embedding,
          callModel,
          p.embeddingModel,
          `passages[${i}].embedding`,
        );
        continue;
      }
      const text = passageText(p);
      if (text.length > maxPassageChars) {
        throw new InputLimitError(
          'maxPassageChars',
          maxPassageChars,
          text.length,
          `passages[${i}] length in characters`,
        );
      }
      total += text.length;
      texts[i] = text;
    }
    if (total > maxRequestChars) {
      throw new InputLimitError('maxRequestChars', maxRequestChars, total, 'the request length in characters');
    }
    if (passages.length === 0) return [];
    this.precomputed += (queryVector === undefined ? 0 : 1) + passageVectors.filter((v) => v !== undefined).length;

    // One batcher request for every text the call needs: the query (once) and the passages missing.
    const wanted: Wanted = { keys: [], texts: [], slotOf: new Map() };
    const resolved = new Map<string, Float32Array>();
    const lookup = (text: string): string => {
      const key = this.cache.key(text);
      if (resolved.has(key) || wanted.slotOf.has(key)) return key;
      const hit = this.cache.get(key);
      if (hit !== undefined) resolved.set(key, hit);
      else {
        wanted.slotOf.set(key, wanted.texts.length);
        wanted.keys.push(key);
        wanted.texts.push(text);
      }
      return key;
    };
    const queryKey = queryVector === undefined ? lookup(this.info.queryPrefix + query) : undefined;
    const passageKeys = texts.map((t) => (t === undefined ? undefined : lookup(this.info.passagePrefix + t)));
    await this.run(wanted, resolved, opts);

    const q = queryVector ?? (resolved.get(queryKey as string) as Float32Array);
    const { a, b } = this.info.calibration;
    const results: DetailedPairScore[] = new Array(passages.length);
    for (let i = 0; i < passages.length; i++) {
      const v = passageVectors[i] ?? (resolved.get(passageKeys[i] as string) as Float32Array);
      const cos = cosine(q, v);
      results[i] = {
        probabilities: { [RELEVANT]: plattProbability(this.info.calibration, cos), [SIMILARITY]: Math.max(0, cos) },
        raw: { [RELEVANT]: a * cos + b, [SIMILARITY]: cos },
        tier: EMBEDDING_TIER,
      };
    }
    return results;
  }

  async embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]> {
    if (this.closing) throw new DisposedError(WHAT);
    const opts = this.checkCallOptions(options);
    const as = options?.as ?? 'passage';
    if (as !== 'query' && as !== 'passage')
      throw new InvalidArgumentError(`as must be 'query' or 'passage', got ${String(as)}`);
    if (!Array.isArray(texts)) throw new InvalidArgumentError('texts must be an array of strings');
    const { maxPassages, maxPassageChars, maxRequestChars } = this.limits;
    if (texts.length > maxPassages) {
      throw new InputLimitError('maxPassagesPerRequest', maxPassages, texts.length, 'the number of texts');
    }
    let total = 0;
    for (let i = 0; i < texts.length; i++) {
      const t = texts[i];
      if (typeof t !== 'string') throw new InvalidArgumentError(`texts[${i}] must be a string, got ${typeof t}`);
      if (t.length > maxPassageChars) {
        throw new InputLimitError('maxPassageChars', maxPassageChars, t.length, `texts[${i}] length in characters`);
      }
      total += t.length;
    }
    if (total > maxRequestChars) {
      throw new InputLimitError('maxRequestChars', maxRequestChars, total, 'the request length in characters');
    }
    const prefix = as === 'query' ? this.info.queryPrefix : this.info.passagePrefix;
    const wanted: Wanted = { keys: [], texts: [], slotOf: new Map() };
    const resolved = new Map<string, Float32Array>();
    const keys = texts.map((t) => {
      const text = prefix + t;
      const key = this.cache.key(text);
      if (!resolved.has(key) && !wanted.slotOf.has(key)) {
        const hit = this.cache.get(key);
        if (hit !== undefined) resolved.set(key, hit);
        else {
          wanted.slotOf.set(key, wanted.texts.length);
          wanted.keys.push(key);
          wanted.texts.push(text);
        }
      }
      return key;
    });
    await this.run(wanted, resolved, opts);
    // Copies: the cache keeps its own vectors whatever the caller does with these.
    return keys.map((key) => (resolved.get(key) as Float32Array).slice());
  }

  stats(): EmbeddingScorerStats {
    return {
      ...this.batcher.stats(),
      workers: this.pool.stats(),
      cache: this.cache.stats(),
      precomputedVectors: this.precomputed,
    };
  }

  estimateWaitMs(texts: number): number {
    return this.batcher.estimateWaitMs(texts);
  }

  pendingTexts(): number {
    return this.batcher.pendingPairs();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const started = Date.now();
      await this.batcher.drain(this.closeTimeoutMs);
      await this.pool.close(Math.max(0, this.closeTimeoutMs - (Date.now() - started)));
      this.cache.clear();
    })();
    return this.closing;
  }

  /** Embeds the wanted texts as one batcher request, into `resolved` and the cache. */
  private async run(
    wanted: Wanted,
    resolved: Map<string, Float32Array>,
    limits: { signal?: AbortSignal; deadline?: number },
  ): Promise<void> {
    if (wanted.texts.length === 0) return;
    const rows = await this.batcher.submit('', wanted.texts, limits);
    const dims = this.dimensions;
    if (rows.length !== wanted.texts.length * dims) {
      throw new InferenceError(
        `the model returned ${rows.length} values for ${wanted.texts.length} texts × ${dims} dimensions`,
      );
    }
    for (let j = 0; j < wanted.texts.length; j++) {
      const vector = unitRow(rows, j, dims);
      if (vector === null) {
        throw new InferenceError(
          `the model returned a non-finite or all-zero embedding for a text of ${wanted.texts[j].length} characters`,
        );
      }
      this.cache.set(wanted.keys[j], vector);
      resolved.set(wanted.keys[j], vector);
    }
  }

  /** A caller's vector, checked: its model id (the passage's, else the call's) and its values. */
  private precomputedVector(
    value: unknown,
    callModel: string | undefined,
    passageModel: unknown,
    field: string,
  ): Float32Array {
    if (passageModel !== undefined && typeof passageModel !== 'string') {
      throw new InvalidArgumentError(`${field.replace(/\.embedding$/, '.embeddingModel')} must be a string`);
    }
    if (passageModel !== undefined && callModel !== undefined && passageModel !== callModel) {
      throw new EmbeddingModelMismatchError(field, this.modelId, passageModel);
    }
    const model = passageModel ?? callModel;
    if (model !== this.modelId) throw new EmbeddingModelMismatchError(field, this.modelId, model);
    return checkedUnitVector(value, this.dimensions, field);
  }

  private checkCallOptions(
    options: EmbeddingScoreOptions | EmbedOptions | undefined | null,
  ): EmbeddingScoreOptions & { signal?: AbortSignal; deadline?: number } {
    const opts = options ?? {};
    if (typeof opts !== 'object') throw new InvalidArgumentError(`options must be an object, got ${typeof opts}`);
    if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) {
      throw new InvalidArgumentError('signal must be an AbortSignal');
    }
    if (opts.deadline !== undefined && (typeof opts.deadline !== 'number' || Number.isNaN(opts.deadline))) {
      throw new InvalidArgumentError('deadline must be a number (ms on the Date.now() clock)');
    }
    const model = (opts as EmbeddingScoreOptions).embeddingModel;
    if (model !== undefined && typeof model !== 'string') {
      throw new InvalidArgumentError(`embeddingModel must be a string, got ${typeof model}`);
    }
    return opts as EmbeddingScoreOptions;
  }
}
