/**
 * The score cache: an in-process LRU (L1, bounded by estimated bytes), an optional shared Redis
 * (L2, best effort), single-flight for concurrent misses, and snapshot files for warm starts.
 * It implements PairScoreCache, the port the gate calls. See docs/cache.md.
 */
import { RELEVANT } from '../signals.js';
import { LRUCache } from 'lru-cache';
import { AbortedError, DisposedError, InvalidArgumentError } from '../errors.js';
import type { Passage, ScoreOptions, ScorerPairResult } from '../types.js';
import type { CacheRequest, CacheResolution, PairScoreCache, ScoreMisses } from './cache-port.js';
import { L1Store } from './l1-store.js';
import { estimateEntryBytes, hasAnySignal, toCacheableResult, type CacheableResult, type CacheEntry } from './entry.js';
import { ScoreMissesContractError, SnapshotError } from './errors.js';
import { KEY_SCHEMA_VERSION, pairKey, scopeHash } from './keys.js';
import { compileQueryNormalizer, type CompiledNormalizer, type QueryNormalization } from './normalize-query.js';
import {
  emptyL2Latency,
  RedisL2,
  zeroL2Counters,
  type L2Counters,
  type L2LatencyHistogram,
  type RedisL2Options,
} from './redis-l2.js';
import { SingleFlight, type Flight, type FlightOutcome } from './single-flight.js';
import {
  decodeSnapshot,
  encodeSnapshot,
  readSnapshotFile,
  readSnapshotFileSync,
  writeSnapshotFile,
  type SnapshotEntry,
} from './snapshot.js';

export interface ScoreCacheOptions {
  /** Upper bound of the L1's estimated heap bytes (keys, values and LRU bookkeeping); ≥ 4096. */
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
}

/** Default of ScoreCacheOptions.requiredSignals. */
export const DEFAULT_REQUIRED_SIGNALS: readonly string[] = Object.freeze([RELEVANT]);
export const DEFAULT_MAX_CLOCK_SKEW_MS = 1000;

export interface ScoreCacheStats extends L2Counters {
  /** Pairs answered without this call scoring them: l1Hits + l2Hits + inflightShared (+ duplicates of those). */
  hits: number;
  /** Pairs that had to be scored by the call that asked for them (including follower re-scores). */
  misses: number;
  l1Hits: number;
  l2Hits: number;
  /** Pairs taken from a concurrent call's scoring (single-flight followers). */
  inflightShared: number;
  /** Followers whose leader failed, was aborted or got null, and who scored the pair themselves. */
  followerRescores: number;
  /** L1 entries dropped to stay within maxBytes. */
  evictions: number;
  /** Entries found older than ttlMs (dropped on sight). */
  expired: number;
  /** Entries written into L1 (fresh scores, L2 promotions, snapshot loads). */
  stores: number;
  /** Scorer results not cached because they were null. */
  nullResults: number;
  /** Scorer results not cached because they were malformed (non-finite numbers, wrong shape). */
  uncacheable: number;
  /** Current estimated L1 bytes; always ≤ maxBytes. */
  bytes: number;
  maxBytes: number;
  entries: number;
  /** Pairs being scored right now with followers able to join. */
  inflight: number;
  l2Enabled: boolean;
  l2Connected: boolean;
  l2Breaker: 'closed' | 'open' | 'half-open' | 'disabled';
  /** Whether L2 values are signed and verified (`redis.signingKey`). */
  l2Signed: boolean;
  /** How long calls waited for their L2 read (one MGET per call), as a histogram. */
  l2ReadLatency: L2LatencyHistogram;
}

export interface WarmStartReport {
  readonly path: string;
  readonly createdAt: number;
  readonly loaded: number;
  readonly skippedExpired: number;
  /** Least recently used entries left out because the snapshot holds more than maxBytes. */
  readonly skippedOverBudget: number;
  /** Entries already in L1 with a newer score. */
  readonly skippedNewer: number;
  /** Entries refused: scored in the future, or without any of the required signals. */
  readonly skippedInvalid: number;
}

export interface SnapshotReport {
  readonly path: string;
  readonly entries: number;
  readonly fileBytes: number;
}

