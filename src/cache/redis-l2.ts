/**
 * Shared second-level cache in Redis (one server or a Redis Cluster). Best effort by design: every
 * read is bounded by a timeout, every failure is counted and swallowed, and a circuit breaker skips
 * Redis entirely while it is down or slow, so callers see L1 behaviour (never an error, never Redis
 * latency) until it is back. One MGET per request scope for reads (or one lease script: read, and
 * lease what is missing), one pipeline or script per call for writes. With a signing key, values
 * are signed on write and verified on read (signing.ts): without one, whoever can write to Redis
 * decides which scores are served.
 *
 * Leases: a call about to score pairs nobody has stored takes a short lease on each (SET NX PX,
 * inside the read script); another instance that finds the lease waits for the value instead of
 * scoring the pair again (lease-wait.ts). A lease ends when its holder stores the value (same
 * script, atomically), releases it (failure, null result), or expires by itself (holder gone).
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { CircuitBreaker, type BreakerState } from './circuit-breaker.js';
import { decodeEntry, encodeEntry } from './codec.js';
import type { CacheEntry } from './entry.js';
import { redisLeaseKey, redisValueKey, scopeOfKey } from './keys.js';
import {
  clientConnected,
  connectAllNodes,
  createRedisClient,
  type L2Client,
  type RedisClusterNode,
} from './redis-client.js';
import { EntrySigner, type CacheSigningKey } from './signing.js';

export type { RedisClusterNode } from './redis-client.js';

export interface RedisL2Options {
  /** redis:// or rediss:// URL (password and db may be in it). Give this or `cluster`. */
  readonly url?: string;
  /**
   * Start-up nodes of a Redis Cluster (at least one; the client discovers the rest). Give this or
   * `url`. Keys carry their request's scope as a hash tag, so each command stays on one slot.
   */
  readonly cluster?: readonly RedisClusterNode[];
  /** Cluster only (a `url` carries its own): ACL user name of every node. */
  readonly username?: string;
  /** Cluster only (a `url` carries its own): password of every node. */
  readonly password?: string;
  /** Cluster only (`rediss://` for a `url`): TLS to every node. */
  readonly tls?: boolean;
  /** Key namespace; default 'rg:score:'. Every key is prefix + the L1 key. */
  readonly prefix?: string;
  /** Redis expiry of each entry (SET … PX); default: the cache's ttlMs, else 24 h. */
  readonly ttlMs?: number;
  /** Longest a read may take before the call goes on without L2; default 5 ms. */
  readonly timeoutMs?: number;
  /** Longest a write batch is tracked before it counts as failed; default 1000 ms. */
  readonly writeTimeoutMs?: number;
  /** Consecutive failures that open the breaker; default 3. */
  readonly failureThreshold?: number;
  /** How long an open breaker skips Redis before one probe; default 1000 ms. */
  readonly cooldownMs?: number;
  /** Cap of the reconnect back-off; default 1000 ms. */
  readonly reconnectMaxDelayMs?: number;
  /** TCP connect timeout; default 1000 ms. */
  readonly connectTimeoutMs?: number;
  /** Write batches allowed in flight; more are dropped (counted) rather than queued; default 64. */
  readonly maxPendingWrites?: number;
  /**
   * Secret shared by the instances that share this Redis (at least 16 bytes; a string counts its
   * UTF-8 bytes). With it, every value is written with an HMAC-SHA256 over its key and bytes, and
   * a value read back is served only if its HMAC checks out: unsigned, foreign or altered values
   * are dropped (`l2SignatureFailures`) and rescored. Without it, anyone who can write to this
   * Redis controls the scores the cache serves.
   */
  readonly signingKey?: CacheSigningKey;
  /**
   * Longest lease (ms) a call takes on the pairs it is about to score, so that instances sharing
   * this Redis wait for its scores instead of computing them again; a call with a deadline leases
   * until its deadline (+ a write's slack) if that is shorter. Default 1000; 0 turns leases off
   * (every instance scores its own misses, as without a lease). See docs/cache.md, *Leases*.
   */
  readonly leaseMs?: number;
}

