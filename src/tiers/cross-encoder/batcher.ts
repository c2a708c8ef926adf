/**
 * Cross-request dynamic batcher (main thread). Ideas from Triton's dynamic batcher (max queue
 * delay, full batches dispatched at once) and text-embeddings-inference (token-budget batches,
 * the next batch formed while the current one runs).
 *
 * Life of a request: `submit` → tokenize stage (worker task per chunk of passages, so the exact
 * token length of every pair is known here without tokenizing on the main thread) → pairs enter
 * the queue → batches are formed by token budget (padded tokens = longest × count ≤ maxBatchTokens)
 * around the OLDEST queued pair (age priority: no pair waits behind more than the pairs queued
 * before it), filled with the pairs nearest in length (length buckets, so padding stays low) →
 * `infer` on a worker → logits written into the request's own result array at the pair's own
 * index → the request resolves when its last pair is done.
 *
 * Dispatch rules: a batch that fills the budget is dispatched as soon as fewer than workers+1
 * batches are in flight (the +1 waits in the pool queue so a worker never idles between batches);
 * a partial batch goes only to an idle worker, once its oldest pair has waited maxQueueDelayMs or
 * nothing else is being tokenized (waiting then could not bring more pairs). With several idle
 * workers, queued pairs are split between them to cut latency.
 *
 * A request whose AbortSignal fires or whose deadline passes is rejected at once; its queued pairs
 * are dropped before they run (never sent to a worker); pairs already running finish and their
 * results are discarded. Other requests are not affected. The queue is bounded (OverloadedError).
 */
import { positiveInteger } from '../../util/validate-options.js';
import {
  AbortedError,
  DeadlineExceededError,
  DisposedError,
  InvalidArgumentError,
  OverloadedError,
} from '../../errors.js';
import { InferenceError } from './errors.js';

/** Token ids of a chunk of one request's pairs (from the tokenize stage). */
export interface TokenizedChunk {
  readonly ids: Int32Array;
  readonly typeIds: Int32Array;
  readonly lengths: Int32Array;
  readonly offsets: Int32Array;
  /**
   * Long passages cut into windows: pairs per passage (consecutive in lengths/offsets). Absent →
   * one pair per passage. A passage's pairs are batched like any other pairs and its logits are
   * the per-signal max over them.
   */
  readonly chunks?: Int32Array;
}

/** Logits [passages × signals] in input order, and the pairs (windows) each passage was scored as. */
export interface BatcherResult {
  readonly logits: Float64Array;
  readonly chunks: Int32Array;
}

export interface InferBatch {
  readonly ids: Int32Array;
  readonly typeIds: Int32Array | null;
  readonly lengths: Int32Array;
}

export interface InferOutput {
  /** Row-major [batch × signals]. */
  readonly logits: Float64Array;
  /** Time the worker spent on the batch (tensor building + run), ms. */
  readonly runMs: number;
}

/** What the batcher needs from the worker pool (a fake in unit tests). */
export interface PairBatchExecutor {
  /** `live()` turns false once the request settled: an executor may then drop the task unsent. */
  tokenize(query: string, passages: readonly string[], live?: () => boolean): Promise<TokenizedChunk>;
  infer(batch: InferBatch): Promise<InferOutput>;
}

export interface BatcherOptions {
  /** Worker count: batches that can run at once. */
  readonly workers: number;
  /** Logit columns per pair. */
  readonly signals: number;
  /** Padded-token budget per batch (longest pair × pair count). */
  readonly maxBatchTokens: number;
  /** How long a partial batch may wait for more pairs while a worker is idle. */
  readonly maxQueueDelayMs: number;
  /** Pairs waiting (tokenizing or queued, not running) beyond which new requests get OverloadedError. */
  readonly maxPendingPairs: number;
  /** Whether to ship token type ids (the model has a token_type_ids input). */
  readonly useTypeIds: boolean;
  /** Passages per tokenize task (large requests are tokenized in parallel chunks). */
  readonly tokenizeChunk?: number;
  /** Batches allowed in flight; default workers + 1. */
  readonly maxInFlight?: number;
  /** What the batcher serves, in error messages: default 'cross-encoder' (the embedding tier: 'embedding scorer'). */
  readonly name?: string;
}

