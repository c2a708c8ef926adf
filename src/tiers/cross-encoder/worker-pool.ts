/**
 * The cross-encoder worker threads, seen by the batcher as a PairBatchExecutor.
 *
 * Rule one: a thread is never terminated while it may be inside `session.run` or loading a
 * session. onnxruntime-node aborts the whole process when that happens (a Napi::Error thrown
 * into a terminating environment), so this pool stops a worker only by asking it (`shutdown`,
 * sent only while the worker runs nothing); the worker releases its session and exits by itself.
 * `Worker.terminate()` is used only on a worker that runs nothing and did not exit when asked.
 *
 * - Start: every worker loads and probes the model; the pool waits until EVERY probe settled
 *   before it stops anything, so one worker's failure cannot tear down another mid-probe.
 * - Tasks: one at a time per worker; tokenize tasks go before queued inference batches (the
 *   batcher keeps one batch waiting so workers never idle, and a new request's tokenization must
 *   not wait behind it). A queued tokenize task whose request has settled is dropped unsent.
 * - Death: a worker that exits unexpectedly fails only the task it held (InferenceError) and is
 *   replaced (back-off after repeated load failures; while no worker can load, queued tasks fail
 *   with the load error instead of waiting).
 * - Close: stops intake, rejects queued tasks with DisposedError, lets running tasks finish, then
 *   asks every worker to exit. `close(timeoutMs)` resolves once all exited or the timeout passed;
 *   a worker still inside a run then is left to finish it and exits right after (it keeps the
 *   process alive until then: letting the process exit under it would abort it the same way).
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DisposedError } from '../../errors.js';
import type { InferBatch, InferOutput, PairBatchExecutor, TokenizedChunk } from './batcher.js';
import { InferenceError, reviveError } from './errors.js';
import type {
  DescribeResult,
  FromWorker,
  InferResult,
  TokenizeResult,
  ToWorker,
  WorkerConfig,
  WorkerTask,
} from './protocol.js';

/**
 * Worker module path and how to start it, for the way this module itself was loaded: `worker.js`
 * from dist; under tsx/vitest `worker.ts`, loaded by a one-line bootstrap that first registers tsx's
 * loader in the thread (a .ts file cannot be a thread's first module).
 */
export function resolveWorkerEntry(): { filename: string; execArgv: string[]; eval: boolean } {
  const self = fileURLToPath(import.meta.url);
  const ext = extname(self);
  const url = new URL(`./worker${ext}`, import.meta.url);
  if (ext !== '.ts') return { filename: fileURLToPath(url), execArgv: [], eval: false };
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return { filename: bootstrap, execArgv: [], eval: true };
}

/** Default bound of close(): how long running batches may take to finish before close() returns. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;
/** How long a worker asked to exit (while idle) may take before it is terminated (safe: idle). */
const EXIT_GRACE_MS = 5_000;
/** Replacement back-off after consecutive load failures: 100 ms doubling up to 5 s. */
const RESPAWN_BASE_MS = 100;
const RESPAWN_MAX_MS = 5_000;

interface Job {
  readonly id: number;
  readonly task: WorkerTask;
  readonly transfer: ArrayBuffer[];
  readonly resolve: (value: TokenizeResult | InferResult) => void;
  readonly reject: (error: Error) => void;
  /** For tokenize tasks: false once the request settled (then the task is dropped unsent). */
  readonly live?: () => boolean;
}

type SlotState = 'loading' | 'idle' | 'busy' | 'stopping' | 'exited';

interface Slot {
  readonly index: number;
  readonly worker: Worker;
  state: SlotState;
  job: Job | undefined;
  /** Last 'error' event of the thread (an uncaught exception), reported when it exits. */
  lastError: Error | undefined;
  readonly exited: Promise<number>;
  /** Settles once the load settled (ready, failed, or exited first). */
  readonly loaded: Promise<DescribeResult | Error>;
}

export interface WorkerPoolOptions {
  readonly workers: number;
  /** What the pool serves, in error messages (default 'cross-encoder'; the embedding tier says 'embedding'). */
  readonly label?: string;
  /** Unix nice increment of the worker threads (0 = same priority as the main thread). */
  readonly niceIncrement?: number;
}

