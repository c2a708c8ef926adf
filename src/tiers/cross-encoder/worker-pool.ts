/**
 * The piscina pool running `worker.ts`, seen by the batcher as a PairBatchExecutor.
 *
 * Tokenize tasks jump ahead of queued inference batches (a small priority task queue): the batcher
 * keeps one batch waiting in the pool queue so workers never idle, and a new request's tokenization
 * must not wait behind it.
 *
 * The worker file is resolved next to this module with this module's extension: `worker.js` from
 * dist, `worker.ts` under tsx/vitest (then workers get `--import tsx` so they can load TypeScript).
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina, queueOptionsSymbol, type PiscinaTask, type TaskQueue } from 'piscina';
import { DisposedError } from '../../errors.js';
import type { InferBatch, InferOutput, PairBatchExecutor, TokenizedChunk } from './batcher.js';
import { InferenceError, reviveError } from './errors.js';
import type {
  DescribeResult,
  InferResult,
  TokenizeResult,
  WorkerConfig,
  WorkerFailure,
  WorkerResult,
  WorkerTask,
} from './protocol.js';

const HIGH_PRIORITY = { priority: 'high' } as const;

/** Two FIFO lanes: tasks flagged high priority (tokenization) are taken first. */
class PriorityTaskQueue implements TaskQueue {
  private readonly high: PiscinaTask[] = [];
  private readonly normal: PiscinaTask[] = [];

  get size(): number {
    return this.high.length + this.normal.length;
  }

  push(task: PiscinaTask): void {
    const opts = (task as unknown as Record<symbol, unknown>)[queueOptionsSymbol];
    (opts === HIGH_PRIORITY ? this.high : this.normal).push(task);
  }

  shift(): PiscinaTask | null {
    return this.high.shift() ?? this.normal.shift() ?? null;
  }

  remove(task: PiscinaTask): void {
    for (const lane of [this.high, this.normal]) {
      const i = lane.indexOf(task);
      if (i !== -1) {
        lane.splice(i, 1);
        return;
      }
    }
  }
}

/** Worker module path and the execArgv it needs, for the way this module itself was loaded. */
export function resolveWorkerEntry(): { filename: string; execArgv: string[] } {
  const self = fileURLToPath(import.meta.url);
  const ext = extname(self);
  const filename = fileURLToPath(new URL(`./worker${ext}`, import.meta.url));
  return { filename, execArgv: ext === '.ts' ? ['--import', 'tsx'] : [] };
}

function unwrap<T extends object>(result: WorkerResult<T>): T {
  const failure = result as WorkerFailure;
  if (failure.error !== undefined) throw reviveError(failure.error);
  return result as T;
}

export class CrossEncoderWorkerPool implements PairBatchExecutor {
  private readonly pool: Piscina<WorkerTask, unknown>;
  private closed = false;

  constructor(
    readonly config: WorkerConfig,
    readonly workers: number,
    /** Unix nice increment of the worker threads (0 = same priority as the main thread). */
    niceIncrement = 0,
  ) {
    const entry = resolveWorkerEntry();
    this.pool = new Piscina({
      filename: entry.filename,
      execArgv: entry.execArgv,
      minThreads: workers,
      maxThreads: workers,
      // Sessions are expensive to create: never reap idle workers.
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
      taskQueue: new PriorityTaskQueue(),
      workerData: config,
      niceIncrement,
    });
  }

  /** Loads the model in the workers and returns the contract (load errors surface here, typed). */
  async describe(): Promise<DescribeResult> {
    const results = await Promise.all(
      Array.from({ length: this.workers }, () => this.run<DescribeResult>({ kind: 'describe' })),
    );
    return results[0];
  }

  async tokenize(query: string, passages: readonly string[]): Promise<TokenizedChunk> {
    const task = { kind: 'tokenize' as const, query, passages, [queueOptionsSymbol]: HIGH_PRIORITY };
    const out = await this.run<TokenizeResult>(task);
    return out;
  }

  async infer(batch: InferBatch): Promise<InferOutput> {
    const transfer: ArrayBuffer[] = [batch.ids.buffer as ArrayBuffer, batch.lengths.buffer as ArrayBuffer];
    if (batch.typeIds) transfer.push(batch.typeIds.buffer as ArrayBuffer);
    const out = await this.run<InferResult>(
      { kind: 'infer', ids: batch.ids, typeIds: batch.typeIds, lengths: batch.lengths },
      transfer,
    );
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.destroy();
  }

  private async run<T extends object>(task: WorkerTask, transferList?: ArrayBuffer[]): Promise<T> {
    if (this.closed) throw new DisposedError('cross-encoder worker pool');
    let result: WorkerResult<T>;
    try {
      result = (await this.pool.run(task, transferList ? { transferList } : {})) as WorkerResult<T>;
    } catch (cause) {
      if (this.closed) throw new DisposedError('cross-encoder worker pool');
      throw new InferenceError(`cross-encoder worker failed: ${(cause as Error).message}`, { cause });
    }
    return unwrap(result);
  }
}
