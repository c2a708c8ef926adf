/**
 * The two ways the decision log turns drained entries into written lines:
 *
 * - on a writer thread (with a directory, on a host with cores to spare): the request's thread
 *   hashes each passage's text and packs the entry (packed.ts), about a third of a line's CPU; the
 *   rest (the decimal numbers, the JSON, the writes) runs on the thread (log-worker.ts), at the
 *   price of more CPU in all (unpacking there, a second heap). Batches are handed over
 *   every `HANDOVER_MS` or `HANDOVER_RECORDS`, copied (not transferred) and kept until the thread
 *   answers for them, so that if the thread cannot start or dies they are written here instead;
 *   the log then stays on this thread.
 * - on the calling thread: lines built here (line.ts) and appended in batches by a FileSink, or
 *   only kept in the inspector's window when there is no directory.
 *
 * Either way a crash loses at most the last `HANDOVER_MS` (plus the write in flight) of the log.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { FileSink, type SinkLine } from './file-sink.js';
import { decisionLineOf } from './line.js';
import { BatchPacker, BatchUnpacker, type PackedBatch } from './packed.js';
import type { BuildOptions } from './record.js';
import type { DecisionEntry, DropReason } from './types.js';
import type { FromLogWorker, LogWorkerData, ToLogWorker } from './worker-protocol.js';
import type { Passage } from '../types.js';

/** Longest a drained entry waits before it is handed over or written, ms. */
export const HANDOVER_MS = 50;
/** Entries that are handed over or written at once, without waiting for HANDOVER_MS. */
export const HANDOVER_RECORDS = 256;

/** The log's counters and window, which the writers feed. */
export interface WriterHost {
  written(n: number, bytes: number): void;
  dropped(reason: DropReason, n: number, error?: string): void;
  /** An error that cost no record (the writer thread gone: the log goes on without it). */
  failed(error: string): void;
  /** A written (or, without a directory, built) line, for the inspector's window. */
  remember(policyHash: string, line: string): void;
  readonly keepsLines: boolean;
}

export interface PolicyLineOf {
  readonly hash: string;
  readonly line: string;
}

export interface LineWriter {
  /** Takes one drained entry; throws when its line cannot be built (counted by the caller). */
  add(entry: DecisionEntry<Passage>, policy: PolicyLineOf, time: Date): void;
  /** Resolves once everything added so far is written or counted. */
  flush(): Promise<void>;
  /** Flushes and closes the file (and the thread). */
  close(): Promise<void>;
  /** Entries added and not yet written or counted. */
  readonly waiting: number;
  /** Log files this writer started. */
  readonly files: number;
}

interface InlineWriter extends LineWriter {
  /** Takes a line built elsewhere (rebuilt from batches a writer thread left unanswered). */
  addLine(policy: PolicyLineOf, line: string): void;
}

export interface SinkOptions {
  readonly dir: string;
  readonly maxFileBytes: number;
  readonly maxFiles: number;
  readonly retryMs: number;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Lines built and written on this thread; without a sink they only feed the window. */
export function createInlineWriter(host: WriterHost, build: BuildOptions, sinkOptions?: SinkOptions): InlineWriter {
  const sink =
    sinkOptions === undefined
      ? undefined
      : new FileSink(sinkOptions.dir, sinkOptions.maxFileBytes, sinkOptions.maxFiles);
  let pending: SinkLine[] = [];
  let writing: Promise<void> | undefined;
  let writingCount = 0;
  let timer: NodeJS.Timeout | undefined;
  let retryAt = 0;

  const write = async (lines: readonly SinkLine[]): Promise<void> => {
    if (sink === undefined) return;
    if (Date.now() < retryAt) {
      host.dropped('write-error', lines.length);
      return;
    }
    try {
      const bytes = await sink.write(lines);
      host.written(lines.length, bytes);
    } catch (error) {
      host.dropped('write-error', lines.length, messageOf(error));
      retryAt = Date.now() + (sinkOptions?.retryMs ?? 0);
    }
  };

  const start = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (writing !== undefined || pending.length === 0) return;
    const lines = pending;
    pending = [];
    writingCount = lines.length;
    writing = write(lines).finally(() => {
      writing = undefined;
      writingCount = 0;
      schedule();
    });
  };

  const schedule = (): void => {
    if (pending.length === 0 || writing !== undefined) return;
    if (pending.length >= HANDOVER_RECORDS) start();
    else timer ??= setTimeout(start, HANDOVER_MS);
  };

  return {
    add(entry, policy, time) {
      this.addLine(policy, decisionLineOf(entry, policy.hash, build, time));
    },
    addLine(policy, line) {
      if (host.keepsLines) host.remember(policy.hash, line);
      if (sink === undefined) {
        host.written(1, 0);
        return;
      }
      pending.push({ policyHash: policy.hash, policyLine: policy.line, line });
      schedule();
    },
    async flush() {
      for (;;) {
        if (pending.length > 0 && writing === undefined) start();
        else if (writing !== undefined) await writing;
        else return;
      }
    },
    async close() {
      await this.flush();
      await sink?.close();
    },
    get waiting() {
      return pending.length + writingCount;
    },
    get files() {
      return sink?.files ?? 0;
    },
  };
}

/**
 * The writer thread's module and how to start it: `log-worker.js` beside this module in dist;
 * under tsx/vitest `log-worker.ts`, through a bootstrap that registers tsx in the thread first (a
 * .ts file cannot be a thread's first module).
 */