export interface ScoreCache extends PairScoreCache {
  /**
   * Synchronous L1-only probe: the cached result per passage (undefined where L1 has none).
   * Never scores, never asks Redis, does not count hits or misses; refreshes LRU recency of hits.
   */
  lookup(request: CacheRequest): Array<CacheableResult | undefined>;
  stats(): ScoreCacheStats;
  /** Writes L1 (unexpired entries, LRU order) to `path` atomically. Throws SnapshotError('io') on write failure. */
  snapshot(path: string): Promise<SnapshotReport>;
  /**
   * Loads a snapshot into L1. Throws SnapshotError when the file is missing, corrupt, truncated,
   * foreign or of another version; the file is validated completely before anything is loaded,
   * so a refused snapshot leaves the cache exactly as it was (a new cache stays empty).
   */
  warmStart(path: string): Promise<WarmStartReport>;
  /** Outcome of the `fromSnapshot` option: a report, the refusal, or undefined when not asked. */
  readonly warmStartResult: WarmStartReport | SnapshotError | undefined;
  /** Resolves true once Redis is connected (immediately false without L2 or after timeoutMs). */
  ready(timeoutMs?: number): Promise<boolean>;
  /** Waits until L2 writes in flight have been acknowledged or have failed. */
  flush(): Promise<void>;
  /** Empties L1 (not Redis: other instances share it; entries there expire by TTL). */
  clear(): void;
  /** Flushes L2 writes and disconnects. Later resolve() calls throw DisposedError. */
  close(): Promise<void>;
}

interface PendingPair {
  readonly index: number;
  readonly key: string;
  /** Undefined for a re-score that could not register (another call leads the pair again). */
  readonly flight: Flight | undefined;
}

/** The counters this module increments itself (the rest of ScoreCacheStats is derived or comes from L2). */
type Counters = Pick<
  ScoreCacheStats,
  | 'hits'
  | 'misses'
  | 'l1Hits'
  | 'l2Hits'
  | 'inflightShared'
  | 'followerRescores'
  | 'evictions'
  | 'expired'
  | 'stores'
  | 'nullResults'
  | 'uncacheable'
>;

const MIN_MAX_BYTES = 4096;
const SCOPE_MEMO_SIZE = 1024;
const SCOPE_MEMO_MAX_CHARS = 1024;

export function createScoreCache(options: ScoreCacheOptions): ScoreCache {
  return new ScoreCacheImpl(options);
}

class ScoreCacheImpl implements ScoreCache {
  warmStartResult: WarmStartReport | SnapshotError | undefined;
  private readonly maxBytes: number;
  /** Age at which an entry expires: ttlMs, capped by the L2 TTL when Redis is configured. */
  private readonly maxAgeMs: number | undefined;
  private readonly clock: () => number;
  private readonly requiredSignals: readonly string[];
  private readonly maxClockSkewMs: number;
  private readonly normalizer: CompiledNormalizer;
  private readonly scopeTag: string;
  private readonly lru: L1Store<CacheEntry>;
  private readonly flights = new SingleFlight();
  /** Raw (scorer id, query) → scope hash, for the most recent SCOPE_MEMO_SIZE distinct pairs. */
  private readonly scopes = new LRUCache<string, string>({ max: SCOPE_MEMO_SIZE });
  private readonly l2: RedisL2 | undefined;
  private readonly counters: Counters = {
    hits: 0,
    misses: 0,
    l1Hits: 0,
    l2Hits: 0,
    inflightShared: 0,
    followerRescores: 0,
    evictions: 0,
    expired: 0,
    stores: 0,
    nullResults: 0,
    uncacheable: 0,
  };
  private closed = false;