/** RedisL2Options with every default applied, validated (options.ts resolves them). */
export interface RedisL2Settings {
  readonly url: string | undefined;
  readonly cluster: readonly RedisClusterNode[] | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  readonly prefix: string;
  /** The validated signing key, or undefined for unsigned values. */
  readonly signingKey: KeyObject | undefined;
  readonly ttlMs: number;
  readonly timeoutMs: number;
  readonly writeTimeoutMs: number;
  readonly maxPendingWrites: number;
  readonly reconnectMaxDelayMs: number;
  readonly failureThreshold: number;
  readonly cooldownMs: number;
  readonly connectTimeoutMs: number;
  /** 0: no leases. */
  readonly leaseMs: number;
}

export interface L2Counters {
  /** Reads and write batches that failed, timed out, or found Redis disconnected. */
  l2Errors: number;
  /** The subset of l2Errors that were read timeouts. */
  l2Timeouts: number;
  /** Reads and writes skipped without touching Redis because the breaker was open (or the deadline too near). */
  l2Skipped: number;
  /** Keys asked of Redis. */
  l2Reads: number;
  /**
   * Keys asked of Redis (in reads that answered) that it had no entry for, or only one older than
   * the L2 TTL. Of answered reads: l2Reads = l2Hits + l2Misses + l2Invalid + l2SignatureFailures.
   */
  l2Misses: number;
  /** Keys written to Redis (acknowledged). */
  l2Writes: number;
  /** Write batches dropped because maxPendingWrites were already in flight. */
  l2WritesDropped: number;
  /**
   * Values found in Redis that were not entries this version wrote, or that decode but are invalid
   * (a probability outside [0, 1], no required signal, scored in the future): dropped, rescored.
   */
  l2Invalid: number;
  /**
   * Values dropped because the cache has a signing key and the value was unsigned, signed with
   * another key, signed for another Redis key, or altered: dropped before decoding, rescored.
   */
  l2SignatureFailures: number;
  /** 'error' events of the connection (refused, reset, …); reconnects are automatic. */
  l2ConnectionErrors: number;
  /**
   * Reads and writes that went without Redis because its first connection (started in the
   * background when the cache was created) was not up yet: skips, not errors, and never held
   * against the breaker. `await cache.ready()` before the first call avoids them.
   */
  l2SkippedConnecting: number;
  /** Pairs read from Redis ahead of a call (`prefetch`: a router before it plans) and promoted to L1. */
  l2Prefetched: number;
  /**
   * Pairs this instance leased to score them (found without a value, or taken over after a peer's
   * lease ended); a lease of work that was then cancelled is released.
   */
  l2Leases: number;
  /** Pairs found under another instance's lease: this call waited for that instance's score. */
  l2LeaseWaits: number;
  /** Of l2LeaseWaits, pairs whose score the lease holder stored in time: served from Redis, not scored here. */
  l2LeaseShared: number;
  /** Of l2LeaseWaits, pairs whose lease ended without a value (holder gone, failed, too slow): leased and scored here. */
  l2LeaseTakeovers: number;
  /**
   * Of l2LeaseWaits, pairs this call stopped waiting for (its deadline came, Redis failed, or it was
   * aborted) and scored itself, without a lease.
   */
  l2LeaseGiveUps: number;
}

/** Upper bounds (seconds) of the L2 read-latency buckets: a loopback MGET takes tens to hundreds of µs. */
export const L2_READ_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
]);

/** How long calls waited for their L2 read (one MGET per call; a timed-out read counts its wait). */
export interface L2LatencyHistogram {
  /** Bucket upper bounds, seconds (L2_READ_BUCKETS_SECONDS). */
  readonly boundsSeconds: readonly number[];
  /** Reads per bucket (not cumulative); one more than the bounds: the last counts reads above the last bound. */
  readonly counts: readonly number[];
  readonly sumSeconds: number;
  readonly count: number;
}

const TIMED_OUT = Symbol('timed out');

/** All L2 counters at zero (also what stats() reports when no Redis is configured). */
export function zeroL2Counters(): L2Counters {
  return {
    l2Errors: 0,
    l2Timeouts: 0,
    l2Skipped: 0,
    l2Reads: 0,
    l2Misses: 0,
    l2Writes: 0,
    l2WritesDropped: 0,
    l2Invalid: 0,
    l2SignatureFailures: 0,
    l2ConnectionErrors: 0,
    l2SkippedConnecting: 0,
    l2Prefetched: 0,
    l2Leases: 0,
    l2LeaseWaits: 0,
    l2LeaseShared: 0,
    l2LeaseTakeovers: 0,
    l2LeaseGiveUps: 0,
  };
}

