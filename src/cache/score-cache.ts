/**
 * The score cache: an in-process LRU (L1, bounded by estimated bytes), an optional shared Redis
 * (L2, best effort), single-flight for concurrent misses, and snapshot files for warm starts.
 * It implements PairScoreCache, the port the gate calls. See docs/cache.md.
 *
 * This module is the public face and the coordinator: resolve() serves each pair from L1, then
 * from L2, then from the caller's scorer, one flight per pair. The parts it wires together:
 *   options.ts       option defaults and validation
 *   scope-memo.ts    the per-(scorer, query) key scope, memoised
 *   l1-cache.ts      L1 with expiry and counters (storage: l1-store.ts, shards off the heap: l1-shard.ts)
 *   entry-policy.ts  when an entry has expired, and when one from outside is trusted
 *   l2-read.ts       the L2 read and promotion paths, prefetch (client: redis-l2.ts, redis-client.ts)
 *   lease-wait.ts    waiting for pairs another instance is scoring under a Redis lease
 *   single-flight.ts one scoring per pair at a time; followers.ts: what a waiting call takes
 *   l1-snapshot.ts   snapshot save and warm start (file format: snapshot.ts)
 *   call.ts          per-call validation, state and abort handling
 *   approximate/     reuse of near-identical queries' scores (LSH index over query embeddings)
 *   stats.ts         counters and what stats() reports
 */
import { AbortedError, DisposedError, InvalidArgumentError } from '../errors.js';
import type { ScoreOptions, ScorerPairResult } from '../types.js';
import { ApproximateReuse, type ApproximateCall } from './approximate/approximate-reuse.js';
import { throwIfAborted, validateCallOptions, validateRequest, type CallState } from './call.js';
import type {
  CachedMark,
  CacheRequest,
  CacheResolution,
  PairScoreCache,
  PrefetchOptions,
  ScoreMisses,
} from './cache-port.js';
import { hasAnySignal, toCacheableResult, type CacheableResult, type CacheEntry } from './entry.js';
import { EntryPolicy } from './entry-policy.js';
import { ScoreMissesContractError, type SnapshotError } from './errors.js';
import { Followers } from './followers.js';
import { L1Cache } from './l1-cache.js';
import { L1Snapshots, type SnapshotReport, type WarmStartReport } from './l1-snapshot.js';
import { L2ReadPath, type PrefetchKey } from './l2-read.js';
import { LeaseWait } from './lease-wait.js';
import { ScorerPace } from './scorer-pace.js';
import { pairKey } from './keys.js';
import { resolveScoreCacheOptions, type ScoreCacheOptions } from './options.js';
import { RedisL2 } from './redis-l2.js';
import { ScopeMemo } from './scope-memo.js';
import { SingleFlight, waitForFlights, type PendingPair } from './single-flight.js';
import { collectStats, zeroCacheCounters, type ScoreCacheStats } from './stats.js';

export {
  type ApproximateCacheOptions,
  DEFAULT_APPROXIMATE_THRESHOLD,
  type EmbedQuery,
} from './approximate/approximate-reuse.js';
export type { QueryIndexOptions } from './approximate/query-index.js';
export { DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_REQUIRED_SIGNALS, type ScoreCacheOptions } from './options.js';
export type { ScoreCacheStats } from './stats.js';
export type { SnapshotReport, WarmStartReport } from './l1-snapshot.js';

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
  /**
   * Reads the pairs of `requests` that L1 does not hold from Redis (one MGET per request, in
   * parallel, bounded by the L2 timeout, or by half the time left when the deadline is nearer;
   * skipped without Redis or while it is down) and promotes the trusted, fresh entries to L1, so
   * a synchronous lookup() finds them: a router reads what other instances scored before it plans.
   * Resolves with the number of pairs promoted; never rejects (but throws DisposedError once closed).
   */
  prefetch(requests: readonly CacheRequest[], options?: PrefetchOptions): Promise<number>;
  /** Whether the cache has an L2 shared with other instances (the `redis` option). */
  readonly shared: boolean;
  /** Whether the cache reuses near-identical queries' scores (the `approximate` option). */
  readonly approximate: boolean;
  /** Empties L1 (not Redis: other instances share it; entries there expire by TTL). */
  clear(): void;
  /** Flushes L2 writes and disconnects. Later resolve() calls throw DisposedError. */
  close(): Promise<void>;
}

export function createScoreCache(options: ScoreCacheOptions): ScoreCache {
  return new ScoreCacheImpl(options);
}

const noScoring: ScoreMisses = () => Promise.resolve([]);

/** A peer's lease lasts leaseMs at most; a wait on it is given this much more (its store's round trip). */
const LEASE_WAIT_SLACK_MS = 50;