  constructor(options: ScoreCacheOptions) {
    if (options === null || typeof options !== 'object')
      throw new InvalidArgumentError('createScoreCache needs an options object');
    const { maxBytes, ttlMs } = options;
    if (typeof maxBytes !== 'number' || !Number.isFinite(maxBytes) || maxBytes < MIN_MAX_BYTES) {
      throw new InvalidArgumentError(`maxBytes must be a finite number ≥ ${MIN_MAX_BYTES}, got ${String(maxBytes)}`);
    }
    if (ttlMs !== undefined && (typeof ttlMs !== 'number' || !(ttlMs > 0))) {
      throw new InvalidArgumentError(`ttlMs must be a positive number of milliseconds, got ${String(ttlMs)}`);
    }
    if (options.clock !== undefined && typeof options.clock !== 'function')
      throw new InvalidArgumentError('clock must be a function');
    const required = options.requiredSignals ?? DEFAULT_REQUIRED_SIGNALS;
    if (!Array.isArray(required) || !required.every((x) => typeof x === 'string' && x.length > 0))
      throw new InvalidArgumentError('requiredSignals must be an array of non-empty strings');
    const skew = options.maxClockSkewMs ?? DEFAULT_MAX_CLOCK_SKEW_MS;
    if (typeof skew !== 'number' || !(skew >= 0) || !Number.isFinite(skew))
      throw new InvalidArgumentError(`maxClockSkewMs must be a finite number >= 0, got ${String(skew)}`);
    this.requiredSignals = Object.freeze([...required]);
    this.maxClockSkewMs = skew;
    this.maxBytes = Math.floor(maxBytes);
    this.clock = options.clock ?? Date.now;
    this.normalizer = compileQueryNormalizer(options.normalizeQuery);
    this.scopeTag = `k${KEY_SCHEMA_VERSION}|${this.normalizer.tag}`;
    this.lru = new L1Store<CacheEntry>({
      maxBytes: this.maxBytes,
      sizeOf: (entry, key) => estimateEntryBytes(key, entry),
      onEvict: () => {
        this.counters.evictions++;
      },
    });
    this.l2 = options.redis === undefined ? undefined : new RedisL2(options.redis, ttlMs);
    // An entry read from Redis must not outlive its Redis copy in L1 (nor one scored here its L2 copy).
    this.maxAgeMs = this.l2 === undefined ? ttlMs : Math.min(ttlMs ?? Number.POSITIVE_INFINITY, this.l2.ttlMs);
    if (options.fromSnapshot !== undefined) {
      try {
        this.warmStartResult = this.load(
          decodeSnapshot(readSnapshotFileSync(options.fromSnapshot), options.fromSnapshot),
          options.fromSnapshot,
        );
      } catch (error) {
        if (!(error instanceof SnapshotError)) throw error;
        this.warmStartResult = error;
      }
    }
  }

  async resolve(
    request: CacheRequest,
    scoreMisses: ScoreMisses,
    callOptions?: ScoreOptions | null,
  ): Promise<CacheResolution> {
    if (this.closed) throw new DisposedError('score cache');
    validateRequest(request, scoreMisses);
    const options = validateOptions(callOptions);
    const { passages } = request;
    const n = passages.length;
    const results = new Array<ScorerPairResult>(n);
    const cached = new Array<boolean>(n);
    if (n === 0) return { results, cached };
    throwIfAborted(options.signal);
    const scope = this.scopeOf(request.scorerId, request.query);
    const now = this.clock();
    const required = request.requiredSignals ?? this.requiredSignals;

    let lead: PendingPair[] | undefined;
    let follow: PendingPair[] | undefined;
    let duplicates: number[] | undefined; // pairs of (index, index of the first occurrence)
    let ownKeys: Map<string, number> | undefined;
    let l1Hits = 0;
    try {
      for (let i = 0; i < n; i++) {
        const key = pairKey(scope, passages[i], request.metadataKeys);
        const entry = this.l1Get(key, now);
        if (entry !== undefined && (required === this.requiredSignals || hasAnySignal(entry.result, required))) {
          results[i] = entry.result;
          cached[i] = true;
          l1Hits++;
          continue;
        }
        results[i] = null;
        cached[i] = false;
        const first = ownKeys?.get(key);
        if (first !== undefined) {
          duplicates ??= [];
          duplicates.push(i, first);
          continue;
        }
        const flight = this.flights.get(key);
        if (flight !== undefined) {
          follow ??= [];
          follow.push({ index: i, key, flight });
          continue;
        }
        ownKeys ??= new Map();
        ownKeys.set(key, i);
        lead ??= [];
        lead.push({ index: i, key, flight: this.flights.start(key) });
      }
    } catch (error) {
      // Nothing above should throw after validation; if it does, followers must not hang.
      if (lead !== undefined) for (const pair of lead) this.settle(pair, { ok: false, reason: 'failed' });
      throw error;
    }
    this.counters.l1Hits += l1Hits;
    this.counters.hits += l1Hits;
    if (lead === undefined && follow === undefined) return { results, cached };

    const call: CallState = { results, cached, failed: false, required };
    const leading = lead === undefined ? undefined : this.scoreAsLeader(call, lead, scoreMisses, options, true);
    const following = follow === undefined ? undefined : this.awaitLeaders(call, follow, scoreMisses, options);
    const [leadOutcome, followOutcome] = await Promise.allSettled([leading, following]);
    if (leadOutcome.status === 'rejected') throw leadOutcome.reason;
    if (followOutcome.status === 'rejected') throw followOutcome.reason;

    if (duplicates !== undefined) {
      for (let d = 0; d < duplicates.length; d += 2) {
        const i = duplicates[d];
        const first = duplicates[d + 1];
        results[i] = results[first];
        cached[i] = cached[first];
        if (cached[first]) this.counters.hits++;
        else this.counters.misses++;
      }
    }
    return { results, cached };
  }