export interface SubmitOptions {
  readonly signal?: AbortSignal;
  /** Absolute deadline, ms on the Date.now() clock. */
  readonly deadline?: number;
}

export interface BatcherStats {
  readonly pendingRequests: number;
  /** Pairs in the tokenize stage. */
  readonly tokenizingPairs: number;
  /** Tokenized pairs waiting for a batch. */
  readonly queuedPairs: number;
  /** Sum of real token lengths of queued pairs. */
  readonly queuedTokens: number;
  readonly inFlightBatches: number;
  readonly inFlightPairs: number;
  readonly batchesRun: number;
  readonly pairsRun: number;
  /** Pairs dropped before running because their request was aborted, expired or failed. */
  readonly pairsDropped: number;
  readonly meanBatchSize: number;
  /** Share of padded positions that were padding, over all batches run. */
  readonly paddingRatio: number;
  /** Real and padded tokens of all batches run (differences of two snapshots give interval figures). */
  readonly tokensRun: number;
  readonly paddedTokensRun: number;
  /** EWMA of worker time per pair and per padded token, ms (0 until the first batch). */
  readonly msPerPair: number;
  readonly msPerPaddedToken: number;
  /** EWMA of real tokens per pair. */
  readonly meanPairTokens: number;
  /** EWMA of time from submit to the end of tokenization, ms. */
  readonly tokenizeMs: number;
}

const EWMA_ALPHA = 0.1;
/** splitQueue's bound on padded / real tokens (its batches pad at most 1/6 of their positions). */
const SPLIT_MAX_PADDING = 1.2;
const MAX_TIMER_MS = 2 ** 31 - 1;

class RequestState {
  readonly logits: Float64Array;
  /** Pairs per passage (1 unless the passage was chunked). */
  readonly chunks: Int32Array;
  remaining: number;
  settled = false;
  tokenizingPairs: number;
  queuedPairs = 0;
  queuedTokens = 0;
  timer: NodeJS.Timeout | null = null;
  abortListener: (() => void) | null = null;

  constructor(
    readonly size: number,
    signals: number,
    readonly signal: AbortSignal | undefined,
    readonly deadline: number | undefined,
    readonly resolve: (result: BatcherResult) => void,
    readonly reject: (err: Error) => void,
  ) {
    this.logits = new Float64Array(size * signals);
    this.chunks = new Int32Array(size).fill(1);
    this.remaining = size;
    this.tokenizingPairs = size;
  }
}

interface QueuedPair {
  readonly req: RequestState;
  /** Index of the pair in its request. */
  readonly index: number;
  readonly length: number;
  readonly chunk: TokenizedChunk;
  /** Index of the pair inside its chunk. */
  readonly slot: number;
  readonly enqueuedAt: number;
  taken: boolean;
}

/** FIFO with lazy deletion (dead entries are skipped and compacted away). */
class LazyQueue {
  private items: QueuedPair[] = [];
  private head = 0;

  push(item: QueuedPair): void {
    this.items.push(item);
  }

  /** First live entry, dropping dead ones from the front. */
  peek(): QueuedPair | undefined {
    while (this.head < this.items.length) {
      const item = this.items[this.head];
      if (!item.taken && !item.req.settled) return item;
      this.head++;
    }
    this.compact();
    return undefined;
  }

  /** Up to `limit` live entries from the front, oldest first (not removed). */
  *live(): Generator<QueuedPair> {
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i];
      if (!item.taken && !item.req.settled) yield item;
    }
  }

  compact(): void {
    if (this.head > 256 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    if (this.head >= this.items.length) {
      this.items = [];
      this.head = 0;
    }
  }

  /** Drops every dead entry (used when many died at once, e.g. a big request aborted). */
  sweep(): void {
    this.items = this.items.slice(this.head).filter((i) => !i.taken && !i.req.settled);
    this.head = 0;
  }

  get rawSize(): number {
    return this.items.length - this.head;
  }
}