class ScoreCacheImpl implements ScoreCache {
  warmStartResult: WarmStartReport | SnapshotError | undefined;
  readonly shared: boolean;
  readonly approximate: boolean;
  private readonly clock: () => number;
  private readonly requiredSignals: readonly string[];
  private readonly counters = zeroCacheCounters();
  private readonly l1: L1Cache;
  private readonly scopes: ScopeMemo;
  private readonly flights = new SingleFlight();
  private readonly followers: Followers;
  private readonly l2: RedisL2 | undefined;
  private readonly l2Read: L2ReadPath | undefined;
  private readonly leaseWait: LeaseWait | undefined;
  private readonly pace = new ScorerPace();
  private readonly reuse: ApproximateReuse | undefined;
  private readonly snapshots: L1Snapshots;
  private closed = false;

  constructor(options: ScoreCacheOptions) {
    const settings = resolveScoreCacheOptions(options);
    const { clock, requiredSignals } = settings;
    this.clock = clock;
    this.requiredSignals = requiredSignals;
    const policy = new EntryPolicy(settings.maxAgeMs, settings.maxClockSkewMs, requiredSignals);
    const { counters, flights } = this;
    const l1 = new L1Cache(settings.maxBytes, policy, counters);
    this.l1 = l1;
    this.scopes = new ScopeMemo(settings.normalizer);
    this.followers = new Followers({ l1, flights, counters, clock });
    this.l2 = settings.redis === undefined ? undefined : new RedisL2(settings.redis);
    this.shared = this.l2 !== undefined;
    this.l2Read =
      this.l2 === undefined ? undefined : new L2ReadPath({ l2: this.l2, l1, policy, flights, counters, clock });
    this.leaseWait =
      this.l2Read === undefined || settings.redis === undefined
        ? undefined
        : new LeaseWait(
            { l2: this.l2 as RedisL2, read: this.l2Read, counters, clock },
            settings.redis.leaseMs + LEASE_WAIT_SLACK_MS,
          );
    this.reuse =
      settings.approximate === undefined ? undefined : new ApproximateReuse(settings.approximate, l1, counters, clock);
    this.approximate = this.reuse !== undefined;
    this.snapshots = new L1Snapshots(l1, policy, clock);
    if (settings.fromSnapshot !== undefined) this.warmStartResult = this.snapshots.loadSync(settings.fromSnapshot);
  }