export interface WorkerPoolStats {
  /** Workers able to take tasks (idle or busy). */
  readonly readyWorkers: number;
  /** Workers loading (replacements). */
  readonly loadingWorkers: number;
  /** Workers that exited unexpectedly (crash, uncaught error, process.exit in the thread). */
  readonly crashes: number;
  /** Replacement workers that loaded. */
  readonly replacements: number;
  /** Tasks failed because their worker died. */
  readonly tasksLostToCrashes: number;
  /** Queued tokenize tasks dropped unsent because their request had already settled. */
  readonly tasksDropped: number;
}

export interface PoolCloseReport {
  /** Workers still finishing a run when close() returned (they exit right after it). */
  readonly stillRunning: number;
}

export class CrossEncoderWorkerPool implements PairBatchExecutor {
  readonly workers: number;
  private readonly slots: Array<Slot | undefined>;
  private readonly high: Job[] = [];
  private readonly normal: Job[] = [];
  private readonly entry = resolveWorkerEntry();
  private nextId = 1;
  private closed = false;
  /** Replacements start only after start() succeeded (a failed start closes the pool). */
  private started = false;
  private consecutiveLoadFailures = 0;
  private lastLoadError: Error | undefined;
  private readonly respawnTimers = new Set<NodeJS.Timeout>();
  private counters = { crashes: 0, replacements: 0, tasksLostToCrashes: 0, tasksDropped: 0 };
  /** What the pool serves, in messages. */
  private readonly label: string;

  private constructor(
    private readonly config: WorkerConfig,
    private readonly options: WorkerPoolOptions,
  ) {
    this.workers = options.workers;
    this.label = options.label ?? 'cross-encoder';
    this.slots = new Array<Slot | undefined>(options.workers).fill(undefined);
  }

  /**
   * Starts the workers and waits until every one of them loaded or failed. If any failed, all are
   * stopped (each only after its own load settled) and the first failure is thrown, typed.
   */
  static async start(
    config: WorkerConfig,
    options: WorkerPoolOptions,
  ): Promise<{ pool: CrossEncoderWorkerPool; describe: DescribeResult }> {
    const pool = new CrossEncoderWorkerPool(config, options);
    for (let i = 0; i < options.workers; i++) pool.spawn(i);
    const outcomes = await Promise.all(pool.slots.map((slot) => (slot as Slot).loaded));
    const failure = outcomes.find((o): o is Error => o instanceof Error);
    if (failure !== undefined) {
      await pool.close(DEFAULT_CLOSE_TIMEOUT_MS);
      throw failure;
    }
    pool.started = true;
    return { pool, describe: outcomes[0] as DescribeResult };
  }

  tokenize(query: string, passages: readonly string[], live?: () => boolean): Promise<TokenizedChunk> {
    return this.submit({ kind: 'tokenize', query, passages }, [], true, live) as Promise<TokenizeResult>;
  }

  infer(batch: InferBatch): Promise<InferOutput> {
    const transfer: ArrayBuffer[] = [batch.ids.buffer as ArrayBuffer, batch.lengths.buffer as ArrayBuffer];
    if (batch.typeIds) transfer.push(batch.typeIds.buffer as ArrayBuffer);
    const task = { kind: 'infer' as const, ids: batch.ids, typeIds: batch.typeIds, lengths: batch.lengths };
    return this.submit(task, transfer, false) as Promise<InferResult>;
  }

  stats(): WorkerPoolStats {
    let ready = 0;
    let loading = 0;
    for (const slot of this.slots) {
      if (slot?.state === 'idle' || slot?.state === 'busy') ready++;
      else if (slot?.state === 'loading') loading++;
    }
    return { readyWorkers: ready, loadingWorkers: loading, ...this.counters };
  }