export class DynamicBatcher {
  private readonly opts: Required<BatcherOptions>;
  /** Arrival order: gives the anchor (oldest pair) of every batch. */
  private readonly fifo = new LazyQueue();
  /** buckets[len]: queued pairs of that token length, oldest first. */
  private readonly buckets = new Map<number, LazyQueue>();
  private readonly requests = new Set<RequestState>();
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private tokenizingPairs = 0;
  private tokenizingTasks = 0;
  private queuedPairs = 0;
  private queuedTokens = 0;
  private inFlightBatches = 0;
  private inFlightPairs = 0;
  private inFlightPaddedTokens = 0;
  private readonly settledWork = new Set<Promise<unknown>>();
  private batchesRun = 0;
  private pairsRun = 0;
  private pairsDropped = 0;
  private paddedTokensRun = 0;
  private realTokensRun = 0;
  private ewmaMsPerPair = 0;
  private ewmaMsPerToken = 0;
  private ewmaPairTokens = 0;
  private ewmaTokenizeMs = 0;

  constructor(
    private readonly executor: PairBatchExecutor,
    options: BatcherOptions,
  ) {
    positiveInteger('workers', options.workers);
    positiveInteger('signals', options.signals);
    positiveInteger('maxBatchTokens', options.maxBatchTokens);
    positiveInteger('maxPendingPairs', options.maxPendingPairs);
    if (!(options.maxQueueDelayMs >= 0) || !Number.isFinite(options.maxQueueDelayMs)) {
      throw new InvalidArgumentError(
        `maxQueueDelayMs must be a finite number >= 0, got ${String(options.maxQueueDelayMs)}`,
      );
    }
    const tokenizeChunk = options.tokenizeChunk ?? 32;
    const maxInFlight = options.maxInFlight ?? options.workers + 1;
    positiveInteger('tokenizeChunk', tokenizeChunk);
    positiveInteger('maxInFlight', maxInFlight);
    this.opts = { ...options, tokenizeChunk, maxInFlight, name: options.name ?? 'cross-encoder' };
  }

  /**
   * Scores `passages` against `query`; resolves to row-major logits [passages × signals] in input
   * order. Rejects with AbortedError / DeadlineExceededError / OverloadedError / DisposedError.
   */
  submit(query: string, passages: readonly string[], options: SubmitOptions = {}): Promise<Float64Array> {
    return this.submitWithChunks(query, passages, options).then((r) => r.logits);
  }

  /** `submit`, also telling how many pairs (windows) each passage was scored as. */
  submitWithChunks(query: string, passages: readonly string[], options: SubmitOptions = {}): Promise<BatcherResult> {
    const { signal, deadline } = options;
    if (this.closed) return Promise.reject(new DisposedError(this.opts.name));
    if (passages.length === 0) return Promise.resolve({ logits: new Float64Array(0), chunks: new Int32Array(0) });
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (deadline !== undefined && deadline <= Date.now()) return Promise.reject(new DeadlineExceededError());
    const pending = this.tokenizingPairs + this.queuedPairs;
    if (pending + passages.length > this.opts.maxPendingPairs) {
      return Promise.reject(
        new OverloadedError(
          `${this.opts.name} queue is full: ${pending} pairs pending + ${passages.length} > maxPendingPairs ${this.opts.maxPendingPairs}`,
        ),
      );
    }
    return new Promise<BatcherResult>((resolve, reject) => {
      const req = new RequestState(passages.length, this.opts.signals, signal, deadline, resolve, reject);
      this.requests.add(req);
      this.tokenizingPairs += req.size;
      if (signal) {
        req.abortListener = () => this.fail(req, abortError(signal));
        signal.addEventListener('abort', req.abortListener, { once: true });
      }
      // Timers above 2^31-1 ms fire at once in Node; such far deadlines are only checked when batching.
      if (deadline !== undefined && deadline - Date.now() <= MAX_TIMER_MS) {
        req.timer = setTimeout(() => this.fail(req, new DeadlineExceededError()), Math.max(0, deadline - Date.now()));
      }
      const started = performance.now();
      const chunk = this.opts.tokenizeChunk;
      for (let start = 0; start < passages.length; start += chunk) {
        const part = passages.slice(start, start + chunk);
        this.tokenizingTasks++;
        const work = this.executor
          .tokenize(query, part, () => !req.settled && !this.closed)
          .then(
            (tokens) => {
              this.tokenizingTasks--;
              try {
                this.onTokenized(req, start, part.length, tokens, performance.now() - started);
              } catch (err) {
                this.fail(req, asError(err));
              }
            },
            (err: unknown) => {
              this.tokenizingTasks--;
              this.releaseTokenizing(req, part.length);
              this.fail(req, asError(err));
              this.pump();
            },
          );
        this.track(work);
      }
    });
  }