  async resolve(
    request: CacheRequest,
    scoreMisses: ScoreMisses,
    callOptions?: ScoreOptions | null,
  ): Promise<CacheResolution> {
    if (this.closed) throw new DisposedError('score cache');
    validateRequest(request, scoreMisses);
    const options = validateCallOptions(callOptions);
    const { passages } = request;
    const n = passages.length;
    const results = new Array<ScorerPairResult>(n);
    const cached = new Array<CachedMark>(n);
    if (n === 0) return { results, cached };
    throwIfAborted(options.signal);
    const scope = this.scopes.scopeOf(request.scorerId, request.query);
    const now = this.clock();
    const required = request.requiredSignals ?? this.requiredSignals;
    // Every pair's key, kept only when this call may remember its query for approximate reuse.
    const keys = this.reuse !== undefined && request.approximate !== undefined ? new Array<string>(n) : undefined;

    // Each pair: an L1 hit, a repeat of an earlier pair of this call, a pair another call is
    // scoring (follow its flight), or a pair this call leads (starts the flight, then L2, then scores).
    let lead: PendingPair[] | undefined;
    let follow: PendingPair[] | undefined;
    let duplicates: number[] | undefined; // pairs of (index, index of the first occurrence)
    let ownKeys: Map<string, number> | undefined;
    let l1Hits = 0;
    try {
      for (let i = 0; i < n; i++) {
        const key = pairKey(scope, passages[i], request.metadataKeys);
        if (keys !== undefined) keys[i] = key;
        const entry = this.l1.get(key, now);
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
      if (lead !== undefined) for (const pair of lead) this.flights.settlePair(pair, { ok: false, reason: 'failed' });
      throw error;
    }
    this.counters.l1Hits += l1Hits;
    this.counters.hits += l1Hits;
    if (lead === undefined && follow === undefined) return { results, cached };

    const call: CallState = { results, cached, failed: false, required, leasing: false };
    // The query embedding is fetched alongside the L2 read; only a call that leads pairs needs it.
    const approximate = lead === undefined ? undefined : this.reuse?.begin(request, options);
    const leading =
      lead === undefined ? undefined : this.lead(call, lead, request, scoreMisses, options, approximate, scope);
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
        if (cached[first] === 'approximate') this.counters.approximateHits++;
        else if (cached[first]) this.counters.hits++;
        else this.counters.misses++;
      }
    }
    if (approximate !== undefined && keys !== undefined)
      (this.reuse as ApproximateReuse).remember(
        approximate,
        scope,
        keys.filter((_, i) => cached[i] !== 'approximate' && results[i] !== null),
      );
    return { results, cached };
  }

  lookup(request: CacheRequest): Array<CacheableResult | undefined> {
    if (this.closed) throw new DisposedError('score cache');
    validateRequest(request, noScoring);
    const { passages } = request;
    const out = new Array<CacheableResult | undefined>(passages.length);
    if (passages.length === 0) return out;
    const scope = this.scopes.scopeOf(request.scorerId, request.query);
    const now = this.clock();
    const required = request.requiredSignals ?? this.requiredSignals;
    for (let i = 0; i < passages.length; i++) {
      const result = this.l1.get(pairKey(scope, passages[i], request.metadataKeys), now)?.result;
      out[i] = result !== undefined && hasAnySignal(result, required) ? result : undefined;
    }
    return out;
  }

  /**
   * The pairs this call leads: looked up in L2 (with leases unless the request says otherwise),
   * then the rest scored with one scoreMisses call while, alongside, the pairs another instance
   * holds a lease on are waited for (and scored here, with one more call, if they do not come).
   */
  private async lead(
    call: CallState,
    pairs: PendingPair[],
    request: CacheRequest,
    scoreMisses: ScoreMisses,
    options: ScoreOptions,
    approximate: ApproximateCall | undefined,
    scope: string,
  ): Promise<void> {
    let own = pairs;
    let waits: PendingPair[] = [];
    const read = this.l2Read;
    try {
      if (read !== undefined && request.l2?.read !== false) {
        if (
          request.l2?.lease !== false &&
          this.l2?.leasing === true &&
          this.leaseWait !== undefined &&
          this.pace.worthLeasing(request.scorerId)
        ) {
          const leased = await read.readLeasing(call, pairs, options);
          own = leased.score;
          waits = leased.wait;
        } else own = await read.read(call, pairs, options);
      }
    } catch (error) {
      // The read paths never reject; if one does, no flight of this call may stay open.
      for (const pair of pairs) this.flights.settlePair(pair, { ok: false, reason: 'failed' });
      throw error;
    }
    if (approximate !== undefined && own.length > 0)
      own = await this.serveApproximate(call, own, approximate, scope, options);
    const scoring =
      own.length === 0 ? undefined : this.scoreAsLeader(call, own, scoreMisses, options, request.scorerId);
    const waiting = waits.length === 0 ? undefined : this.awaitPeers(call, waits, scoreMisses, options);
    const [scored, waited] = await Promise.allSettled([scoring, waiting]);
    if (scored.status === 'rejected') throw scored.reason;
    if (waited.status === 'rejected') throw waited.reason;
  }

  /**
   * Serves what it can of `pairs` from near-identical earlier queries (approximate/). Those pairs
   * are not this query's scores: their flights end without an entry (followers score them) and
   * their leases are released, so nothing is stored under this query's keys.
   */
  private async serveApproximate(
    call: CallState,
    pairs: PendingPair[],
    approximate: ApproximateCall,
    scope: string,
    options: ScoreOptions,
  ): Promise<PendingPair[]> {
    let outcome: { rest: PendingPair[]; served: PendingPair[] };
    try {
      outcome = await (this.reuse as ApproximateReuse).serve(call, pairs, approximate, scope, options);
    } catch {
      // Reuse is an optimisation: whatever went wrong in it, the pairs are scored.
      return pairs;
    }
    const { rest, served } = outcome;
    if (served.length > 0) {
      for (const pair of served) this.flights.settlePair(pair, { ok: false, reason: 'approximate' });
      if (call.leasing && this.l2 !== undefined && !this.closed) this.l2.release(served.map((pair) => pair.key));
    }
    return rest;
  }

  /**
   * Scores `pairs` with one scoreMisses call, stores what scored (dropping this call's leases on
   * them), and settles the pairs' flights. On any error every flight still open is settled as
   * failed (or aborted) and this call's leases are released before the error propagates, so
   * followers here and waiters elsewhere never hang.
   */
  private async scoreAsLeader(
    call: CallState,
    pairs: PendingPair[],
    scoreMisses: ScoreMisses,
    options: ScoreOptions,
    scorerId?: string,
  ): Promise<void> {
    const unstored: string[] = [];
    try {
      throwIfAborted(options.signal);
      const indices = pairs.map((pair) => pair.index);
      const started = performance.now();
      const scored = await scoreMisses(indices, options);
      if (scorerId !== undefined) this.pace.record(scorerId, performance.now() - started);
      if (!Array.isArray(scored) || scored.length !== indices.length) {
        throw new ScoreMissesContractError(
          `scoreMisses was asked for ${indices.length} pairs and returned ${Array.isArray(scored) ? scored.length : typeof scored} results`,
        );
      }
      const scoredAt = this.clock();
      const writes: { key: string; entry: CacheEntry }[] = [];
      for (let j = 0; j < pairs.length; j++) {
        const pair = pairs[j];
        const result = (scored[j] ?? null) as ScorerPairResult;
        call.results[pair.index] = result;
        this.counters.misses++;
        if (result === null) {
          this.counters.nullResults++;
          unstored.push(pair.key);
          this.flights.settlePair(pair, { ok: false, reason: 'null' });
          continue;
        }
        const value = toCacheableResult(result);
        if (value === undefined || !hasAnySignal(value, call.required)) {
          this.counters.uncacheable++;
          unstored.push(pair.key);
          this.flights.settlePair(pair, { ok: false, reason: 'uncacheable' });
          continue;
        }
        const entry: CacheEntry = { result: value, scoredAt };
        this.l1.set(pair.key, entry);
        writes.push({ key: pair.key, entry });
        this.flights.settlePair(pair, { ok: true, entry });
      }
      if (this.l2 !== undefined && !this.closed) {
        this.l2.setMany(writes, call.leasing);
        if (call.leasing) this.l2.release(unstored);
      }
    } catch (error) {
      call.failed = true;
      const reason = options.signal?.aborted || error instanceof AbortedError ? 'aborted' : 'failed';
      for (const pair of pairs) this.flights.settlePair(pair, { ok: false, reason });
      if (call.leasing && this.l2 !== undefined && !this.closed) this.l2.release(pairs.map((pair) => pair.key));
      throw error;
    }
  }

  /**
   * Waits for the instances leasing `pairs` (lease-wait.ts) and scores here, with one more
   * scoreMisses call, the pairs they did not store in time. This call's abort rejects at once.
   */
  private async awaitPeers(
    call: CallState,
    pairs: PendingPair[],
    scoreMisses: ScoreMisses,
    options: ScoreOptions,
  ): Promise<void> {
    let rest: PendingPair[];
    try {
      rest = await (this.leaseWait as LeaseWait).wait(call, pairs, options);
    } catch (error) {
      for (const pair of pairs) this.flights.settlePair(pair, { ok: false, reason: 'aborted' });
      throw error;
    }
    if (rest.length === 0) return;
    if (call.failed) {
      // This call is failing anyway (its own scoring threw): release what it holds.
      for (const pair of rest) this.flights.settlePair(pair, { ok: false, reason: 'failed' });
      if (call.leasing) this.l2?.release(rest.map((pair) => pair.key));
      return;
    }
    await this.scoreAsLeader(call, rest, scoreMisses, options);
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
    const retry = this.followers.collect(call, pairs);
    if (retry.length === 0) return;
    if (call.failed) {
      // This call is failing anyway (its own scoring threw): release the flights just taken.
      for (const pair of retry) this.flights.settlePair(pair, { ok: false, reason: 'failed' });
      return;
    }
    await this.scoreAsLeader(call, retry, scoreMisses, options);
  }

  stats(): ScoreCacheStats {
    return collectStats({
      counters: this.counters,
      l1: this.l1,
      inflight: this.flights.size,
      l2: this.l2,
      approximate: this.reuse,
    });
  }

  snapshot(path: string): Promise<SnapshotReport> {
    return this.snapshots.save(path);
  }

  async warmStart(path: string): Promise<WarmStartReport> {
    if (this.closed) throw new DisposedError('score cache');
    return this.snapshots.load(path);
  }

  ready(timeoutMs = 2000): Promise<boolean> {
    return this.l2 === undefined ? Promise.resolve(false) : this.l2.ready(timeoutMs);
  }

  async flush(): Promise<void> {
    await this.l2?.flush();
  }

  async prefetch(requests: readonly CacheRequest[], options: PrefetchOptions = {}): Promise<number> {
    if (this.closed) throw new DisposedError('score cache');
    const read = this.l2Read;
    if (read === undefined) return 0;
    if (!Array.isArray(requests)) throw new InvalidArgumentError('prefetch() needs an array of requests');
    validateCallOptions(options);
    for (const request of requests) validateRequest(request, noScoring);
    const now = this.clock();
    const keys: PrefetchKey[] = [];
    const seen = new Set<string>();
    for (const request of requests) {
      if (request.passages.length === 0) continue;
      const scope = this.scopes.scopeOf(request.scorerId, request.query);
      const required = request.requiredSignals ?? this.requiredSignals;
      for (const passage of request.passages) {
        const key = pairKey(scope, passage, request.metadataKeys);
        if (seen.has(key)) continue;
        seen.add(key);
        const entry = this.l1.get(key, now);
        if (entry !== undefined && hasAnySignal(entry.result, required)) continue;
        keys.push({ key, required });
      }
    }
    return read.prefetch(keys, options);
  }

  clear(): void {
    this.l1.clear();
    this.reuse?.clear();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.l2?.close();
  }
}