  /**
   * Stops intake, rejects queued tasks with DisposedError, lets running tasks finish and asks
   * every worker to exit. Resolves when all exited or after `timeoutMs`. Idempotent.
   */
  async close(timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS): Promise<PoolCloseReport> {
    if (!this.closed) {
      this.closed = true;
      for (const timer of this.respawnTimers) clearTimeout(timer);
      this.respawnTimers.clear();
      const disposed = new DisposedError(`${this.label} worker pool`);
      for (const job of this.high.splice(0)) job.reject(disposed);
      for (const job of this.normal.splice(0)) job.reject(disposed);
      for (const slot of this.slots) if (slot !== undefined && slot.state === 'idle') this.stop(slot);
      // Loading and busy slots are stopped when their load or task settles (see onMessage/onLoaded).
    }
    const exits = Promise.all(this.slots.map((slot) => slot?.exited));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([exits, timedOut]);
    clearTimeout(timer);
    const stillRunning = this.slots.filter((s) => s !== undefined && s.state !== 'exited').length;
    return { stillRunning };
  }

  private submit(
    task: WorkerTask,
    transfer: ArrayBuffer[],
    high: boolean,
    live?: () => boolean,
  ): Promise<TokenizeResult | InferResult> {
    if (this.closed) return Promise.reject(new DisposedError(`${this.label} worker pool`));
    if (this.lastLoadError !== undefined && !this.slots.some((s) => s?.state === 'idle' || s?.state === 'busy')) {
      // No worker can take it and the last load failed: fail now rather than wait for a deadline.
      return Promise.reject(this.unavailable());
    }
    return new Promise((resolve, reject) => {
      const job: Job = { id: this.nextId++, task, transfer, resolve, reject, live };
      (high ? this.high : this.normal).push(job);
      this.dispatch();
    });
  }