/** An empty L2 read-latency histogram (also what stats() reports when no Redis is configured). */
export function emptyL2Latency(): L2LatencyHistogram {
  return {
    boundsSeconds: L2_READ_BUCKETS_SECONDS,
    counts: new Array<number>(L2_READ_BUCKETS_SECONDS.length + 1).fill(0),
    sumSeconds: 0,
    count: 0,
  };
}

/** A pair's state in Redis as the lease script found it. */
export type LeaseSlot =
  /** The stored entry (valid as far as decoding and the signature go). */
  | { readonly entry: CacheEntry }
  /** No value; the lease is this instance's now: score the pair. */
  | 'leased'
  /** No value; another instance holds the lease: wait for its score. */
  | 'peer'
  /** A value that is not an entry (invalid, unsigned, foreign): score the pair, no lease. */
  | 'invalid';

/** A write: the cache key and its entry. */
export interface L2Write {
  readonly key: string;
  readonly entry: CacheEntry;
}

/** Extra lease time beyond the holder's deadline: the store of its scores (one round trip) lands in it. */
const LEASE_SLACK_MS = 50;
/** Shortest lease taken (a deadline very close still leaves time to store). */
const MIN_LEASE_MS = 10;
/** A read is not sent with less than this to wait for it (ms). */
const READ_FLOOR_MS = 1;

export class RedisL2 {
  readonly counters: L2Counters = zeroL2Counters();
  readonly timeoutMs: number;
  /** Redis expiry of each entry; the cache also expires L1 copies at this age. */
  readonly ttlMs: number;
  private readonly client: L2Client;
  private readonly prefix: string;
  private readonly signer: EntrySigner | undefined;
  private readonly latencyCounts = new Array<number>(L2_READ_BUCKETS_SECONDS.length + 1).fill(0);
  private latencySum = 0;
  private latencyCount = 0;
  private readonly writeTimeoutMs: number;
  private readonly maxPendingWrites: number;
  private readonly breaker: CircuitBreaker;
  private readonly pendingWrites = new Set<Promise<void>>();
  private readonly leaseMs: number;
  /** Who holds a lease: this instance's random token (a lease still holding it is its own). */
  private readonly token = randomBytes(9).toString('base64url');
  /** Set when Redis refuses the lease scripts (ACL, scripting disabled): plain reads and writes from then on. */
  private scriptsRefused = false;
  private closed = false;
  /**
   * Whether the connection has been up once. Before that, "not ready" means "still connecting"
   * (a skip); after it, a lost connection (an error the breaker counts). Counting the start-up as
   * errors opened the breaker after 3 early calls and kept Redis unused for its whole cooldown.
   */
  private everConnected = false;
  /** A cluster's connections to its masters, opened once it is ready (resolved at once for one server). */
  private nodesConnected: Promise<void> | undefined;

  constructor(settings: RedisL2Settings) {
    this.prefix = settings.prefix;
    this.signer = settings.signingKey === undefined ? undefined : new EntrySigner(settings.signingKey);
    this.ttlMs = settings.ttlMs;
    this.timeoutMs = settings.timeoutMs;
    this.writeTimeoutMs = settings.writeTimeoutMs;
    this.maxPendingWrites = settings.maxPendingWrites;
    this.leaseMs = settings.leaseMs;
    this.breaker = new CircuitBreaker({
      failureThreshold: settings.failureThreshold,
      cooldownMs: settings.cooldownMs,
      now: () => performance.now(),
    });
    this.client = createRedisClient(settings, {
      closed: () => this.closed,
      onError: () => {
        this.counters.l2ConnectionErrors++;
      },
    });
    this.client.once('ready', () => {
      this.everConnected = true;
    });
    this.client.on('ready', () => {
      this.nodesConnected = connectAllNodes(this.client);
    });
  }

  get breakerState(): BreakerState {
    return this.breaker.current;
  }

  /** Whether values are signed and verified. */
  get signed(): boolean {
    return this.signer !== undefined;
  }

