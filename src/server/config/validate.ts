/**
 * Server configuration: the shape, the defaults, and the validation of a config assembled from a
 * JSON file, environment variables and flags (flags win over the environment, which wins over the
 * file). Everything is checked here, before a socket opens or a model loads, so a typo in a config
 * file is a clear start-up error naming the field instead of a surprise at the first request.
 */
import { isScorer } from '../util/is-scorer.js';
import { availableParallelism } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { GatePolicy, Scorer } from '../index.js';
import { ServerConfigError } from './errors.js';

/** The model name served when a request names none, and the shipped fast path's name. */
export const DEFAULT_MODEL_NAME = 'fastpath';
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;
export const DEFAULT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
export const DEFAULT_MAX_DOCUMENTS = 1000;
/** Characters of a document that are scored; the rest is cut (TEI `truncate: false` refuses longer ones). */
export const DEFAULT_MAX_DOCUMENT_CHARS = 32_768;
export const DEFAULT_MAX_QUERY_CHARS = 8192;
export const DEFAULT_BUDGET_MS = 100;
export const DEFAULT_MAX_BUDGET_MS = 60_000;
/** The gate is asked to answer this long before the request's deadline, leaving time to serialise and write. */
export const DEFAULT_RESPONSE_MARGIN_MS = 5;
export const DEFAULT_MAX_IN_FLIGHT_PAIRS = 16_384;
/**
 * Requests one process serves at once, server-wide, before it refuses more with 429 (TEI's
 * `--max-concurrent-requests`, whose default it shares). Measured capacity of one process on the
 * 2-core VM (bench/admission.ts): 1,900–2,900 fast-path requests/s (20 SciFact documents, no
 * cache) and 16–20 cross-encoder requests/s (TinyBERT-L2 shape, 1 worker, 8 documents), i.e. ~190–290
 * and ~6 requests completed within 100 ms / 300 ms budgets; 512 never binds before the queue, age
 * and prediction rules (docs/server.md "Under load") in steady operation, and bounds what clients
 * that hold requests open (slow bodies, long budgets) can pin.
 */
export const DEFAULT_MAX_CONCURRENT_REQUESTS = 512;
/**
 * Longest a request may wait for the event loop, within the loop's turn that handles it, once the
 * loop holds a standing queue (every wait above this for 50 ms: CoDel's test), ms; beyond it the
 * request is refused (429) at arrival. A turn then lasts about this long plus its refusals, so
 * every answer comes within a few turns of its request's arrival: 5 ms is CoDel's target.
 */
export const DEFAULT_MAX_QUEUE_MS = 5;
export const DEFAULT_CACHE_MB = 256;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: ReadonlySet<string> = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Options every model kind shares. */
export interface ModelCommonConfig {
  /** Gate policy of this model, merged over the server-wide `policy`. */
  readonly policy?: GatePolicy;
  /** Budget (ms) of requests to this model that carry none. Default: the server's `budgetMs`. */
  readonly budgetMs?: number;
  /** Pairs of this model in flight at most; beyond it requests are refused with 429. Default: `limits.maxInFlightPairs`. */
  readonly maxInFlightPairs?: number;
}

/** The tree fast path (a model directory in the fastpath-model format). */
export interface FastPathModelConfig extends ModelCommonConfig {
  readonly type: 'fastpath';
  /** Model directory; default the shipped models/fastpath-lexical. */
  readonly dir?: string;
  /** Corpus statistics of your collection (a `relevance-gate stats` file); default the model's own. */
  readonly stats?: string;
  /** An operating-points file fitted for this model (`relevance-gate fit-points --out`); default the model's own. */
  readonly operatingPoints?: string;
}

