/**
 * Shared second-level cache in Redis. Best effort by design: every read is bounded by a timeout,
 * every failure is counted and swallowed, and a circuit breaker skips Redis entirely while it is
 * down or slow, so callers see L1 behaviour (never an error, never Redis latency) until it is back.
 * One MGET per call for reads, one pipeline of SET … PX per call for writes. With a signing key,
 * values are signed on write and verified on read (signing.ts): without one, whoever can write to
 * Redis decides which scores are served.
 */
import type { KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { requirePackage } from '../util/optional-package.js';
import { CircuitBreaker, type BreakerState } from './circuit-breaker.js';
import { decodeEntry, encodeEntry } from './codec.js';
import type { CacheEntry } from './entry.js';
import { EntrySigner, type CacheSigningKey } from './signing.js';

export interface RedisL2Options {
  /** redis:// or rediss:// URL (password and db may be in it). */
  readonly url: string;
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
}

/** RedisL2Options with every default applied, validated (options.ts resolves them). */
export interface RedisL2Settings {
  readonly url: string;
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

export class RedisL2 {
  readonly counters: L2Counters = zeroL2Counters();
  readonly timeoutMs: number;
  /** Redis expiry of each entry; the cache also expires L1 copies at this age. */
  readonly ttlMs: number;
  private readonly client: Redis;
  private readonly prefix: string;
  private readonly signer: EntrySigner | undefined;
  private readonly latencyCounts = new Array<number>(L2_READ_BUCKETS_SECONDS.length + 1).fill(0);
  private latencySum = 0;
  private latencyCount = 0;
  private readonly writeTimeoutMs: number;
  private readonly maxPendingWrites: number;
  private readonly breaker: CircuitBreaker;
  private readonly pendingWrites = new Set<Promise<void>>();
  private closed = false;
  /**
   * Whether the connection has been up once. Before that, "not ready" means "still connecting"
   * (a skip); after it, a lost connection (an error the breaker counts). Counting the start-up as
   * errors opened the breaker after 3 early calls and kept Redis unused for its whole cooldown.
   */
  private everConnected = false;

  constructor(settings: RedisL2Settings) {
    this.prefix = settings.prefix;
    this.signer = settings.signingKey === undefined ? undefined : new EntrySigner(settings.signingKey);
    this.ttlMs = settings.ttlMs;
    this.timeoutMs = settings.timeoutMs;
    this.writeTimeoutMs = settings.writeTimeoutMs;
    this.maxPendingWrites = settings.maxPendingWrites;
    const reconnectMax = settings.reconnectMaxDelayMs;
    this.breaker = new CircuitBreaker({
      failureThreshold: settings.failureThreshold,
      cooldownMs: settings.cooldownMs,
      now: () => performance.now(),
    });
    // ioredis loads only when a Redis L2 is configured.
    const { Redis: RedisClient } = requirePackage<typeof import('ioredis')>('ioredis', 'the Redis L2 cache');
    this.client = new RedisClient(settings.url, {
      // Fail fast instead of queueing while disconnected: a queued read would outlive its caller.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: settings.connectTimeoutMs,
      // null once closed: a connection that drops after close() must not arm another reconnect
      // timer (measured: one left armed kept the host process alive after Redis was killed).
      retryStrategy: (times) => (this.closed ? null : Math.min(25 * 2 ** Math.min(times, 10), reconnectMax)),
      disableClientInfo: true,
      lazyConnect: false,
    });
    // Without a listener, an 'error' event would crash the process.
    this.client.on('error', () => {
      this.counters.l2ConnectionErrors++;
    });
    this.client.once('ready', () => {
      this.everConnected = true;
    });
  }

  get breakerState(): BreakerState {
    return this.breaker.current;
  }

  /** Whether values are signed and verified. */
  get signed(): boolean {
    return this.signer !== undefined;
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
    return this.client.status === 'ready';
  }

  /** Resolves true once connected, false after `timeoutMs` or when closed. Never rejects. */
  ready(timeoutMs: number): Promise<boolean> {
    if (this.client.status === 'ready') return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onReady = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      this.client.once('ready', onReady);
    });
  }

  /**
   * Entries for `keys` (undefined where Redis has none or holds something invalid), or undefined
   * when L2 was skipped or failed. Never rejects; never takes much longer than timeoutMs.
   */
  async getMany(keys: readonly string[], budgetMs: number): Promise<(CacheEntry | undefined)[] | undefined> {
    // Checked before the breaker: a half-open breaker's probe taken here would never be settled.
    if (!this.closed && !this.everConnected && this.client.status !== 'ready') {
      this.counters.l2SkippedConnecting++;
      return undefined;
    }
    if (this.closed || budgetMs < this.timeoutMs || !this.breaker.tryAcquire()) {
      this.counters.l2Skipped++;
      return undefined;
    }
    if (this.client.status !== 'ready') {
      this.counters.l2Errors++;
      this.breaker.onFailure();
      return undefined;
    }
    this.counters.l2Reads += keys.length;
    const redisKeys = new Array<string>(keys.length);
    for (let i = 0; i < keys.length; i++) redisKeys[i] = this.prefix + keys[i];
    const started = performance.now();
    const read = this.client.mgetBuffer(redisKeys);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(resolve, this.timeoutMs, TIMED_OUT);
    });
    let values: (Buffer | null)[] | typeof TIMED_OUT;
    try {
      values = await Promise.race([read, timeout]);
    } catch {
      this.counters.l2Errors++;
      this.breaker.onFailure();
      return undefined;
    } finally {
      clearTimeout(timer);
      this.observeLatency((performance.now() - started) / 1000);
    }
    if (values === TIMED_OUT) {
      read.catch(() => undefined); // the late reply (or error) is dropped
      this.counters.l2Errors++;
      this.counters.l2Timeouts++;
      this.breaker.onFailure();
      return undefined;
    }
    this.breaker.onSuccess();
    const out = new Array<CacheEntry | undefined>(keys.length);
    const signer = this.signer;
    for (let i = 0; i < keys.length; i++) {
      const stored = values[i];
      if (stored === null || stored === undefined) {
        this.counters.l2Misses++;
        continue;
      }
      let bytes: Buffer = stored;
      if (signer !== undefined) {
        // Checked before decoding: bytes nobody holding the key wrote never reach the decoder.
        const payload = signer.verify(redisKeys[i], stored);
        if (payload === undefined) {
          this.counters.l2SignatureFailures++;
          continue;
        }
        bytes = payload;
      }
      const entry = decodeEntry(bytes);
      if (entry === undefined) this.counters.l2Invalid++;
      else out[i] = entry;
    }
    return out;
  }

  private observeLatency(seconds: number): void {
    const bounds = L2_READ_BUCKETS_SECONDS;
    let b = 0;
    while (b < bounds.length && seconds > bounds[b]) b++;
    this.latencyCounts[b]++;
    this.latencySum += seconds;
    this.latencyCount++;
  }

  /** Writes entries in one pipeline, in the background. Never rejects; failures are counted. */
  setMany(items: ReadonlyArray<{ readonly key: string; readonly entry: CacheEntry }>): void {
    if (items.length === 0) return;
    if (!this.closed && !this.everConnected && this.client.status !== 'ready') {
      this.counters.l2SkippedConnecting++;
      return;
    }
    if (this.closed || this.breaker.current === 'open' || this.client.status !== 'ready') {
      this.counters.l2Skipped++;
      return;
    }
    if (this.pendingWrites.size >= this.maxPendingWrites) {
      this.counters.l2WritesDropped++;
      return;
    }
    const pipeline = this.client.pipeline();
    const signer = this.signer;
    for (const { key, entry } of items) {
      const redisKey = this.prefix + key;
      const bytes = encodeEntry(entry);
      pipeline.set(redisKey, signer === undefined ? bytes : signer.sign(redisKey, bytes), 'PX', this.ttlMs);
    }
    const exec = pipeline.exec();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(resolve, this.writeTimeoutMs, TIMED_OUT);
    });
    const tracked: Promise<void> = Promise.race([exec, timeout])
      .then((replies) => {
        if (replies === TIMED_OUT || replies === null) {
          exec.catch(() => undefined);
          this.counters.l2Errors++;
          this.breaker.onFailure();
          return;
        }
        let failed = 0;
        for (const [err] of replies) if (err) failed++;
        this.counters.l2Writes += replies.length - failed;
        if (failed > 0) {
          this.counters.l2Errors++;
          this.breaker.onFailure();
        }
      })
      .catch(() => {
        this.counters.l2Errors++;
        this.breaker.onFailure();
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