  /** Live counters; cheap (no allocation beyond the returned object). */
  stats(): BatcherStats {
    return {
      pendingRequests: this.requests.size,
      tokenizingPairs: this.tokenizingPairs,
      queuedPairs: this.queuedPairs,
      queuedTokens: this.queuedTokens,
      inFlightBatches: this.inFlightBatches,
      inFlightPairs: this.inFlightPairs,
      batchesRun: this.batchesRun,
      pairsRun: this.pairsRun,
      pairsDropped: this.pairsDropped,
      meanBatchSize: this.batchesRun === 0 ? 0 : this.pairsRun / this.batchesRun,
      paddingRatio: this.paddingRatio(),
      tokensRun: this.realTokensRun,
      paddedTokensRun: this.paddedTokensRun,
      msPerPair: this.ewmaMsPerPair,
      msPerPaddedToken: this.ewmaMsPerToken,
      meanPairTokens: this.ewmaPairTokens,
      tokenizeMs: this.ewmaTokenizeMs,
    };
  }

  /**
   * Pairs being tokenized, queued or in flight. The router asks several times a call (a tier's
   * backlog), so this reads the counters without building the stats object: building it was most
   * of what a cascade server promoted to the old generation with every pair cached (2.8 → 0.5
   * MB/s at 700 requests/s; docs/router.md).
   */
  pendingPairs(): number {
    return this.tokenizingPairs + this.queuedPairs + this.inFlightPairs;
  }

  /** Share of the padded tokens run that were padding (0 before any batch). */
  private paddingRatio(): number {
    return this.paddedTokensRun === 0 ? 0 : 1 - this.realTokensRun / this.paddedTokensRun;
  }

  /**
   * Predicted ms until a request of `pairs` new pairs (of `tokensPerPair` tokens, default the
   * running mean) would complete if submitted now: all work ahead of it (pending pairs plus half of
   * what is running) and its own, at the measured cost per padded token, spread over the workers,
   * plus tokenization. Returns 0 before any batch has run (no measurement yet).
   */
  estimateWaitMs(pairs: number, tokensPerPair?: number): number {
    if (this.ewmaMsPerToken === 0) return 0;
    const perPair = tokensPerPair ?? (this.ewmaPairTokens || 128);
    const padFactor = 1 / Math.max(0.05, 1 - this.paddingRatio());
    const aheadTokens = this.queuedTokens + this.tokenizingPairs * perPair;
    const workTokens = (aheadTokens + pairs * perPair) * padFactor + this.inFlightPaddedTokens * 0.5;
    // Work smaller than one batch runs on one worker; more spreads over all of them.
    const parallel = Math.min(this.opts.workers, Math.max(1, Math.ceil(workTokens / this.opts.maxBatchTokens)));
    return this.ewmaTokenizeMs + (workTokens * this.ewmaMsPerToken) / parallel;
  }