/** An ONNX cross-encoder folder served by a worker pool. */
export interface CrossEncoderModelConfig extends ModelCommonConfig {
  readonly type: 'cross-encoder';
  readonly dir: string;
  /**
   * An operating-points file fitted for this model (`relevance-gate fit-points --tier cross-encoder`):
   * requests without a policy then decide by its `balanced` point instead of an absolute threshold.
   */
  readonly operatingPoints?: string;
  /** Worker threads; default sized so all processes' threads fit the cores (see docs/server.md). */
  readonly workers?: number;
  readonly intraOpThreads?: number;
  readonly maxBatchTokens?: number;
  readonly maxQueueDelayMs?: number;
  readonly maxLength?: number;
  readonly truncation?: 'longest_first' | 'only_second';
  readonly maxPendingPairs?: number;
  /** Unix nice increment (0-19) of the worker threads, so the event loop wins the CPU under saturation. */
  readonly workerNice?: number;
}

/** The tier router over named tier models (a fast path and/or cross-encoders). */
export interface RouterModelConfig extends ModelCommonConfig {
  readonly type: 'router';
  /** Names of `fastpath` / `cross-encoder` (or programmatic `scorer`) models to route between. */
  readonly tiers: readonly string[];
  readonly routing?: 'fixed' | 'budget' | 'cascade';
  /** Tier (model name) of fixed routing; default the best. */
  readonly fixedTier?: string;
  /** Decision threshold cascade spends the slow tier around; default the fast path's recommended threshold. */
  readonly threshold?: number;
  readonly headroom?: number;
  readonly returnMarginMs?: number;
  /** Pairs the router keeps outstanding on a slow tier at most (default 512). */
  readonly maxQueuedPairs?: number;
  readonly backgroundFill?: boolean;
}

/** A scorer built in code (embedding the server, tests): not expressible in a JSON file. */
export interface ScorerModelConfig extends ModelCommonConfig {
  readonly type: 'scorer';
  readonly scorer: Scorer | (() => Promise<Scorer>);
  /** As a router tier: its quality (higher is better) and whether it answers in-process (the fallback). */
  readonly quality?: number;
  readonly inline?: boolean;
  /** Label of its pairs; default the scorer id. */
  readonly tierName?: string;
  /** Release resources at shutdown. */
  readonly close?: () => Promise<void> | void;
}

export type ModelConfig = FastPathModelConfig | CrossEncoderModelConfig | RouterModelConfig | ScorerModelConfig;

export interface CacheConfig {
  /** Score cache on/off. Default on. */
  readonly enabled: boolean;
  /** L1 size in MiB. */
  readonly l1Mb: number;
  /** Shared L2 (redis:// URL); default none. */
  readonly redisUrl?: string;
  readonly ttlMs?: number;
  /** Longest wait for a Redis read before the pairs are scored instead; default 5 ms. */
  readonly redisTimeoutMs?: number;
}

export interface LimitsConfig {
  /** Request body bytes at most (→ 413). */
  readonly bodyBytes: number;
  /** Documents per request at most (→ 422 Cohere / 422 TEI Validation / 400 gate). */
  readonly documentsPerRequest: number;
  /** Characters of a document scored; longer ones are truncated (TEI `truncate: false`: 422). */
  readonly maxDocumentChars: number;
  readonly maxQueryChars: number;
  /** Default per-model bound on pairs in flight. */
  readonly maxInFlightPairs: number;
  /** Largest budget a request may ask for, ms. */
  readonly maxBudgetMs: number;
}

