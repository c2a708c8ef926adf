/**
 * Options of createScoreCache (the Redis L2's included): their defaults and validation. A bad
 * option is an InvalidArgumentError at creation, naming the option; unknown keys are refused, so a
 * misspelt option (e.g. `ttl` for `ttlMs`) never silently means "no limit". The parts of the cache
 * receive the resolved values.
 */
import type { KeyObject } from 'node:crypto';
import { InvalidArgumentError } from '../errors.js';
import { RELEVANT } from '../signals.js';
import { rejectUnknownKeys } from '../util/option-keys.js';
import { invalidArgument, nonNegativeNumber, positiveLimit, positiveNumber } from '../util/validate-options.js';
import {
  type ApproximateCacheOptions,
  type ApproximateSettings,
  resolveApproximateOptions,
} from './approximate/approximate-reuse.js';
import { compileQueryNormalizer, type CompiledNormalizer, type QueryNormalization } from './normalize-query.js';
import type { RedisClusterNode, RedisL2Options, RedisL2Settings } from './redis-l2.js';
import { signingKeyObject } from './signing.js';

export interface ScoreCacheOptions {
  /** Upper bound of the L1's bytes (its entries' keys and packed values plus slot and index overhead, kept off the V8 heap); 4096 to 2^39 (512 GiB). */
  readonly maxBytes: number;
  /**
   * Maximum age of a score (since it was scored) before it is treated as a miss; default: none.
   * With `redis`, no entry (L1 copies included) outlives the L2 TTL either.
   */
  readonly ttlMs?: number;
  /** How queries are normalised for keys; default NFC + trim + collapsed whitespace, case kept. */
  readonly normalizeQuery?: QueryNormalization;
  /** Shared L2. Omit for L1 only. */
  readonly redis?: RedisL2Options;
  /**
   * Snapshot file to warm-start from, read synchronously at creation. A missing, corrupt or
   * foreign file never throws here: the cache starts empty and `warmStartResult` holds the
   * SnapshotError.
   */
  readonly fromSnapshot?: string;
  /** Clock for scoredAt and TTL (Date.now() by default); tests inject a fake one. */
  readonly clock?: () => number;
  /**
   * A result is cached (and an L2/snapshot entry trusted) only if it carries at least one of these
   * signals; [] accepts any. Default [RELEVANT] (the gate's relevance signal): an
   * entry without one would fail its pair closed on every later call.
   */
  readonly requiredSignals?: readonly string[];
  /**
   * How far in the future an entry's scoredAt may be (clock skew between instances sharing Redis)
   * before the entry is invalid. Default 1000 ms.
   */
  readonly maxClockSkewMs?: number;
  /**
   * Approximate query cache (off when absent): pairs neither L1 nor L2 holds are served from a
   * near-identical earlier query's scores (cosine of the query embeddings ≥ `threshold`), for
   * requests that take part (the gate's do). docs/cache.md, *Approximate query cache*.
   */
  readonly approximate?: ApproximateCacheOptions;
}

/** Default of ScoreCacheOptions.requiredSignals. */
export const DEFAULT_REQUIRED_SIGNALS: readonly string[] = Object.freeze([RELEVANT]);
export const DEFAULT_MAX_CLOCK_SKEW_MS = 1000;
/** Smallest maxBytes accepted. */
export const MIN_MAX_BYTES = 4096;
/**
 * Largest maxBytes accepted (512 GiB): a shard (1 of at most 1024) then stays within 512 MiB, so a
 * key's byte length fits its slot's 29 bits and an arena one typed array.
 */
export const MAX_MAX_BYTES = 2 ** 39;

/** Defaults of RedisL2Options.prefix and (without the cache's ttlMs) RedisL2Options.ttlMs; the others are inline. */
export const DEFAULT_L2_PREFIX = 'rg:score:';
export const DEFAULT_L2_TTL_MS = 24 * 3600 * 1000;
/** Default of RedisL2Options.leaseMs. */
export const DEFAULT_L2_LEASE_MS = 1000;