  /** Rejects every pending request with DisposedError and stops; waits for in-flight work to settle. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const req of [...this.requests]) this.fail(req, new DisposedError(this.opts.name));
  }

  /**
   * Graceful stop: refuses new work, rejects (DisposedError) every request that still has pairs
   * tokenizing or queued, and lets requests whose remaining pairs are all running finish normally,
   * for at most `timeoutMs`; whatever is still pending then is rejected with DisposedError.
   */
  async drain(timeoutMs: number): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      for (const req of [...this.requests]) {
        if (req.queuedPairs > 0 || req.tokenizingPairs > 0) this.fail(req, new DisposedError(this.opts.name));
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, timeoutMs));
      timer.unref();
    });
    await Promise.race([this.inFlightWork(), timedOut]);
    clearTimeout(timer);
    for (const req of [...this.requests]) this.fail(req, new DisposedError(this.opts.name));
  }

  /** Promises of running tokenize/infer calls (the owner waits on them after stopping the pool). */
  inFlightWork(): Promise<unknown> {
    return Promise.allSettled([...this.settledWork]);
  }

  private track(work: Promise<unknown>): void {
    // Both outcomes are handled where the work was created; this only keeps the set current.
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.settledWork.add(settled);
    void settled.then(() => this.settledWork.delete(settled));
  }

  private releaseTokenizing(req: RequestState, count: number): void {
    req.tokenizingPairs -= count;
    if (!req.settled) this.tokenizingPairs -= count;
  }

  private onTokenized(
    req: RequestState,
    start: number,
    count: number,
    tokens: TokenizedChunk,
    elapsedMs: number,
  ): void {
    this.releaseTokenizing(req, count);
    this.ewmaTokenizeMs = ewma(this.ewmaTokenizeMs, elapsedMs);
    if (req.settled || this.closed) return;
    const chunks = tokens.chunks;
    let pairs = count;
    if (chunks !== undefined) {
      pairs = 0;
      for (let i = 0; i < chunks.length; i++) pairs += chunks[i];
    }
    if (tokens.lengths.length !== pairs || (chunks !== undefined && chunks.length !== count)) {
      this.fail(
        req,
        new InvalidArgumentError(`tokenizer returned ${tokens.lengths.length} pairs for ${count} passages`),
      );
      return;
    }
    if (chunks !== undefined) {
      // A chunked passage resolves after all its pairs; its logits start at -Infinity for the max.
      const signals = this.opts.signals;
      for (let i = 0; i < count; i++) {
        const n = chunks[i];
        if (n < 1) {
          this.fail(req, new InvalidArgumentError(`tokenizer returned ${n} pairs for passage ${start + i}`));
          return;
        }
        req.chunks[start + i] = n;
        if (n > 1) req.logits.fill(Number.NEGATIVE_INFINITY, (start + i) * signals, (start + i + 1) * signals);
      }
      req.remaining += pairs - count;
    }
    const now = performance.now();
    // Pair `slot` of the chunk belongs to passage `i`; `left` pairs of passage i remain after it.
    for (let slot = 0, i = 0, left = chunks?.[0] ?? 1; slot < pairs; slot++) {
      const length = tokens.lengths[slot];
      const item: QueuedPair = { req, index: start + i, length, chunk: tokens, slot, enqueuedAt: now, taken: false };
      if (--left === 0) {
        i++;
        left = chunks?.[i] ?? 1;
      }
      this.fifo.push(item);
      let bucket = this.buckets.get(length);
      if (!bucket) {
        bucket = new LazyQueue();
        this.buckets.set(length, bucket);
      }
      bucket.push(item);
      req.queuedPairs++;
      req.queuedTokens += length;
      this.queuedPairs++;
      this.queuedTokens += length;
      this.ewmaPairTokens = ewma(this.ewmaPairTokens, length);
    }
    this.pump();
  }

  /** Settles a request with an error (once); its queued pairs stop counting and will be skipped. */
  private fail(req: RequestState, err: Error): void {
    if (req.settled) return;
    this.settle(req);
    this.pairsDropped += req.queuedPairs + req.tokenizingPairs;
    req.reject(err);
    if (this.fifo.rawSize > 1024 && this.fifo.rawSize > 4 * this.queuedPairs) this.sweepAll();
  }

  private settle(req: RequestState): void {
    req.settled = true;
    this.requests.delete(req);
    this.queuedPairs -= req.queuedPairs;
    this.queuedTokens -= req.queuedTokens;
    this.tokenizingPairs -= req.tokenizingPairs;
    if (req.timer) clearTimeout(req.timer);
    if (req.signal && req.abortListener) req.signal.removeEventListener('abort', req.abortListener);
    req.timer = null;
    req.abortListener = null;
  }

  private sweepAll(): void {
    this.fifo.sweep();
    for (const [len, bucket] of this.buckets) {
      bucket.sweep();
      if (bucket.rawSize === 0) this.buckets.delete(len);
    }
  }

  /** Dispatches every batch the rules allow now; arms the delay timer otherwise. */
  private pump(): void {
    if (this.closed) return;
    while (this.inFlightBatches < this.opts.maxInFlight) {
      const oldest = this.oldestLive();
      if (oldest === undefined) return;
      const idle = this.opts.workers - this.inFlightBatches;
      if (idle >= 2 && this.tokenizingTasks === 0 && this.queuedTokens <= idle * this.opts.maxBatchTokens) {
        const groups = this.splitQueue(idle);
        if (groups !== null) {
          for (const group of groups) this.dispatch(group);
          continue;
        }
      }
      const full = this.queuedTokens >= this.opts.maxBatchTokens;
      let maxPairs = Number.POSITIVE_INFINITY;
      if (!full) {
        if (idle <= 0) return;
        const waitedMs = performance.now() - oldest.enqueuedAt;
        if (this.tokenizingTasks > 0 && waitedMs < this.opts.maxQueueDelayMs) {
          this.armTimer(oldest.enqueuedAt + this.opts.maxQueueDelayMs);
          return;
        }
        // Spread a small queue over the idle workers (lower latency than one worker doing it all).
        maxPairs = Math.ceil(this.queuedPairs / idle);
      }
      this.dispatch(this.formBatch(oldest, this.opts.maxBatchTokens, maxPairs));
    }
  }

  /**
   * The whole queue as one batch per idle worker, when it can all go out now: split by length
   * (longest first, greedy) at the smallest padded size per batch that needs at most `idle`
   * batches, so the idle workers finish together. A lone k = 20 request was otherwise run as three
   * efficiency-chosen batches on two workers, one of them running two (docs/cross-encoder.md).
   * Null when one batch per idle worker does not fit the token budget or pads too much.
   */
  private splitQueue(idle: number): QueuedPair[][] | null {
    const now = Date.now();
    const items: QueuedPair[] = [];
    for (const item of this.fifo.live()) {
      if (item.req.deadline !== undefined && item.req.deadline <= now) return null; // the normal path expires it
      items.push(item);
    }
    if (items.length < 2) return null;
    items.sort((a, b) => b.length - a.length);
    const groupsFor = (cap: number): QueuedPair[][] | null => {
      const groups: QueuedPair[][] = [];
      for (let i = 0; i < items.length; ) {
        const longest = items[i].length;
        const count = Math.max(1, Math.floor(cap / longest));
        groups.push(items.slice(i, i + count));
        if (groups.length > idle) return null;
        i += count;
      }
      return groups;
    };
    let lo = items[0].length;
    let hi = this.opts.maxBatchTokens;
    if (lo > hi || groupsFor(hi) === null) return null;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (groupsFor(mid) === null) lo = mid + 1;
      else hi = mid;
    }
    const groups = groupsFor(lo)!;
    // Not when it pads much more than length-sorted batches do (measured: at max length 512 the
    // even split padded 28 % of its positions and was slower than the batches it replaced).
    let real = 0;
    let padded = 0;
    for (const g of groups) {
      padded += g.length * g[0].length;
      for (const item of g) real += item.length;
    }
    if (padded > SPLIT_MAX_PADDING * real) return null;
    for (const item of items) item.taken = true;
    for (const [len, bucket] of this.buckets) if (bucket.peek() === undefined) this.buckets.delete(len);
    return groups;
  }

  /** Oldest queued pair whose request is still live; expires requests whose deadline passed. */
  private oldestLive(): QueuedPair | undefined {
    const now = Date.now();
    for (;;) {
      const item = this.fifo.peek();
      if (item === undefined) return undefined;
      if (item.req.deadline !== undefined && item.req.deadline <= now) {
        this.fail(item.req, new DeadlineExceededError());
        continue;
      }
      return item;
    }
  }

  private armTimer(at: number): void {
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.pump();
      },
      Math.max(0, Math.ceil(at - performance.now())),
    );
  }

  /**
   * The batch around `anchor` (the oldest pair): candidates are the live pairs nearest in length
   * below and above it (from the length buckets); among the windows of consecutive lengths that
   * contain the anchor and fit the budget (count × longest ≤ targetTokens, count ≤ maxPairs), take
   * the one with the best efficiency = real tokens / (RUN_OVERHEAD_TOKENS + padded tokens). This
   * trades padding against per-run overhead and keeps short and long pairs apart.
   */
  private formBatch(anchor: QueuedPair, targetTokens: number, maxPairs: number): QueuedPair[] {
    const now = Date.now();
    const live = (item: QueuedPair) => {
      if (item === anchor || item.taken || item.req.settled) return false;
      if (item.req.deadline !== undefined && item.req.deadline <= now) {
        this.fail(item.req, new DeadlineExceededError());
        return false;
      }
      return true;
    };
    const limit = Math.min(maxPairs, MAX_CANDIDATES_PER_SIDE);
    const lengths = [...this.buckets.keys()];
    const below: QueuedPair[] = [];
    const shorter = lengths.filter((l) => l <= anchor.length).sort((x, y) => y - x);
    collectBelow: for (const len of shorter) {
      for (const item of this.buckets.get(len)!.live()) {
        if (below.length >= limit - 1) break collectBelow;
        if (live(item)) below.push(item);
      }
    }
    const above: QueuedPair[] = [];
    const longer = lengths.filter((l) => l > anchor.length).sort((x, y) => x - y);
    collectAbove: for (const len of longer) {
      if (2 * len > targetTokens) break;
      for (const item of this.buckets.get(len)!.live()) {
        if (above.length >= limit - 1) break collectAbove;
        if (live(item)) above.push(item);
      }
    }
    below.reverse();
    const cand = [...below, anchor, ...above];
    const ai = below.length;
    let best = { s: ai, e: ai, eff: anchor.length / (RUN_OVERHEAD_TOKENS + anchor.length) };
    let realToE = 0;
    for (let e = ai; e < cand.length; e++) {
      const maxLen = cand[e].length;
      realToE += cand[e].length;
      if ((e - ai + 1) * maxLen > targetTokens || e - ai + 1 > maxPairs) break;
      let real = realToE;
      for (let st = ai; st >= 0; st--) {
        if (st < ai) real += cand[st].length;
        const count = e - st + 1;
        if (count > maxPairs || count * maxLen > targetTokens) break;
        const eff = real / (RUN_OVERHEAD_TOKENS + count * maxLen);
        if (eff > best.eff) best = { s: st, e, eff };
      }
    }
    const batch = cand.slice(best.s, best.e + 1);
    for (const item of batch) item.taken = true;
    for (const len of lengths) {
      const bucket = this.buckets.get(len)!;
      if (bucket.peek() === undefined) this.buckets.delete(len);
    }
    return batch;
  }

  private dispatch(batch: QueuedPair[]): void {
    // Deadline checks above may have failed requests whose pairs were already taken.
    const pairs = batch.filter((p) => !p.req.settled);
    for (const p of batch) {
      p.req.queuedPairs--;
      p.req.queuedTokens -= p.length;
      if (!p.req.settled) {
        this.queuedPairs--;
        this.queuedTokens -= p.length;
      }
    }
    if (pairs.length === 0) return;
    let total = 0;
    let maxLen = 0;
    for (const p of pairs) {
      total += p.length;
      maxLen = Math.max(maxLen, p.length);
    }
    const ids = new Int32Array(total);
    const typeIds = this.opts.useTypeIds ? new Int32Array(total) : null;
    const lengths = new Int32Array(pairs.length);
    let pos = 0;
    pairs.forEach((p, k) => {
      const from = p.chunk.offsets[p.slot];
      ids.set(p.chunk.ids.subarray(from, from + p.length), pos);
      if (typeIds) typeIds.set(p.chunk.typeIds.subarray(from, from + p.length), pos);
      lengths[k] = p.length;
      pos += p.length;
    });
    const padded = maxLen * pairs.length;
    this.inFlightBatches++;
    this.inFlightPairs += pairs.length;
    this.inFlightPaddedTokens += padded;
    const work = this.executor.infer({ ids, typeIds, lengths }).then(
      (out) => {
        this.finishBatch(pairs.length, padded);
        try {
          this.deliver(pairs, out, padded, total);
        } catch (err) {
          const error = asError(err);
          for (const p of pairs) this.fail(p.req, error);
        }
      },
      (err: unknown) => {
        this.finishBatch(pairs.length, padded);
        const error = asError(err);
        for (const p of pairs) this.fail(p.req, error);
      },
    );
    this.track(work.finally(() => this.pump()));
  }

  /** Writes a finished batch's logits into each live request at the pair's own index. */
  private deliver(pairs: readonly QueuedPair[], out: InferOutput, padded: number, total: number): void {
    this.batchesRun++;
    this.pairsRun += pairs.length;
    this.paddedTokensRun += padded;
    this.realTokensRun += total;
    this.ewmaMsPerPair = ewma(this.ewmaMsPerPair, out.runMs / pairs.length);
    this.ewmaMsPerToken = ewma(this.ewmaMsPerToken, out.runMs / padded);
    const signals = this.opts.signals;
    if (!(out.logits instanceof Float64Array) || out.logits.length !== pairs.length * signals) {
      throw new InferenceError(
        `worker returned ${String(out.logits?.length)} logits for ${pairs.length} pairs × ${signals} signals`,
      );
    }
    pairs.forEach((p, k) => {
      const req = p.req;
      if (req.settled) return;
      if (req.chunks[p.index] > 1) {
        // One window of a chunked passage: the passage keeps the max of each signal's logit.
        for (let s = 0; s < signals; s++) {
          const at = p.index * signals + s;
          req.logits[at] = Math.max(req.logits[at], out.logits[k * signals + s]);
        }
      } else {
        for (let s = 0; s < signals; s++) req.logits[p.index * signals + s] = out.logits[k * signals + s];
      }
      if (--req.remaining === 0) {
        this.settle(req);
        req.resolve({ logits: req.logits, chunks: req.chunks });
      }
    });
  }

  private finishBatch(count: number, padded: number): void {
    this.inFlightBatches--;
    this.inFlightPairs -= count;
    this.inFlightPaddedTokens -= padded;
  }
}

/**
 * Fixed cost of one inference run expressed in padded tokens (session.run overhead, tensor
 * building, thread hand-off). Larger favours bigger batches over tighter length matching.
 */
const RUN_OVERHEAD_TOKENS = 256;
/** Bound on the candidates examined on each side of the anchor (keeps batch forming O(small)). */
const MAX_CANDIDATES_PER_SIDE = 256;

function ewma(prev: number, sample: number): number {
  return prev === 0 ? sample : prev + EWMA_ALPHA * (sample - prev);
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function abortError(signal: AbortSignal): AbortedError {
  const reason: unknown = signal.reason;
  return new AbortedError(
    reason instanceof Error && reason.message
      ? `the operation was aborted: ${reason.message}`
      : 'the operation was aborted',
    { cause: reason },
  );
}