  lookup(request: CacheRequest): Array<CacheableResult | undefined> {
    if (this.closed) throw new DisposedError('score cache');
    validateRequest(request, noScoring);
    const { passages } = request;
    const out = new Array<CacheableResult | undefined>(passages.length);
    if (passages.length === 0) return out;
    const scope = this.scopeOf(request.scorerId, request.query);
    const now = this.clock();
    const required = request.requiredSignals ?? this.requiredSignals;
    for (let i = 0; i < passages.length; i++) {
      const result = this.l1Get(pairKey(scope, passages[i], request.metadataKeys), now)?.result;
      out[i] = result !== undefined && hasAnySignal(result, required) ? result : undefined;
    }
    return out;
  }

  /**
   * Looks `pairs` up in L2 (when `useL2`), scores the rest with one scoreMisses call, stores
   * what scored, and settles the pairs' flights. On any error every flight still open is
   * settled as failed (or aborted) before the error propagates, so followers never hang.
   */
  private async scoreAsLeader(
    call: CallState,
    pairs: PendingPair[],
    scoreMisses: ScoreMisses,
    options: ScoreOptions,
    useL2: boolean,
  ): Promise<void> {
    let pending = pairs;
    try {
      if (useL2 && this.l2 !== undefined) pending = await this.readL2(call, pairs, options);
      if (pending.length === 0) return;
      throwIfAborted(options.signal);
      const indices = pending.map((pair) => pair.index);
      const scored = await scoreMisses(indices, options);
      if (!Array.isArray(scored) || scored.length !== indices.length) {
        throw new ScoreMissesContractError(
          `scoreMisses was asked for ${indices.length} pairs and returned ${Array.isArray(scored) ? scored.length : typeof scored} results`,
        );
      }
      const scoredAt = this.clock();
      const writes: { key: string; entry: CacheEntry }[] = [];
      for (let j = 0; j < pending.length; j++) {
        const pair = pending[j];
        const result = (scored[j] ?? null) as ScorerPairResult;
        call.results[pair.index] = result;
        this.counters.misses++;
        if (result === null) {
          this.counters.nullResults++;
          this.settle(pair, { ok: false, reason: 'null' });
          continue;
        }
        const value = toCacheableResult(result);
        if (value === undefined || !hasAnySignal(value, call.required)) {
          this.counters.uncacheable++;
          this.settle(pair, { ok: false, reason: 'uncacheable' });
          continue;
        }
        const entry: CacheEntry = { result: value, scoredAt };
        this.l1Set(pair.key, entry);
        writes.push({ key: pair.key, entry });
        this.settle(pair, { ok: true, entry });
      }
      if (this.l2 !== undefined && !this.closed) this.l2.setMany(writes);
    } catch (error) {
      call.failed = true;
      const reason = options.signal?.aborted || error instanceof AbortedError ? 'aborted' : 'failed';
      for (const pair of pairs) this.settle(pair, { ok: false, reason });
      throw error;
    }
  }