  private unavailable(): InferenceError {
    return new InferenceError(
      `no ${this.label} worker is available: replacements fail to load (${this.lastLoadError?.message ?? 'unknown'})`,
      { cause: this.lastLoadError },
    );
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot === undefined || slot.state !== 'idle') continue;
      const job = this.nextJob();
      if (job === undefined) return;
      slot.state = 'busy';
      slot.job = job;
      const message: ToWorker = { type: 'task', id: job.id, task: job.task };
      try {
        slot.worker.postMessage(message, job.transfer);
      } catch (cause) {
        slot.state = 'idle';
        slot.job = undefined;
        job.reject(new InferenceError(`cannot send a task to a ${this.label} worker: ${String(cause)}`, { cause }));
      }
    }
  }

  private nextJob(): Job | undefined {
    for (;;) {
      const job = this.high.shift() ?? this.normal.shift();
      if (job === undefined) return undefined;
      if (job.live === undefined || job.live()) return job;
      this.counters.tasksDropped++;
      job.reject(new DisposedError('tokenize task of a settled request'));
    }
  }

  private spawn(index: number, replacement = false): void {
    const config: WorkerConfig = {
      ...this.config,
      workerIndex: index,
      replacement,
      niceIncrement: this.options.niceIncrement,
    };
    const worker = new Worker(this.entry.filename, {
      workerData: config,
      execArgv: this.entry.execArgv,
      eval: this.entry.eval,
    });
    let settleLoad!: (value: DescribeResult | Error) => void;
    const loaded = new Promise<DescribeResult | Error>((resolve) => {
      settleLoad = resolve;
    });
    let markExited!: (code: number) => void;
    const exited = new Promise<number>((resolve) => {
      markExited = resolve;
    });
    const slot: Slot = { index, worker, state: 'loading', job: undefined, lastError: undefined, exited, loaded };
    this.slots[index] = slot;
    worker.on('message', (message: FromWorker) => this.onMessage(slot, message, settleLoad));
    worker.on('error', (error: Error) => {
      slot.lastError = error;
    });
    worker.on('messageerror', (error: Error) => {
      slot.lastError = error;
    });
    worker.on('exit', (code: number) => {
      this.onExit(slot, code, settleLoad);
      markExited(code);
    });
  }

  private onMessage(slot: Slot, message: FromWorker, settleLoad: (value: DescribeResult | Error) => void): void {
    switch (message.type) {
      case 'ready': {
        if (slot.state !== 'loading') return;
        settleLoad(message.describe);
        this.consecutiveLoadFailures = 0;
        this.lastLoadError = undefined;
        this.takeNextOrStop(slot);
        return;
      }
      case 'init-failed': {
        const error = reviveError(message.error);
        settleLoad(error);
        this.lastLoadError = error;
        // The worker leaves by itself after this message; mark it so no task is sent to it.
        slot.state = 'stopping';
        this.armExitGrace(slot);
        return;
      }
      case 'result':
      case 'failure': {
        const job = slot.job;
        if (job === undefined || job.id !== message.id) return;
        slot.job = undefined;
        if (message.type === 'result') job.resolve(message.result);
        else job.reject(reviveError(message.error));
        this.takeNextOrStop(slot);
        return;
      }
    }
  }

  /** A worker that finished loading or a task: takes the next task, or stops when the pool is closing. */
  private takeNextOrStop(slot: Slot): void {
    if (this.closed) {
      this.stop(slot);
      return;
    }
    slot.state = 'idle';
    this.dispatch();
  }

  private onExit(slot: Slot, code: number, settleLoad: (value: DescribeResult | Error) => void): void {
    const previous = slot.state;
    slot.state = 'exited';
    const why = slot.lastError ? `: ${slot.lastError.message}` : '';
    if (previous === 'loading') {
      // Died before reporting: a load failure like any other.
      const error = new InferenceError(`a ${this.label} worker exited with code ${code} while loading${why}`);
      settleLoad(error);
      this.lastLoadError = error;
    }
    const job = slot.job;
    slot.job = undefined;
    if (job !== undefined) {
      this.counters.tasksLostToCrashes++;
      job.reject(
        new InferenceError(
          `the ${this.label} worker running this ${job.task.kind} task exited with code ${code}${why}`,
        ),
      );
    }
    const unexpected = previous === 'idle' || previous === 'busy' || previous === 'loading';
    if (unexpected && previous !== 'loading') this.counters.crashes++;
    if (this.closed || !this.started) return;
    if (previous === 'stopping' || previous === 'loading') this.consecutiveLoadFailures++;
    if (previous === 'stopping' && this.lastLoadError === undefined) return;
    this.scheduleRespawn(slot.index);
  }

  private scheduleRespawn(index: number): void {
    const failures = this.consecutiveLoadFailures;
    const delay = failures === 0 ? 0 : Math.min(RESPAWN_MAX_MS, RESPAWN_BASE_MS * 2 ** (failures - 1));
    if (failures > 0 && !this.slots.some((s) => s?.state === 'idle' || s?.state === 'busy')) {
      // Nothing can run the queue until a replacement loads: fail it now, typed.
      const error = this.unavailable();
      for (const job of this.high.splice(0)) job.reject(error);
      for (const job of this.normal.splice(0)) job.reject(error);
    }
    const timer = setTimeout(() => {
      this.respawnTimers.delete(timer);
      if (this.closed) return;
      this.spawn(index, true);
      const slot = this.slots[index] as Slot;
      void slot.loaded.then((outcome) => {
        if (!(outcome instanceof Error)) this.counters.replacements++;
      });
    }, delay);
    // Ref'd on purpose, like the workers themselves: an open pool keeps the process alive until
    // close() (which clears this timer). Unref'd, a moment with every worker dead and only this
    // timer pending let the process exit with requests still waiting (found by the fault suite:
    // exit code 13, unfinished top-level await).
    this.respawnTimers.add(timer);
  }

  /** Asks an idle (or load-settled) worker to exit; terminates it only if it ignores that while idle. */
  private stop(slot: Slot): void {
    if (slot.state === 'exited' || slot.state === 'stopping') return;
    slot.state = 'stopping';
    const message: ToWorker = { type: 'shutdown' };
    try {
      slot.worker.postMessage(message);
    } catch {
      // the port is gone: the thread is exiting anyway
    }
    this.armExitGrace(slot);
  }

  /** Terminates a stopping worker that has not exited after EXIT_GRACE_MS although it runs nothing. */
  private armExitGrace(slot: Slot): void {
    const grace = setTimeout(() => {
      // No job and the load settled: terminating it cannot land inside session.run.
      if (slot.state === 'stopping' && slot.job === undefined) void slot.worker.terminate();
    }, EXIT_GRACE_MS);
    grace.unref();
    void slot.exited.then(() => clearTimeout(grace));
  }
}