  /** Whether calls take leases on what they score (leaseMs > 0, and Redis runs the scripts). */
  get leasing(): boolean {
    return this.leaseMs > 0 && !this.scriptsRefused;
  }

  get latency(): L2LatencyHistogram {
    return {
      boundsSeconds: L2_READ_BUCKETS_SECONDS,
      counts: [...this.latencyCounts],
      sumSeconds: this.latencySum,
      count: this.latencyCount,
    };
  }

  get connected(): boolean {
    return clientConnected(this.client);
  }

  /** Resolves true once connected, false after `timeoutMs` or when closed. Never rejects. */
  ready(timeoutMs: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onReady = (): void => {
        // A cluster is ready for the cache once its masters' connections are open too.
        void (this.nodesConnected ?? Promise.resolve()).then(() => {
          clearTimeout(timer);
          resolve(true);
        });
      };
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      if (this.client.status === 'ready') onReady();
      else this.client.once('ready', onReady);
    });
  }

  /** How long a call with this deadline leases its pairs: until its deadline and a store, at most leaseMs. */
  leaseMsFor(deadline: number | undefined): number {
    if (deadline === undefined) return this.leaseMs;
    return Math.round(Math.min(this.leaseMs, Math.max(MIN_LEASE_MS, deadline - Date.now() + LEASE_SLACK_MS)));
  }

  /**
   * How long a read may wait for Redis now, or undefined when it must not be sent (counted). A
   * read gets the full timeout while the call's budget holds it; closer to the deadline, half
   * of what is left (a call leaves time to score what Redis did not have), a wait's poll all of
   * it, and none below READ_FLOOR_MS. Checked before the breaker: a half-open breaker's probe
   * taken here would never be settled.
   */
  private readTimeout(budgetMs: number, poll: boolean): number | undefined {
    if (!this.closed && !this.everConnected && this.client.status !== 'ready') {
      this.counters.l2SkippedConnecting++;
      return undefined;
    }
    const timeoutMs = budgetMs >= this.timeoutMs ? this.timeoutMs : Math.floor(poll ? budgetMs : budgetMs / 2);
    if (this.closed || timeoutMs < READ_FLOOR_MS || !this.breaker.tryAcquire()) {
      this.counters.l2Skipped++;
      return undefined;
    }
    if (this.client.status !== 'ready') {
      this.counters.l2Errors++;
      this.breaker.onFailure();
      return undefined;
    }
    return timeoutMs;
  }

  /**
   * Runs `commands` (one per scope) for at most `timeoutMs`; their replies in order, or undefined
   * when one failed or the time ran out (counted, the breaker told; a late reply is dropped). A
   * wait cut below the L2 timeout by the call's deadline that runs out is no fault of Redis's.
   */
  private async bounded<T>(commands: Promise<T>[], observe: boolean, timeoutMs: number): Promise<T[] | undefined> {
    const started = performance.now();
    const all = Promise.all(commands);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(resolve, timeoutMs, TIMED_OUT);
    });
    let replies: T[] | typeof TIMED_OUT;
    try {
      replies = await Promise.race([all, timeout]);
    } catch (error) {
      this.counters.l2Errors++;
      this.breaker.onFailure();
      if (isScriptRefusal(error)) this.scriptsRefused = true;
      return undefined;
    } finally {
      clearTimeout(timer);
      if (observe) this.observeLatency((performance.now() - started) / 1000);
    }
    if (replies === TIMED_OUT) {
      all.catch(() => undefined); // the late reply (or error) is dropped
      if (timeoutMs < this.timeoutMs) {
        // Cut short by the caller's deadline, not slower than the timeout: no fault of Redis's.
        this.breaker.onSuccess();
        return undefined;
      }
      this.counters.l2Errors++;
      this.counters.l2Timeouts++;
      this.breaker.onFailure();
      return undefined;
    }
    this.breaker.onSuccess();
    return replies;
  }

  /**
   * Entries for `keys` (undefined where Redis has none or holds something invalid), or undefined
   * when L2 was skipped or failed. One MGET per scope among the keys, in parallel. Never rejects;
   * never takes much longer than timeoutMs.
   */
  async getMany(keys: readonly string[], budgetMs: number): Promise<(CacheEntry | undefined)[] | undefined> {
    const timeoutMs = this.readTimeout(budgetMs, false);
    if (timeoutMs === undefined) return undefined;
    this.counters.l2Reads += keys.length;
    const redisKeys = keys.map((key) => redisValueKey(this.prefix, key));
    const groups = groupByScope(keys);
    const replies = await this.bounded(
      groups.map((g) => this.client.mgetBuffer(g.map((i) => redisKeys[i]))),
      true,
      timeoutMs,
    );
    if (replies === undefined) return undefined;
    const out = new Array<CacheEntry | undefined>(keys.length);
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g];
      const values = replies[g];
      for (let j = 0; j < group.length; j++) {
        const i = group[j];
        out[i] = this.entryOf(redisKeys[i], values[j]);
      }
    }
    return out;
  }

  /**
   * Each key's state, taking a lease (of `leaseMs`) on every key that has no value and no other
   * holder: one script per scope. `poll`: a wait's repeated look (not counted as reads, not in the
   * latency histogram). Undefined when L2 was skipped or failed. Never rejects.
   */
  async leaseRead(
    keys: readonly string[],
    budgetMs: number,
    leaseMs: number,
    poll = false,
  ): Promise<LeaseSlot[] | undefined> {
    const timeoutMs = this.readTimeout(budgetMs, poll);
    if (timeoutMs === undefined) return undefined;
    if (!poll) this.counters.l2Reads += keys.length;
    const redisKeys = keys.map((key) => redisValueKey(this.prefix, key));
    const groups = groupByScope(keys);
    const replies = await this.bounded(
      groups.map((g) =>
        this.client.rgLeaseReadBuffer(
          g.length * 2,
          ...g.map((i) => redisKeys[i]),
          ...g.map((i) => redisLeaseKey(this.prefix, keys[i])),
          this.token,
          leaseMs,
        ),
      ),
      !poll,
      timeoutMs,
    );
    if (replies === undefined) return undefined;
    const out = new Array<LeaseSlot>(keys.length);
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g];
      const slots = replies[g];
      for (let j = 0; j < group.length; j++) {
        const i = group[j];
        const slot = slots[j];
        if (typeof slot === 'number') {
          if (!poll) this.counters.l2Misses++;
          out[i] = slot === 1 ? 'leased' : 'peer';
          continue;
        }
        const entry = this.entryOf(redisKeys[i], slot, !poll);
        out[i] = entry === undefined ? 'invalid' : { entry };
      }
    }
    return out;
  }

  /** The entry in a stored value (checked signature, decoded), counting what is not one. */
  private entryOf(redisKey: string, stored: Buffer | null | undefined, count = true): CacheEntry | undefined {
    if (stored === null || stored === undefined) {
      if (count) this.counters.l2Misses++;
      return undefined;
    }
    let bytes: Buffer = stored;
    const signer = this.signer;
    if (signer !== undefined) {
      // Checked before decoding: bytes nobody holding the key wrote never reach the decoder.
      const payload = signer.verify(redisKey, stored);
      if (payload === undefined) {
        if (count) this.counters.l2SignatureFailures++;
        return undefined;
      }
      bytes = payload;
    }
    const entry = decodeEntry(bytes);
    if (entry === undefined && count) this.counters.l2Invalid++;
    return entry;
  }

  private observeLatency(seconds: number): void {
    const bounds = L2_READ_BUCKETS_SECONDS;
    let b = 0;
    while (b < bounds.length && seconds > bounds[b]) b++;
    this.latencyCounts[b]++;
    this.latencySum += seconds;
    this.latencyCount++;
  }

  /** Whether a write may go to Redis now (counting why not). */
  private mayWrite(): boolean {
    if (!this.closed && !this.everConnected && this.client.status !== 'ready') {
      this.counters.l2SkippedConnecting++;
      return false;
    }
    if (this.closed || this.breaker.current === 'open' || this.client.status !== 'ready') {
      this.counters.l2Skipped++;
      return false;
    }
    if (this.pendingWrites.size >= this.maxPendingWrites) {
      this.counters.l2WritesDropped++;
      return false;
    }
    return true;
  }

  /**
   * Writes entries, in the background: one pipeline of SET … PX per scope, or with `releaseLeases`
   * one script per scope that also drops this instance's leases on those keys. Never rejects;
   * failures are counted.
   */
  setMany(items: readonly L2Write[], releaseLeases = false): void {
    if (items.length === 0 || !this.mayWrite()) return;
    const signer = this.signer;
    const commands: Promise<number>[] = [];
    for (const group of groupByScope(items.map((item) => item.key))) {
      const redisKeys = group.map((i) => redisValueKey(this.prefix, items[i].key));
      const values = group.map((i, j) => {
        const bytes = encodeEntry(items[i].entry);
        return signer === undefined ? bytes : signer.sign(redisKeys[j], bytes);
      });
      if (releaseLeases && this.leasing) {
        const leaseKeys = group.map((i) => redisLeaseKey(this.prefix, items[i].key));
        commands.push(
          this.client.rgStore(group.length * 2, ...redisKeys, ...leaseKeys, this.token, this.ttlMs, ...values),
        );
        continue;
      }
      const pipeline = this.client.pipeline();
      for (let j = 0; j < group.length; j++) pipeline.set(redisKeys[j], values[j], 'PX', this.ttlMs);
      commands.push(
        pipeline.exec().then((replies) => {
          if (replies === null) throw new Error('pipeline not executed');
          let failed = 0;
          for (const [err] of replies) if (err) failed++;
          if (failed > 0) throw new Error(`${failed} writes failed`);
          return replies.length;
        }),
      );
    }
    this.track(commands, items.length);
  }

  /** Drops this instance's leases on `keys` (its scoring failed or gave nothing to store), in the background. */
  release(keys: readonly string[]): void {
    if (keys.length === 0 || !this.leasing || !this.mayWrite()) return;
    const commands = groupByScope(keys).map((group) =>
      this.client.rgStore(
        group.length * 2,
        ...group.map((i) => redisValueKey(this.prefix, keys[i])),
        ...group.map((i) => redisLeaseKey(this.prefix, keys[i])),
        this.token,
        this.ttlMs,
      ),
    );
    this.track(commands, 0);
  }

  /** Tracks background commands (bounded by writeTimeoutMs); `writes` keys count as written once all succeed. */
  private track(commands: Promise<number>[], writes: number): void {
    const all = Promise.all(commands);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(resolve, this.writeTimeoutMs, TIMED_OUT);
    });
    const tracked: Promise<void> = Promise.race([all, timeout])
      .then((replies) => {
        if (replies === TIMED_OUT) {
          all.catch(() => undefined);
          this.counters.l2Errors++;
          this.breaker.onFailure();
          return;
        }
        this.counters.l2Writes += writes;
      })
      .catch((error: unknown) => {
        this.counters.l2Errors++;
        this.breaker.onFailure();
        if (isScriptRefusal(error)) this.scriptsRefused = true;
      })
      .finally(() => {
        clearTimeout(timer);
        this.pendingWrites.delete(tracked);
      });
    this.pendingWrites.add(tracked);
  }

  /** Waits for writes in flight (each bounded by writeTimeoutMs). */
  async flush(): Promise<void> {
    await Promise.all([...this.pendingWrites]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    if (this.client.status === 'ready') {
      const quit = this.client.quit().catch(() => undefined);
      const gaveUp = await Promise.race([
        quit.then(() => false),
        new Promise<boolean>((r) => setTimeout(r, 500, true).unref()),
      ]);
      if (!gaveUp) return;
    }
    this.client.disconnect();
  }
}

/** Indices of `keys` grouped by scope (one Redis Cluster slot each), in first-seen order. */
function groupByScope(keys: readonly string[]): number[][] {
  if (keys.length === 0) return [];
  const first = scopeOfKey(keys[0]);
  let same = true;
  for (let i = 1; i < keys.length && same; i++) same = keys[i].startsWith(first);
  if (same) return [keys.map((_, i) => i)];
  const groups = new Map<string, number[]>();
  for (let i = 0; i < keys.length; i++) {
    const scope = scopeOfKey(keys[i]);
    const group = groups.get(scope);
    if (group === undefined) groups.set(scope, [i]);
    else group.push(i);
  }
  return [...groups.values()];
}

/** A refusal to run the scripts that will not pass (ACL without EVAL, scripting renamed away). */
function isScriptRefusal(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return /^(NOPERM|ERR unknown command)/i.test(message);
}