  /** Promotes L2 hits to L1 and returns the pairs still to score. */
  private async readL2(call: CallState, pairs: PendingPair[], options: ScoreOptions): Promise<PendingPair[]> {
    const l2 = this.l2 as RedisL2;
    const budgetMs = options.deadline === undefined ? Number.POSITIVE_INFINITY : options.deadline - Date.now();
    const found = await l2.getMany(
      pairs.map((pair) => pair.key),
      budgetMs,
    );
    if (found === undefined) return pairs;
    const now = this.clock();
    const rest: PendingPair[] = [];
    for (let j = 0; j < pairs.length; j++) {
      const pair = pairs[j];
      const entry = found[j];
      if (entry === undefined) {
        rest.push(pair);
        continue;
      }
      if (!this.isTrusted(entry, now, call.required)) {
        // Decodes, but a scorer result like it would not have been cached: drop, count, rescore.
        l2.counters.l2Invalid++;
        rest.push(pair);
        continue;
      }
      if (this.isExpired(entry, now)) {
        l2.counters.l2Misses++;
        rest.push(pair);
        continue;
      }
      // Scored up to maxClockSkewMs "in the future" by another instance's clock: age it from now,
      // so its L1 copy expires no later than its L2 copy does.
      const promoted = entry.scoredAt > now ? { result: entry.result, scoredAt: now } : entry;
      this.l1Set(pair.key, promoted);
      call.results[pair.index] = entry.result;
      call.cached[pair.index] = true;
      this.counters.l2Hits++;
      this.counters.hits++;
      this.settle(pair, { ok: true, entry: promoted });
    }
    return rest;
  }

  /**
   * Waits for the calls leading `pairs`. Pairs whose leader failed, was aborted, got null, or had
   * not finished by this call's deadline are scored by this call (one more scoreMisses call),
   * under this call's own signal and deadline. This call's abort rejects at once.
   */
  private async awaitLeaders(
    call: CallState,
    pairs: PendingPair[],
    scoreMisses: ScoreMisses,
    options: ScoreOptions,
  ): Promise<void> {
    await waitForFlights(pairs, options);
    const retry: PendingPair[] = [];
    const now = this.clock();
    for (const pair of pairs) {
      const outcome = (pair.flight as Flight).outcome;
      if (outcome?.ok) {
        call.results[pair.index] = outcome.entry.result;
        call.cached[pair.index] = true;
        this.counters.inflightShared++;
        this.counters.hits++;
        continue;
      }
      // Someone may have scored it since; otherwise lead it ourselves so later calls can join.
      const entry = this.l1Get(pair.key, now);
      if (entry !== undefined) {
        call.results[pair.index] = entry.result;
        call.cached[pair.index] = true;
        this.counters.l1Hits++;
        this.counters.hits++;
        continue;
      }
      this.counters.followerRescores++;
      const flight = this.flights.get(pair.key) === undefined ? this.flights.start(pair.key) : undefined;
      retry.push({ index: pair.index, key: pair.key, flight });
    }
    if (retry.length === 0) return;
    if (call.failed) {
      // This call is failing anyway (its own scoring threw): release the flights we just took.
      for (const pair of retry) this.settle(pair, { ok: false, reason: 'failed' });
      return;
    }
    await this.scoreAsLeader(call, retry, scoreMisses, options, false);
  }

  /**
   * The 128-bit scope hash of (scorer id, normalised query), memoised on the raw strings: popular
   * queries repeat, and normalising + hashing costs more than the rest of an all-hit call.
   */
  private scopeOf(scorerId: string, query: string): string {
    // Long queries are not memoised: the memo must stay small (≤ SCOPE_MEMO_SIZE × ~1 KB).
    if (query.length + scorerId.length > SCOPE_MEMO_MAX_CHARS)
      return scopeHash(scorerId, this.normalizer.normalize(query), this.scopeTag);
    const memoKey = `${scorerId.length}:${scorerId}\u0000${query}`; // length prefix: unambiguous
    let scope = this.scopes.get(memoKey);
    if (scope === undefined) {
      scope = scopeHash(scorerId, this.normalizer.normalize(query), this.scopeTag);
      this.scopes.set(memoKey, scope);
    }
    return scope;
  }