// Records over the option interfaces: adding an option without listing it here fails to compile.
const OPTION_KEYS: Readonly<Record<keyof ScoreCacheOptions, true>> = {
  maxBytes: true,
  ttlMs: true,
  normalizeQuery: true,
  redis: true,
  fromSnapshot: true,
  clock: true,
  requiredSignals: true,
  maxClockSkewMs: true,
  approximate: true,
};
const REDIS_OPTION_KEYS: Readonly<Record<keyof RedisL2Options, true>> = {
  url: true,
  prefix: true,
  ttlMs: true,
  timeoutMs: true,
  writeTimeoutMs: true,
  failureThreshold: true,
  cooldownMs: true,
  reconnectMaxDelayMs: true,
  connectTimeoutMs: true,
  maxPendingWrites: true,
  signingKey: true,
  cluster: true,
  username: true,
  password: true,
  tls: true,
  leaseMs: true,
};
const KEYS: ReadonlySet<string> = new Set(Object.keys(OPTION_KEYS));
const REDIS_KEYS: ReadonlySet<string> = new Set(Object.keys(REDIS_OPTION_KEYS));

/** ScoreCacheOptions with defaults applied, validated. */
export interface ResolvedScoreCacheOptions {
  /** maxBytes, rounded down. */
  readonly maxBytes: number;
  /** Age at which an entry expires: ttlMs, capped by the L2 TTL when Redis is configured. */
  readonly maxAgeMs: number | undefined;
  readonly clock: () => number;
  /** A frozen copy. */
  readonly requiredSignals: readonly string[];
  readonly maxClockSkewMs: number;
  readonly normalizer: CompiledNormalizer;
  readonly redis: RedisL2Settings | undefined;
  readonly fromSnapshot: string | undefined;
  readonly approximate: ApproximateSettings | undefined;
}

export function resolveScoreCacheOptions(options: ScoreCacheOptions): ResolvedScoreCacheOptions {
  if (options === null || typeof options !== 'object')
    throw new InvalidArgumentError('createScoreCache needs an options object');
  rejectUnknownKeys(options, KEYS, 'createScoreCache');
  const { maxBytes, ttlMs, clock, fromSnapshot } = options;
  if (typeof maxBytes !== 'number' || !(maxBytes >= MIN_MAX_BYTES && maxBytes <= MAX_MAX_BYTES))
    throw invalidArgument('maxBytes', `a number from ${MIN_MAX_BYTES} to ${MAX_MAX_BYTES} (512 GiB)`, maxBytes);
  if (ttlMs !== undefined) positiveLimit('ttlMs', ttlMs);
  if (clock !== undefined && typeof clock !== 'function') throw invalidArgument('clock', 'a function', clock);
  const required: unknown = options.requiredSignals ?? DEFAULT_REQUIRED_SIGNALS;
  if (!Array.isArray(required) || !required.every((x) => typeof x === 'string' && x.length > 0))
    throw invalidArgument('requiredSignals', 'an array of non-empty strings', required);
  const maxClockSkewMs = nonNegativeNumber('maxClockSkewMs', options.maxClockSkewMs ?? DEFAULT_MAX_CLOCK_SKEW_MS);
  if (fromSnapshot !== undefined && typeof fromSnapshot !== 'string')
    throw invalidArgument('fromSnapshot', 'a file path (string)', fromSnapshot);
  const normalizer = compileQueryNormalizer(options.normalizeQuery);
  const redis = options.redis === undefined ? undefined : resolveRedisOptions(options.redis, ttlMs);
  return {
    maxBytes: Math.floor(maxBytes),
    // An entry read from Redis must not outlive its Redis copy in L1 (nor one scored here its L2 copy).
    maxAgeMs: redis === undefined ? ttlMs : Math.min(ttlMs ?? Number.POSITIVE_INFINITY, redis.ttlMs),
    clock: clock ?? Date.now,
    requiredSignals: Object.freeze([...(required as string[])]),
    maxClockSkewMs,
    normalizer,
    redis,
    fromSnapshot,
    approximate: options.approximate === undefined ? undefined : resolveApproximateOptions(options.approximate),
  };
}

