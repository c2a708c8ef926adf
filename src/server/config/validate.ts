/**
 * resolveServerConfig: validates a config assembled from a JSON file, environment variables and
 * flags and fills in the defaults. Everything is checked here, before a socket opens or a model
 * loads, so a typo in a config file is a clear start-up error naming the field instead of a surprise
 * at the first request.
 */
import { resolve } from 'node:path';
import {
  booleanValue,
  integerInRange,
  nonEmptyString,
  nonNegativeInteger,
  nonNegativeNumber,
  oneOf,
  positiveInteger,
  positiveNumber,
} from '../../util/validate-options.js';
import { ServerConfigError } from '../errors.js';
import {
  DEFAULT_BODY_LIMIT_BYTES,
  DEFAULT_BUDGET_MS,
  DEFAULT_CACHE_MB,
  DEFAULT_HOST,
  DEFAULT_MAX_BUDGET_MS,
  DEFAULT_MAX_CONCURRENT_REQUESTS,
  DEFAULT_MAX_DOCUMENT_CHARS,
  DEFAULT_MAX_DOCUMENTS,
  DEFAULT_MAX_IN_FLIGHT_PAIRS,
  DEFAULT_MAX_QUERY_CHARS,
  DEFAULT_MAX_QUEUE_MS,
  DEFAULT_MODEL_NAME,
  DEFAULT_PORT,
  DEFAULT_RESPONSE_MARGIN_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
} from './defaults.js';
import { DEFAULT_HEAP_HEADROOM_MB } from '../../util/heap-headroom.js';
import { resolveDecisionLog, resolveInspector, resolveShadows } from './decision-log.js';
import { configError, configObject, configPath, isRecord, optional, rejectUnknownConfigKeys } from './fields.js';
import type {
  ApproximateCacheConfig,
  CacheConfig,
  LimitsConfig,
  LogLevel,
  ServerConfig,
  ServerConfigInput,
} from './types.js';
import { validateModels } from './validate-models.js';

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
  'heapHeadroomMb',
  'processes',
  'logLevel',
  'logPassages',
  'shutdownTimeoutMs',
  'drainDelayMs',
  'baseDir',
  'decisionLog',
  'inspector',
  'shadows',
]);
const ADMISSION_KEYS: ReadonlySet<string> = new Set([
  'maxConcurrentRequests',
  'maxQueueMs',
  'requestStartHeader',
  'predictive',
]);
const CACHE_KEYS: ReadonlySet<string> = new Set([
  'enabled',
  'l1Mb',
  'redisUrl',
  'redisCluster',
  'ttlMs',
  'redisTimeoutMs',
  'redisLeaseMs',
  'approximate',
]);
const APPROXIMATE_KEYS: ReadonlySet<string> = new Set(['embeddingModel', 'threshold']);
const LIMIT_KEYS: ReadonlySet<string> = new Set([
  'bodyBytes',
  'documentsPerRequest',
  'maxDocumentChars',
  'maxQueryChars',
  'maxInFlightPairs',
  'maxBudgetMs',
]);
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `check(value)`, or `fallback` for an absent field. */
function orDefault<T>(value: unknown, fallback: T, check: (v: unknown) => T): T {
  return value === undefined ? fallback : check(value);
}

/** An API key is sent in a header: printable, without surrounding whitespace (it could never match). */
export function validateApiKey(value: unknown): string {
  const key = nonEmptyString('apiKey', value, configError);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (key.trim() !== key || /[\u0000-\u001f\u007f]/.test(key))
    throw new ServerConfigError(
      'apiKey must be printable characters without leading or trailing whitespace (it is sent in an Authorization header)',
    );
  return key;
}