  private settle(pair: PendingPair, outcome: FlightOutcome): void {
    if (pair.flight !== undefined) this.flights.settle(pair.key, pair.flight, outcome);
  }

  /** An entry read from outside (L2, snapshot) is trusted if not scored in the future and it has a required signal. */
  private isTrusted(entry: CacheEntry, now: number, required: readonly string[] = this.requiredSignals): boolean {
    return entry.scoredAt <= now + this.maxClockSkewMs && hasAnySignal(entry.result, required);
  }

  private isExpired(entry: CacheEntry, now: number): boolean {
    return this.maxAgeMs !== undefined && now - entry.scoredAt >= this.maxAgeMs;
  }

  private l1Get(key: string, now: number): CacheEntry | undefined {
    const entry = this.lru.get(key);
    if (entry === undefined) return undefined;
    if (this.isExpired(entry, now)) {
      this.lru.delete(key);
      this.counters.expired++;
      return undefined;
    }
    return entry;
  }

  private l1Set(key: string, entry: CacheEntry): void {
    this.lru.set(key, entry);
    this.counters.stores++;
  }

  stats(): ScoreCacheStats {
    const l2 = this.l2;
    return {
      ...this.counters,
      ...(l2?.counters ?? zeroL2Counters()),
      bytes: this.lru.calculatedSize,
      maxBytes: this.maxBytes,
      entries: this.lru.size,
      inflight: this.flights.size,
      l2Enabled: l2 !== undefined,
      l2Connected: l2?.connected ?? false,
      l2Breaker: l2?.breakerState ?? 'disabled',
      l2Signed: l2?.signed ?? false,
      l2ReadLatency: l2?.latency ?? emptyL2Latency(),
    };
  }

  async snapshot(path: string): Promise<SnapshotReport> {
    if (typeof path !== 'string' || path.length === 0)
      throw new InvalidArgumentError('snapshot path must be a non-empty string');
    const now = this.clock();
    const entries: SnapshotEntry[] = [];
    for (const key of this.lru.keysOldestFirst()) {
      const entry = this.lru.peek(key);
      if (entry !== undefined && !this.isExpired(entry, now)) entries.push({ key, entry });
    }
    const bytes = encodeSnapshot(entries, now);
    await writeSnapshotFile(path, bytes);
    return { path, entries: entries.length, fileBytes: bytes.length };
  }

  async warmStart(path: string): Promise<WarmStartReport> {
    if (this.closed) throw new DisposedError('score cache');
    if (typeof path !== 'string' || path.length === 0)
      throw new InvalidArgumentError('snapshot path must be a non-empty string');
    return this.load(decodeSnapshot(await readSnapshotFile(path), path), path);
  }

  /** Inserts decoded entries, most recent first until maxBytes is reached, keeping LRU order. */
  private load(snapshot: { createdAt: number; entries: SnapshotEntry[] }, path: string): WarmStartReport {
    const now = this.clock();
    const selected: SnapshotEntry[] = [];
    // Per shard: a shard over its share would evict what this load just inserted.
    const budgets = this.lru.freeBytesPerShard();
    let skippedExpired = 0;
    let skippedOverBudget = 0;
    let skippedNewer = 0;
    let skippedInvalid = 0;
    for (let i = snapshot.entries.length - 1; i >= 0; i--) {
      const item = snapshot.entries[i];
      if (!this.isTrusted(item.entry, now)) {
        skippedInvalid++;
        continue;
      }
      if (this.isExpired(item.entry, now)) {
        skippedExpired++;
        continue;
      }
      const existing = this.lru.peek(item.key);
      if (existing !== undefined && existing.scoredAt >= item.entry.scoredAt) {
        skippedNewer++;
        continue;
      }
      const size = estimateEntryBytes(item.key, item.entry);
      const shard = this.lru.shardIndexOf(item.key);
      if (size > budgets[shard]) {
        skippedOverBudget++;
        continue;
      }
      budgets[shard] -= size;
      selected.push(item);
    }
    for (let i = selected.length - 1; i >= 0; i--) this.l1Set(selected[i].key, selected[i].entry);
    return {
      path,
      createdAt: snapshot.createdAt,
      loaded: selected.length,
      skippedExpired,
      skippedOverBudget,
      skippedNewer,
      skippedInvalid,
    };
  }