export interface ServerConfig {
  /** Admission control (docs/server.md "Under load"). */
  readonly admission: {
    /** Requests served at once, server-wide (per process); beyond it new requests get 429 at arrival. Default 512. */
    readonly maxConcurrentRequests: number;
    /** Longest wait in an event-loop turn, under a standing queue, before a request is refused at arrival, ms. Default 5. */
    readonly maxQueueMs: number;
    /** Honour the client's send time in `x-request-start` (age and deadline count from it). Default true. */
    readonly requestStartHeader: boolean;
    /**
     * Refuse a request whose age plus its model's predicted completion exceeds its budget, at
     * arrival and once its body is read. Default true; false leaves the bounds only.
     */
    readonly predictive: boolean;
  };
  readonly host: string;
  readonly port: number;
  /**
   * Bearer token required on everything but health and metrics; undefined = no auth. `serve` reads
   * it from `--api-key-file`, `RELEVANCE_GATE_API_KEY` or (warned: visible in `ps`) `--api-key`.
   */
  readonly apiKey: string | undefined;
  readonly defaultModel: string;
  readonly models: Readonly<Record<string, ModelConfig>>;
  /** Server-wide gate policy (each model's `policy` is merged over it). */
  readonly policy: GatePolicy;
  readonly cache: CacheConfig;
  readonly limits: LimitsConfig;
  /** Budget of requests that carry none, ms. */
  readonly budgetMs: number;
  readonly responseMarginMs: number;
  /** HTTP processes (node:cluster); 1 = this process only. */
  readonly processes: number;
  readonly logLevel: LogLevel;
  /** Log the query text of each request at debug level (off by default; document text is never logged). */
  readonly logPassages: boolean;
  /** After SIGTERM, requests still in flight get this long before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
  /** After SIGTERM, readiness answers 503 this long before the listener closes (load balancers). */
  readonly drainDelayMs: number;
  /** Base directory relative model paths resolve against. */
  readonly baseDir: string;
}

/** What a caller may give: every field optional, models merged over the default `fastpath`. */
export interface ServerConfigInput {
  readonly admission?: Partial<ServerConfig['admission']>;
  readonly host?: string;
  readonly port?: number;
  readonly apiKey?: string;
  readonly defaultModel?: string;
  readonly models?: Readonly<Record<string, ModelConfig>>;
  readonly policy?: GatePolicy;
  readonly cache?: Partial<CacheConfig>;
  readonly limits?: Partial<LimitsConfig>;
  readonly budgetMs?: number;
  readonly responseMarginMs?: number;
  readonly processes?: number;
  readonly logLevel?: LogLevel;
  readonly logPassages?: boolean;
  readonly shutdownTimeoutMs?: number;
  readonly drainDelayMs?: number;
  readonly baseDir?: string;
}

const TOP_KEYS: ReadonlySet<string> = new Set([
  '$schema',
  'admission',
  'host',
  'port',
  'apiKey',
  'defaultModel',
  'models',
  'policy',
  'cache',
  'limits',
  'budgetMs',
  'responseMarginMs',
  'processes',
  'logLevel',
  'logPassages',
  'shutdownTimeoutMs',
  'drainDelayMs',
  'baseDir',
]);
const ADMISSION_KEYS: ReadonlySet<string> = new Set([
  'maxConcurrentRequests',
  'maxQueueMs',
  'requestStartHeader',
  'predictive',
]);
const CACHE_KEYS: ReadonlySet<string> = new Set(['enabled', 'l1Mb', 'redisUrl', 'ttlMs', 'redisTimeoutMs']);
const LIMIT_KEYS: ReadonlySet<string> = new Set([
  'bodyBytes',
  'documentsPerRequest',
  'maxDocumentChars',
  'maxQueryChars',
  'maxInFlightPairs',
  'maxBudgetMs',
]);
const COMMON_MODEL_KEYS = ['type', 'policy', 'budgetMs', 'maxInFlightPairs'];
const MODEL_KEYS: Readonly<Record<ModelConfig['type'], ReadonlySet<string>>> = {
  fastpath: new Set([...COMMON_MODEL_KEYS, 'dir', 'stats', 'operatingPoints']),
  'cross-encoder': new Set([
    ...COMMON_MODEL_KEYS,
    'dir',
    'operatingPoints',
    'workers',
    'intraOpThreads',
    'maxBatchTokens',
    'maxQueueDelayMs',
    'maxLength',
    'truncation',
    'maxPendingPairs',
    'workerNice',
  ]),
  router: new Set([
    ...COMMON_MODEL_KEYS,
    'tiers',
    'routing',
    'fixedTier',
    'threshold',
    'headroom',
    'returnMarginMs',
    'maxQueuedPairs',
    'backgroundFill',
  ]),
  scorer: new Set([...COMMON_MODEL_KEYS, 'scorer', 'quality', 'inline', 'tierName', 'close']),
};
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkKeys(where: string, value: Record<string, unknown>, known: ReadonlySet<string>): void {
  for (const key of Object.keys(value))
    if (!known.has(key)) throw new ServerConfigError(`${where}.${key} is not a known option (typo?)`);
}