function resolveApproximate(input: unknown, baseDir: string): ApproximateCacheConfig {
  const approximate = configObject('cache.approximate', input);
  rejectUnknownConfigKeys('cache.approximate', approximate, APPROXIMATE_KEYS);
  return {
    embeddingModel: configPath(baseDir, 'cache.approximate.embeddingModel', approximate.embeddingModel),
    threshold: optional(approximate.threshold, (v) => {
      if (typeof v !== 'number' || !(v > 0 && v <= 1))
        throw configError('cache.approximate.threshold', 'a cosine in (0, 1]', v);
      return v;
    }),
  };
}

function resolveCache(input: unknown, baseDir: string): CacheConfig {
  const cache = configObject('cache', input);
  rejectUnknownConfigKeys('cache', cache, CACHE_KEYS);
  return {
    enabled: orDefault(cache.enabled, true, (v) => booleanValue('cache.enabled', v, configError)),
    l1Mb: orDefault(cache.l1Mb, DEFAULT_CACHE_MB, (v) => positiveNumber('cache.l1Mb', v, configError)),
    redisUrl: optional(cache.redisUrl, (v) => {
      const url = nonEmptyString('cache.redisUrl', v, configError);
      if (!/^rediss?:\/\//.test(url)) throw configError('cache.redisUrl', 'a redis:// or rediss:// URL', url);
      return url;
    }),
    redisCluster: optional(cache.redisCluster, (v) => {
      if (cache.redisUrl !== undefined)
        throw new ServerConfigError('cache.redisUrl and cache.redisCluster exclude each other: give one');
      if (!Array.isArray(v) || v.length === 0 || !v.every((n) => typeof n === 'string' && /^[^\s:]+:\d{1,5}$/.test(n)))
        throw configError('cache.redisCluster', 'a non-empty list of "host:port" start-up nodes', v);
      return v as string[];
    }),
    ttlMs: optional(cache.ttlMs, (v) => positiveInteger('cache.ttlMs', v, configError)),
    redisTimeoutMs: optional(cache.redisTimeoutMs, (v) => positiveInteger('cache.redisTimeoutMs', v, configError)),
    redisLeaseMs: optional(cache.redisLeaseMs, (v) => integerInRange('cache.redisLeaseMs', v, 0, 600_000, configError)),
    approximate: optional(cache.approximate, (v) => resolveApproximate(v, baseDir)),
  };
}

function resolveLimits(input: unknown): LimitsConfig {
  const limits = configObject('limits', input);
  rejectUnknownConfigKeys('limits', limits, LIMIT_KEYS);
  return {
    bodyBytes: orDefault(limits.bodyBytes, DEFAULT_BODY_LIMIT_BYTES, (v) =>
      integerInRange('limits.bodyBytes', v, 1024, Number.MAX_SAFE_INTEGER, configError),
    ),
    documentsPerRequest: orDefault(limits.documentsPerRequest, DEFAULT_MAX_DOCUMENTS, (v) =>
      integerInRange('limits.documentsPerRequest', v, 1, 10_000, configError),
    ),
    maxDocumentChars: orDefault(limits.maxDocumentChars, DEFAULT_MAX_DOCUMENT_CHARS, (v) =>
      positiveInteger('limits.maxDocumentChars', v, configError),
    ),
    maxQueryChars: orDefault(limits.maxQueryChars, DEFAULT_MAX_QUERY_CHARS, (v) =>
      positiveInteger('limits.maxQueryChars', v, configError),
    ),
    maxInFlightPairs: orDefault(limits.maxInFlightPairs, DEFAULT_MAX_IN_FLIGHT_PAIRS, (v) =>
      positiveInteger('limits.maxInFlightPairs', v, configError),
    ),
    maxBudgetMs: orDefault(limits.maxBudgetMs, DEFAULT_MAX_BUDGET_MS, (v) =>
      positiveNumber('limits.maxBudgetMs', v, configError),
    ),
  };
}

function resolveAdmission(input: unknown): ServerConfig['admission'] {
  const admission = configObject('admission', input);
  rejectUnknownConfigKeys('admission', admission, ADMISSION_KEYS);
  return {
    maxConcurrentRequests: orDefault(admission.maxConcurrentRequests, DEFAULT_MAX_CONCURRENT_REQUESTS, (v) =>
      positiveInteger('admission.maxConcurrentRequests', v, configError),
    ),
    maxQueueMs: orDefault(admission.maxQueueMs, DEFAULT_MAX_QUEUE_MS, (v) =>
      nonNegativeNumber('admission.maxQueueMs', v, configError),
    ),
    requestStartHeader: orDefault(admission.requestStartHeader, true, (v) =>
      booleanValue('admission.requestStartHeader', v, configError),
    ),
    predictive: orDefault(admission.predictive, true, (v) => booleanValue('admission.predictive', v, configError)),
  };
}

/** Validates and completes a config; throws ServerConfigError naming the first bad field. */
export function resolveServerConfig(input: ServerConfigInput = {}): ServerConfig {
  if (!isRecord(input)) throw new ServerConfigError('the configuration must be a JSON object');
  rejectUnknownConfigKeys('config', input, TOP_KEYS);
  const baseDir =
    input.baseDir === undefined ? process.cwd() : resolve(nonEmptyString('baseDir', input.baseDir, configError));

  const models = validateModels(input.models ?? {}, baseDir);
  const defaultModel = orDefault(input.defaultModel, DEFAULT_MODEL_NAME, (v) =>
    nonEmptyString('defaultModel', v, configError),
  );
  if (models[defaultModel] === undefined)
    throw new ServerConfigError(`defaultModel ${JSON.stringify(defaultModel)} is not a configured model`);

  const cache = resolveCache(input.cache ?? {}, baseDir);
  const limits = resolveLimits(input.limits ?? {});
  const admission = resolveAdmission(input.admission ?? {});

  if (input.policy !== undefined) configObject('policy', input.policy);
  const logLevel = orDefault<LogLevel>(input.logLevel ?? undefined, 'info', (v) =>
    oneOf('logLevel', v, LOG_LEVELS, configError),
  );
  const host = orDefault(input.host, DEFAULT_HOST, (v) => nonEmptyString('host', v, configError));
  const decisionLog = resolveDecisionLog(input.decisionLog, baseDir);
  const inspector = resolveInspector(input.inspector);
  return {
    admission,
    host,
    port: orDefault(input.port, DEFAULT_PORT, (v) => integerInRange('port', v, 0, 65_535, configError)),
    apiKey: input.apiKey === undefined || input.apiKey === '' ? undefined : validateApiKey(input.apiKey),
    defaultModel,
    models,
    policy: input.policy ?? {},
    cache,
    limits,
    budgetMs: orDefault(input.budgetMs, DEFAULT_BUDGET_MS, (v) => positiveNumber('budgetMs', v, configError)),
    responseMarginMs: orDefault(input.responseMarginMs, DEFAULT_RESPONSE_MARGIN_MS, (v) =>
      nonNegativeNumber('responseMarginMs', v, configError),
    ),
    heapHeadroomMb: orDefault(input.heapHeadroomMb, DEFAULT_HEAP_HEADROOM_MB, (v) =>
      nonNegativeNumber('heapHeadroomMb', v, configError),
    ),
    processes: orDefault(input.processes, 1, (v) => integerInRange('processes', v, 1, 1024, configError)),
    logLevel,
    logPassages: input.logPassages === true,
    shutdownTimeoutMs: orDefault(input.shutdownTimeoutMs, DEFAULT_SHUTDOWN_TIMEOUT_MS, (v) =>
      nonNegativeInteger('shutdownTimeoutMs', v, configError),
    ),
    drainDelayMs: orDefault(input.drainDelayMs, 0, (v) => nonNegativeInteger('drainDelayMs', v, configError)),
    baseDir,
    decisionLog,
    inspector,
    shadows: resolveShadows(input.shadows, models, decisionLog !== undefined || inspector),
  };
}