  ready(timeoutMs = 2000): Promise<boolean> {
    return this.l2 === undefined ? Promise.resolve(false) : this.l2.ready(timeoutMs);
  }

  async flush(): Promise<void> {
    await this.l2?.flush();
  }

  clear(): void {
    this.lru.clear();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.l2?.close();
  }
}

const noScoring: ScoreMisses = () => Promise.resolve([]);

interface CallState {
  readonly results: ScorerPairResult[];
  readonly cached: boolean[];
  /** Set when this call's own scoring failed: its follower re-scores are then skipped. */
  failed: boolean;
  /** Signals an entry must carry (any of) to serve or be stored for this call. */
  readonly required: readonly string[];
}

/** Resolves when every flight settled or the deadline passed; rejects with AbortedError on abort. */
function waitForFlights(pairs: readonly PendingPair[], options: ScoreOptions): Promise<void> {
  const all = Promise.all(pairs.map((pair) => (pair.flight as Flight).promise));
  const { signal, deadline } = options;
  if (signal === undefined && deadline === undefined) return all.then(() => undefined);
  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(abortedError(signal as AbortSignal));
    };
    if (signal !== undefined) {
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    if (deadline !== undefined) {
      timer = setTimeout(
        () => {
          done();
          resolve();
        },
        Math.max(0, deadline - Date.now()),
      );
    }
    void all.then(() => {
      done();
      resolve();
    });
  });
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortedError(signal);
}

function abortedError(signal: AbortSignal): AbortedError {
  return signal.reason instanceof AbortedError
    ? signal.reason
    : new AbortedError('the operation was aborted', { cause: signal.reason });
}

/** Call options: absent or null mean none; anything else must be { signal?, deadline? }. */
function validateOptions(options: ScoreOptions | null | undefined): ScoreOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw new InvalidArgumentError(`options must be an object, got ${typeof options}`);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new InvalidArgumentError('options.signal must be an AbortSignal');
  if (options.deadline !== undefined && (typeof options.deadline !== 'number' || Number.isNaN(options.deadline)))
    throw new InvalidArgumentError('options.deadline must be a number (ms on the Date.now() clock)');
  return options;
}

function validateRequest(request: CacheRequest, scoreMisses: ScoreMisses): void {
  if (request === null || typeof request !== 'object')
    throw new InvalidArgumentError('resolve() needs a request object');
  if (typeof request.scorerId !== 'string' || request.scorerId.length === 0)
    throw new InvalidArgumentError('request.scorerId must be a non-empty string');
  if (typeof request.query !== 'string') throw new InvalidArgumentError('request.query must be a string');
  if (!Array.isArray(request.passages)) throw new InvalidArgumentError('request.passages must be an array');
  if (typeof scoreMisses !== 'function') throw new InvalidArgumentError('scoreMisses must be a function');
  const keys: unknown = request.metadataKeys;
  if (keys !== undefined && (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')))
    throw new InvalidArgumentError('request.metadataKeys must be an array of strings when given');
  const required: unknown = request.requiredSignals;
  if (
    required !== undefined &&
    (!Array.isArray(required) || !required.every((k) => typeof k === 'string' && k.length > 0))
  )
    throw new InvalidArgumentError('request.requiredSignals must be an array of non-empty strings when given');
  const passages: readonly Passage[] = request.passages;
  for (let i = 0; i < passages.length; i++) {
    const p = passages[i];
    if (p === null || typeof p !== 'object' || typeof p.id !== 'string' || typeof p.text !== 'string') {
      throw new InvalidArgumentError(`passages[${i}] must be an object with string id and text`);
    }
    if (p.title !== undefined && typeof p.title !== 'string')
      throw new InvalidArgumentError(`passages[${i}].title must be a string when given`);
  }
}