function workerEntry(): { filename: string; eval: boolean } {
  const ext = extname(fileURLToPath(import.meta.url));
  const url = new URL(`./log-worker${ext}`, import.meta.url);
  if (ext !== '.ts') return { filename: fileURLToPath(url), eval: false };
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return { filename: bootstrap, eval: true };
}

/** Starts the writer thread (tests pass one that fails). */
export type StartThread = (data: LogWorkerData) => Worker;

const startLogWorker: StartThread = (data) => {
  const entry = workerEntry();
  return new Worker(entry.filename, { eval: entry.eval, workerData: data });
};

/** The writer thread, or the inline writer when the thread cannot be started. */
export function createThreadWriter(
  host: WriterHost,
  build: BuildOptions,
  sinkOptions: SinkOptions,
  startThread: StartThread = startLogWorker,
): LineWriter {
  const packer = new BatchPacker(build);
  // Batches handed over and not yet answered for, oldest first; the thread answers in order.
  const unanswered: PackedBatch[] = [];
  let unansweredRecords = 0;
  const waiters = new Map<number, () => void>();
  let nextId = 0;
  let timer: NodeJS.Timeout | undefined;
  let threadFiles = 0;
  let worker: Worker | undefined;
  /** Set once the thread is gone (failed to start, died): everything goes through it from then on. */
  let fallback: LineWriter | undefined;

  const policyLines = new Map<string, string>();

  const toFallback = (error: unknown): void => {
    if (fallback !== undefined) return;
    const inline = createInlineWriter(host, build, sinkOptions);
    fallback = inline;
    host.failed(`decision log writer thread: ${messageOf(error)}; writing on the main thread`);
    const w = worker;
    worker = undefined;
    w?.removeAllListeners();
    w?.on('error', () => undefined);
    void w?.terminate();
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    // What the thread had not answered for, and what was packed since, is written here (a batch
    // the thread wrote just before it died would be written twice: a duplicate, never a loss).
    const unpacker = new BatchUnpacker(build, packer.labels());
    const batches = [...unanswered.splice(0), ...(packer.size > 0 ? [packer.take()] : [])];
    unansweredRecords = 0;
    for (const batch of batches) {
      for (const { policyHash, line } of unpacker.lines(batch)) {
        try {
          inline.addLine({ hash: policyHash, line: policyLines.get(policyHash) as string }, line());
        } catch (e) {
          host.dropped('build-error', 1, messageOf(e));
        }
      }
    }
    for (const resolve of waiters.values()) resolve();
    waiters.clear();
  };

  const onMessage = (message: FromLogWorker): void => {
    if (message.t === 'written') {
      const batch = unanswered.shift();
      unansweredRecords -= batch?.records.length ?? message.records;
      threadFiles = message.files;
      if (message.written > 0) host.written(message.written, message.bytes);
      if (message.writeErrors > 0) host.dropped('write-error', message.writeErrors, message.lastError ?? undefined);
      if (message.buildErrors > 0) host.dropped('build-error', message.buildErrors, message.lastError ?? undefined);
      for (const l of message.lines) host.remember(l.policyHash, l.line);
    } else {
      const resolve = waiters.get(message.id);
      waiters.delete(message.id);
      resolve?.();
    }
    // Held only while it owes an answer: an idle thread does not keep the process alive.
    if (unanswered.length === 0 && waiters.size === 0) worker?.unref();
  };

  const startWorker = (): Worker => {
    const w = startThread({ ...sinkOptions, includeQuery: build.includeQuery, window: host.keepsLines });
    w.on('message', onMessage);
    w.on('error', (error) => toFallback(error));
    w.on('exit', (code) => {
      if (worker === w) toFallback(new Error(`exited with code ${code}`));
    });
    w.unref();
    return w;
  };

  const post = (message: ToLogWorker): void => {
    if (worker === undefined) return;
    worker.ref();
    try {
      worker.postMessage(message);
    } catch (error) {
      // Packed batches hold only strings and numbers; should one not clone, this thread writes.
      toFallback(error);
    }
  };

  // Started with the log, so that it is ready (its modules loaded) when the first records come.
  try {
    worker = startWorker();
  } catch (error) {
    toFallback(error);
  }

  const handOver = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (fallback !== undefined || packer.size === 0) return;
    const batch = packer.take();
    unanswered.push(batch);
    unansweredRecords += batch.records.length;
    post({ t: 'batch', batch });
  };

  const ask = (t: 'flush' | 'close'): Promise<void> =>
    new Promise((resolve) => {
      const id = nextId++;
      waiters.set(id, resolve);
      post({ t, id });
      if (fallback !== undefined) resolve();
    });

  return {
    add(entry, policy, time) {
      if (fallback !== undefined) {
        fallback.add(entry, policy, time);
        return;
      }
      policyLines.set(policy.hash, policy.line);
      packer.add(entry, policy.hash, policy.line, time);
      if (packer.size >= HANDOVER_RECORDS) handOver();
      else timer ??= setTimeout(handOver, HANDOVER_MS);
    },
    async flush() {
      handOver();
      if (fallback === undefined && worker !== undefined) await ask('flush');
      await fallback?.flush();
    },
    async close() {
      await this.flush();
      const w = worker;
      if (fallback === undefined && w !== undefined) {
        await ask('close');
        // Asked, answered: the thread is idle with its file closed, so stopping it loses nothing.
        worker = undefined;
        w.removeAllListeners('exit');
        await w.terminate();
      }
      await fallback?.close();
    },
    get waiting() {
      return fallback !== undefined ? fallback.waiting : packer.size + unansweredRecords;
    },
    get files() {
      return threadFiles + (fallback?.files ?? 0);
    },
  };
}