function int(where: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new ServerConfigError(`${where} must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
  return value;
}

function num(where: string, value: unknown, ok: (n: number) => boolean, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || !ok(value))
    throw new ServerConfigError(`${where} must be ${what}, got ${JSON.stringify(value)}`);
  return value;
}

function str(where: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ServerConfigError(`${where} must be a non-empty string`);
  return value;
}

function optional<T>(value: unknown, check: (v: unknown) => T): T | undefined {
  return value === undefined ? undefined : check(value);
}

function path(baseDir: string, where: string, value: unknown): string {
  const p = str(where, value);
  return isAbsolute(p) ? p : resolve(baseDir, p);
}

function validateModel(name: string, raw: unknown, baseDir: string): ModelConfig {
  const where = `models.${name}`;
  if (!MODEL_NAME.test(name))
    throw new ServerConfigError(
      `${where}: model names are 1-128 characters of [A-Za-z0-9._:/-], starting alphanumeric`,
    );
  if (!isRecord(raw)) throw new ServerConfigError(`${where} must be an object with a "type"`);
  const type = raw.type;
  if (type !== 'fastpath' && type !== 'cross-encoder' && type !== 'router' && type !== 'scorer')
    throw new ServerConfigError(`${where}.type must be fastpath, cross-encoder or router, got ${JSON.stringify(type)}`);
  checkKeys(where, raw, MODEL_KEYS[type]);
  if (raw.policy !== undefined && !isRecord(raw.policy))
    throw new ServerConfigError(`${where}.policy must be an object`);
  if (raw.operatingPoints !== undefined && raw.policy?.operatingPoints !== undefined)
    throw new ServerConfigError(`${where}: give operatingPoints (a file) or policy.operatingPoints, not both`);
  const common = {
    policy: raw.policy as GatePolicy | undefined,
    budgetMs: optional(raw.budgetMs, (v) => num(`${where}.budgetMs`, v, (n) => n > 0, 'a number of ms > 0')),
    maxInFlightPairs: optional(raw.maxInFlightPairs, (v) => int(`${where}.maxInFlightPairs`, v, 1)),
  };
  switch (type) {
    case 'fastpath':
      return {
        ...common,
        type,
        dir: optional(raw.dir, (v) => path(baseDir, `${where}.dir`, v)),
        stats: optional(raw.stats, (v) => path(baseDir, `${where}.stats`, v)),
        operatingPoints: optional(raw.operatingPoints, (v) => path(baseDir, `${where}.operatingPoints`, v)),
      };
    case 'cross-encoder': {
      const truncation = raw.truncation;
      if (truncation !== undefined && truncation !== 'longest_first' && truncation !== 'only_second')
        throw new ServerConfigError(`${where}.truncation must be longest_first or only_second`);
      return {
        ...common,
        type,
        dir: path(baseDir, `${where}.dir`, raw.dir),
        operatingPoints: optional(raw.operatingPoints, (v) => path(baseDir, `${where}.operatingPoints`, v)),
        workers: optional(raw.workers, (v) => int(`${where}.workers`, v, 1, 256)),
        intraOpThreads: optional(raw.intraOpThreads, (v) => int(`${where}.intraOpThreads`, v, 1, 256)),
        maxBatchTokens: optional(raw.maxBatchTokens, (v) => int(`${where}.maxBatchTokens`, v, 1)),
        maxQueueDelayMs: optional(raw.maxQueueDelayMs, (v) =>
          num(`${where}.maxQueueDelayMs`, v, (n) => n >= 0, 'a number ≥ 0'),
        ),
        maxLength: optional(raw.maxLength, (v) => int(`${where}.maxLength`, v, 2)),
        truncation,
        maxPendingPairs: optional(raw.maxPendingPairs, (v) => int(`${where}.maxPendingPairs`, v, 1)),
        workerNice: optional(raw.workerNice, (v) => int(`${where}.workerNice`, v, 0, 19)),
      };
    }
    case 'router': {
      if (!Array.isArray(raw.tiers) || raw.tiers.length === 0)
        throw new ServerConfigError(`${where}.tiers must be a non-empty array of model names`);
      const routing = raw.routing;
      if (routing !== undefined && routing !== 'fixed' && routing !== 'budget' && routing !== 'cascade')
        throw new ServerConfigError(`${where}.routing must be fixed, budget or cascade`);
      return {
        ...common,
        type,
        tiers: raw.tiers.map((t, i) => str(`${where}.tiers[${i}]`, t)),
        routing,
        fixedTier: optional(raw.fixedTier, (v) => str(`${where}.fixedTier`, v)),
        threshold: optional(raw.threshold, (v) =>
          num(`${where}.threshold`, v, (n) => n >= 0 && n <= 1, 'a probability in [0, 1]'),
        ),
        headroom: optional(raw.headroom, (v) => num(`${where}.headroom`, v, (n) => n > 0 && n <= 1, 'in (0, 1]')),
        returnMarginMs: optional(raw.returnMarginMs, (v) =>
          num(`${where}.returnMarginMs`, v, (n) => n >= 0, 'a number ≥ 0'),
        ),
        maxQueuedPairs: optional(raw.maxQueuedPairs, (v) => int(`${where}.maxQueuedPairs`, v, 1)),
        backgroundFill: optional(raw.backgroundFill, (v) => {
          if (typeof v !== 'boolean') throw new ServerConfigError(`${where}.backgroundFill must be a boolean`);
          return v;
        }),
      };
    }
    case 'scorer': {
      const scorer = raw.scorer;
      const scorerLike = typeof scorer === 'function' || isScorer(scorer);
      if (!scorerLike) throw new ServerConfigError(`${where}.scorer must be a Scorer or an async factory of one`);
      if (raw.close !== undefined && typeof raw.close !== 'function')
        throw new ServerConfigError(`${where}.close must be a function`);
      return {
        ...common,
        type,
        scorer: scorer as ScorerModelConfig['scorer'],
        quality: optional(raw.quality, (v) => num(`${where}.quality`, v, () => true, 'a finite number')),
        inline: optional(raw.inline, (v) => v === true),
        tierName: optional(raw.tierName, (v) => str(`${where}.tierName`, v)),
        close: raw.close as ScorerModelConfig['close'],
      };
    }
  }
}

/** Checks that routers reference tier models that exist and are not routers themselves. */
function validateReferences(models: Readonly<Record<string, ModelConfig>>): void {
  for (const [name, model] of Object.entries(models)) {
    if (model.type !== 'router') continue;
    const seen = new Set<string>();
    for (const tier of model.tiers) {
      const target = models[tier];
      if (target === undefined)
        throw new ServerConfigError(
          `models.${name}.tiers names ${JSON.stringify(tier)}, which is not a configured model`,
        );
      if (target.type === 'router')
        throw new ServerConfigError(`models.${name}.tiers: ${JSON.stringify(tier)} is a router; tiers must be models`);
      if (seen.has(tier)) throw new ServerConfigError(`models.${name}.tiers names ${JSON.stringify(tier)} twice`);
      seen.add(tier);
    }
    const fastPaths = model.tiers.filter((t) => models[t].type === 'fastpath').length;
    if (fastPaths > 1) throw new ServerConfigError(`models.${name}.tiers: at most one fastpath tier per router`);
    if (model.fixedTier !== undefined && !model.tiers.includes(model.fixedTier))
      throw new ServerConfigError(`models.${name}.fixedTier must be one of its tiers`);
  }
}

/** An API key is sent in a header: printable, without surrounding whitespace (it could never match). */
function apiKey(value: unknown): string {
  const key = str('apiKey', value);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (key.trim() !== key || /[\u0000-\u001f\u007f]/.test(key))
    throw new ServerConfigError(
      'apiKey must be printable characters without leading or trailing whitespace (it is sent in an Authorization header)',
    );
  return key;
}

/**
 * Reads the API key of `serve --api-key-file`: once, at start. Surrounding whitespace (the trailing
 * newline an editor or `echo` leaves) is trimmed; an unreadable or empty file, or one holding more
 * than one line, is a ServerConfigError (start-up fails with exit code 1).
 */
export async function readApiKeyFile(file: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new ServerConfigError(`cannot read the API key file ${file}: ${(cause as Error).message}`, { cause });
  }
  const key = text.trim();
  if (key.length === 0) throw new ServerConfigError(`the API key file ${file} is empty`);
  if (/[\r\n]/.test(key))
    throw new ServerConfigError(`the API key file ${file} holds more than one line; it must hold the key alone`);
  return apiKey(key);
}

/** Validates and completes a config; throws ServerConfigError naming the first bad field. */
export function resolveServerConfig(input: ServerConfigInput = {}): ServerConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new ServerConfigError('the configuration must be a JSON object');
  checkKeys('config', input as Record<string, unknown>, TOP_KEYS);
  const baseDir = input.baseDir === undefined ? process.cwd() : resolve(str('baseDir', input.baseDir));

  const models: Record<string, ModelConfig> = {};
  const rawModels = input.models ?? {};
  if (!isRecord(rawModels)) throw new ServerConfigError('models must be an object { name: { type, ... } }');
  if (!Object.hasOwn(rawModels, DEFAULT_MODEL_NAME)) models[DEFAULT_MODEL_NAME] = { type: 'fastpath' };
  for (const [name, raw] of Object.entries(rawModels)) models[name] = validateModel(name, raw, baseDir);
  validateReferences(models);

  const defaultModel = input.defaultModel === undefined ? DEFAULT_MODEL_NAME : str('defaultModel', input.defaultModel);
  if (models[defaultModel] === undefined)
    throw new ServerConfigError(`defaultModel ${JSON.stringify(defaultModel)} is not a configured model`);

  const cacheIn = input.cache ?? {};
  if (!isRecord(cacheIn)) throw new ServerConfigError('cache must be an object');
  checkKeys('cache', cacheIn, CACHE_KEYS);
  const cache: CacheConfig = {
    enabled:
      cacheIn.enabled === undefined
        ? true
        : (() => {
            if (typeof cacheIn.enabled !== 'boolean') throw new ServerConfigError('cache.enabled must be a boolean');
            return cacheIn.enabled;
          })(),
    l1Mb: cacheIn.l1Mb === undefined ? DEFAULT_CACHE_MB : num('cache.l1Mb', cacheIn.l1Mb, (n) => n > 0, 'a number > 0'),
    redisUrl: optional(cacheIn.redisUrl, (v) => {
      const url = str('cache.redisUrl', v);
      if (!/^rediss?:\/\//.test(url)) throw new ServerConfigError('cache.redisUrl must be a redis:// or rediss:// URL');
      return url;
    }),
    ttlMs: optional(cacheIn.ttlMs, (v) => int('cache.ttlMs', v, 1)),
    redisTimeoutMs: optional(cacheIn.redisTimeoutMs, (v) => int('cache.redisTimeoutMs', v, 1)),
  };

  const limitsIn = input.limits ?? {};
  if (!isRecord(limitsIn)) throw new ServerConfigError('limits must be an object');
  checkKeys('limits', limitsIn, LIMIT_KEYS);
  const limits: LimitsConfig = {
    bodyBytes:
      limitsIn.bodyBytes === undefined ? DEFAULT_BODY_LIMIT_BYTES : int('limits.bodyBytes', limitsIn.bodyBytes, 1024),
    documentsPerRequest:
      limitsIn.documentsPerRequest === undefined
        ? DEFAULT_MAX_DOCUMENTS
        : int('limits.documentsPerRequest', limitsIn.documentsPerRequest, 1, 10_000),
    maxDocumentChars:
      limitsIn.maxDocumentChars === undefined
        ? DEFAULT_MAX_DOCUMENT_CHARS
        : int('limits.maxDocumentChars', limitsIn.maxDocumentChars, 1),
    maxQueryChars:
      limitsIn.maxQueryChars === undefined
        ? DEFAULT_MAX_QUERY_CHARS
        : int('limits.maxQueryChars', limitsIn.maxQueryChars, 1),
    maxInFlightPairs:
      limitsIn.maxInFlightPairs === undefined
        ? DEFAULT_MAX_IN_FLIGHT_PAIRS
        : int('limits.maxInFlightPairs', limitsIn.maxInFlightPairs, 1),
    maxBudgetMs:
      limitsIn.maxBudgetMs === undefined
        ? DEFAULT_MAX_BUDGET_MS
        : num('limits.maxBudgetMs', limitsIn.maxBudgetMs, (n) => n > 0, 'a number of ms > 0'),
  };

  const admissionIn = input.admission ?? {};
  if (!isRecord(admissionIn)) throw new ServerConfigError('admission must be an object');
  checkKeys('admission', admissionIn, ADMISSION_KEYS);
  const flag = (name: string, value: unknown): boolean => {
    if (value === undefined) return true;
    if (typeof value !== 'boolean') throw new ServerConfigError(`admission.${name} must be a boolean`);
    return value;
  };
  const admission: ServerConfig['admission'] = {
    maxConcurrentRequests:
      admissionIn.maxConcurrentRequests === undefined
        ? DEFAULT_MAX_CONCURRENT_REQUESTS
        : int('admission.maxConcurrentRequests', admissionIn.maxConcurrentRequests, 1),
    maxQueueMs:
      admissionIn.maxQueueMs === undefined
        ? DEFAULT_MAX_QUEUE_MS
        : num('admission.maxQueueMs', admissionIn.maxQueueMs, (n) => n >= 0, 'a number of ms ≥ 0'),
    requestStartHeader: flag('requestStartHeader', admissionIn.requestStartHeader),
    predictive: flag('predictive', admissionIn.predictive),
  };

  if (input.policy !== undefined && !isRecord(input.policy)) throw new ServerConfigError('policy must be an object');
  const logLevel: LogLevel = input.logLevel ?? 'info';
  if (!LOG_LEVELS.has(logLevel)) throw new ServerConfigError(`logLevel must be one of ${[...LOG_LEVELS].join(', ')}`);
  const host = input.host === undefined ? DEFAULT_HOST : str('host', input.host);
  return {
    admission,
    host,
    port: input.port === undefined ? DEFAULT_PORT : int('port', input.port, 0, 65_535),
    apiKey: input.apiKey === undefined || input.apiKey === '' ? undefined : apiKey(input.apiKey),
    defaultModel,
    models,
    policy: input.policy ?? {},
    cache,
    limits,
    budgetMs:
      input.budgetMs === undefined
        ? DEFAULT_BUDGET_MS
        : num('budgetMs', input.budgetMs, (n) => n > 0, 'a number of ms > 0'),
    responseMarginMs:
      input.responseMarginMs === undefined
        ? DEFAULT_RESPONSE_MARGIN_MS
        : num('responseMarginMs', input.responseMarginMs, (n) => n >= 0, 'a number ≥ 0'),
    processes: input.processes === undefined ? 1 : int('processes', input.processes, 1, 1024),
    logLevel,
    logPassages: input.logPassages === true,
    shutdownTimeoutMs:
      input.shutdownTimeoutMs === undefined
        ? DEFAULT_SHUTDOWN_TIMEOUT_MS
        : int('shutdownTimeoutMs', input.shutdownTimeoutMs, 0),
    drainDelayMs: input.drainDelayMs === undefined ? 0 : int('drainDelayMs', input.drainDelayMs, 0),
    baseDir,
  };
}

/** Most worker sessions per cross-encoder per process (each holds a copy of the model), as the library's default. */
export const MAX_DEFAULT_CROSS_ENCODER_WORKERS = 4;

/**
 * Cross-encoder threads per process when the config gives none: every HTTP process keeps one core
 * for its event loop (HTTP, JSON, the fast path); the other cores are split evenly between the
 * processes' cross-encoder pools, as worker threads (at most 4 sessions each, like the library's
 * default) times onnxruntime intra-op threads. So processes × (1 + workers × intra-op threads)
 * never exceeds the cores, except that every pool keeps one worker on hosts with fewer cores.
 */
export function defaultCrossEncoderThreads(
  processes: number,
  crossEncoders: number,
  cores = availableParallelism(),
): { readonly workers: number; readonly intraOpThreads: number } {
  const perPool = Math.floor(Math.max(0, cores - processes) / Math.max(1, processes * crossEncoders));
  const workers = Math.max(1, Math.min(MAX_DEFAULT_CROSS_ENCODER_WORKERS, perPool));
  return { workers, intraOpThreads: Math.max(1, Math.floor(perPool / workers)) };
}

/** Reads a JSON config file (comments are not JSON: refused with the parser's position). */
export async function readConfigFile(file: string): Promise<ServerConfigInput> {
  const { readFile } = await import('node:fs/promises');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new ServerConfigError(`cannot read config file ${file}: ${(cause as Error).message}`, { cause });
  }
  if (/\.ya?ml$/i.test(file))
    throw new ServerConfigError(`${file}: YAML configs are not supported, write the same keys as JSON`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new ServerConfigError(`${file} is not valid JSON: ${(cause as Error).message}`, { cause });
  }
  if (!isRecord(parsed)) throw new ServerConfigError(`${file} must hold a JSON object`);
  const { dirname } = await import('node:path');
  // Relative model paths in a file are relative to the file, not to wherever the server was started.
  return {
    ...(parsed as ServerConfigInput),
    baseDir: (parsed.baseDir as string | undefined) ?? dirname(resolve(file)),
  };
}

/** The environment variables the server reads, by config field. */
export const ENVIRONMENT_VARIABLES = {
  host: 'RELEVANCE_GATE_HOST',
  port: 'RELEVANCE_GATE_PORT',
  apiKey: 'RELEVANCE_GATE_API_KEY',
  config: 'RELEVANCE_GATE_CONFIG',
  processes: 'RELEVANCE_GATE_PROCESSES',
  redisUrl: 'RELEVANCE_GATE_REDIS_URL',
  logLevel: 'RELEVANCE_GATE_LOG_LEVEL',
  budgetMs: 'RELEVANCE_GATE_BUDGET_MS',
} as const;

function envInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new ServerConfigError(`${name} must be a number, got ${JSON.stringify(raw)}`);
  return n;
}

/** The config fields set by environment variables (undefined where unset). */
export function configFromEnvironment(env: NodeJS.ProcessEnv = process.env): ServerConfigInput {
  const out: Record<string, unknown> = {};
  const v = ENVIRONMENT_VARIABLES;
  if (env[v.host]) out.host = env[v.host];
  const port = envInt(env, v.port);
  if (port !== undefined) out.port = port;
  if (env[v.apiKey]) out.apiKey = env[v.apiKey];
  const processes = envInt(env, v.processes);
  if (processes !== undefined) out.processes = processes;
  if (env[v.redisUrl]) out.cache = { redisUrl: env[v.redisUrl] };
  if (env[v.logLevel]) out.logLevel = env[v.logLevel];
  const budget = envInt(env, v.budgetMs);
  if (budget !== undefined) out.budgetMs = budget;
  return out as ServerConfigInput;
}

/** Layers configs: later ones win field by field (admission, cache and limits merged one level deep, models by name). */
export function mergeConfigInputs(...layers: readonly ServerConfigInput[]): ServerConfigInput {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      if (
        (key === 'cache' || key === 'limits' || key === 'models' || key === 'policy' || key === 'admission') &&
        isRecord(value)
      ) {
        out[key] = { ...((out[key] as Record<string, unknown> | undefined) ?? {}), ...value };
      } else out[key] = value;
    }
  }
  return out as ServerConfigInput;
}