/** RedisL2Options with defaults applied, validated; `cacheTtlMs` is the default of its ttlMs. */
export function resolveRedisOptions(options: RedisL2Options, cacheTtlMs: number | undefined): RedisL2Settings {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw invalidArgument('redis', 'an object { url, ... }', options);
  rejectUnknownKeys(options, REDIS_KEYS, 'redis');
  const { url, cluster, username, password, tls } = options;
  if (url !== undefined && cluster !== undefined)
    throw new InvalidArgumentError('redis takes url (one server) or cluster (Redis Cluster nodes), not both');
  if (cluster === undefined && (typeof url !== 'string' || url.length === 0))
    throw new InvalidArgumentError(
      'redis.url must be a non-empty string (or give redis.cluster, the start-up nodes of a Redis Cluster)',
    );
  if (url !== undefined && (username !== undefined || password !== undefined || tls !== undefined))
    throw new InvalidArgumentError(
      'redis.username, redis.password and redis.tls go with redis.cluster; put them in redis.url (redis://user:pass@host, rediss://)',
    );
  if (username !== undefined && (typeof username !== 'string' || username.length === 0))
    throw invalidArgument('redis.username', 'a non-empty string', username);
  if (password !== undefined && typeof password !== 'string')
    throw new InvalidArgumentError('redis.password must be a string');
  if (tls !== undefined && typeof tls !== 'boolean') throw invalidArgument('redis.tls', 'a boolean', tls);
  const signingKey: KeyObject | undefined =
    options.signingKey === undefined ? undefined : signingKeyObject(options.signingKey);
  return {
    url,
    cluster: cluster === undefined ? undefined : clusterNodes(cluster),
    username,
    password,
    tls: tls ?? false,
    prefix: options.prefix ?? DEFAULT_L2_PREFIX,
    signingKey,
    ttlMs: positiveInt('redis.ttlMs', options.ttlMs ?? cacheTtlMs ?? DEFAULT_L2_TTL_MS),
    timeoutMs: positiveInt('redis.timeoutMs', options.timeoutMs ?? 5),
    writeTimeoutMs: positiveInt('redis.writeTimeoutMs', options.writeTimeoutMs ?? 1000),
    maxPendingWrites: positiveInt('redis.maxPendingWrites', options.maxPendingWrites ?? 64),
    reconnectMaxDelayMs: positiveInt('redis.reconnectMaxDelayMs', options.reconnectMaxDelayMs ?? 1000),
    failureThreshold: positiveInt('redis.failureThreshold', options.failureThreshold ?? 3),
    cooldownMs: positiveInt('redis.cooldownMs', options.cooldownMs ?? 1000),
    connectTimeoutMs: positiveInt('redis.connectTimeoutMs', options.connectTimeoutMs ?? 1000),
    leaseMs: Math.ceil(nonNegativeNumber('redis.leaseMs', options.leaseMs ?? DEFAULT_L2_LEASE_MS)),
  };
}

/** Validated copies of Redis Cluster start-up nodes. */
function clusterNodes(value: unknown): RedisClusterNode[] {
  if (!Array.isArray(value) || value.length === 0)
    throw invalidArgument('redis.cluster', 'a non-empty array of { host, port }', value);
  return value.map((node: unknown, i) => {
    const { host, port } = (node ?? {}) as { host?: unknown; port?: unknown };
    if (
      node === null ||
      typeof node !== 'object' ||
      typeof host !== 'string' ||
      host.length === 0 ||
      typeof port !== 'number' ||
      !Number.isInteger(port) ||
      port < 1 ||
      port > 65535
    )
      throw invalidArgument(`redis.cluster[${i}]`, '{ host: a non-empty string, port: an integer 1..65535 }', node);
    return { host, port };
  });
}

/** A finite number > 0, rounded up (timers and counts take whole numbers). */
function positiveInt(name: string, value: number): number {
  return Math.ceil(positiveNumber(name, value));
}
