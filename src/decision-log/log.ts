/**
 * createDecisionLog: the opt-in record of what the gate decided. `record()` runs on the request
 * path and only samples and enqueues references (about a microsecond, never throws, never
 * waits). A drain that runs after the answer, in slices of about half a millisecond of CPU
 * between event-loop turns, hands each entry to a writer (writers.ts): with a directory on a host
 * with cores to spare, a writer thread that builds and appends the lines (this thread only hashes
 * the passages and packs the entry); otherwise, or when the thread cannot run, this thread builds
 * them and appends them in batches. The queue is bounded: when it is full, or the directory cannot
 * be written (full disk, read-only, gone), records are dropped and counted by reason; the writer
 * tries the directory again after `retryMs`. Requests are answered either way.
 */
import { availableParallelism } from 'node:os';
import { DecisionLogOptionError } from './errors.js';
import { policyRecordOf } from './record.js';
import type {
  DecisionEntry,
  DecisionLogModel,
  DecisionLogOptions,
  DecisionLogStats,
  DecisionRecord,
  DropReason,
  PolicyRecord,
} from './types.js';
import { createInlineWriter, createThreadWriter, type LineWriter, type WriterHost } from './writers.js';
import type { Passage } from '../types.js';

const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_FILES = 16;
const DEFAULT_MAX_QUEUED = 4096;
const DEFAULT_MAX_QUEUED_PAIRS = 65_536;
const DEFAULT_RETRY_MS = 1000;
/** CPU the drain spends on entries before it lets the event loop turn, ms. */
const SLICE_MS = 0.5;
/**
 * Cores below which the lines are built on the calling thread by default: the writer thread takes
 * most of a line's CPU off the requests' thread but costs more CPU in all (unpacking, a second
 * heap), which on a host with no core to spare lands on the requests anyway (docs/decision-log.md).
 */
const MIN_CORES_FOR_THREAD = 4;

export interface DecisionLog {
  /** Samples and enqueues one request; returns true when it was taken. Never throws. */
  record<P extends Passage>(entry: DecisionEntry<P>): boolean;
  stats(): DecisionLogStats;
  /** The most recent decision records kept in memory (oldest first), with the policies they use. */
  window(): { readonly decisions: readonly DecisionRecord[]; readonly policies: ReadonlyMap<string, PolicyRecord> };
  /** Resolves once everything recorded so far was written (or dropped). */
  flush(): Promise<void>;
  /** Flushes, closes the file; later records are dropped ('closed'). */
  close(): Promise<void>;
}

interface PolicyLine {
  readonly record: PolicyRecord;
  readonly line: string;
}

function checkOptions(options: DecisionLogOptions): void {
  const sample = options.sample ?? 1;
  if (typeof sample !== 'number' || !(sample >= 0 && sample <= 1))
    throw new DecisionLogOptionError(`decision log sample must be a number in [0, 1], got ${String(sample)}`);
  for (const [name, value] of [
    ['maxFileBytes', options.maxFileBytes],
    ['maxFiles', options.maxFiles],
    ['maxQueued', options.maxQueued],
    ['maxQueuedPairs', options.maxQueuedPairs],
  ] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1))
      throw new DecisionLogOptionError(`decision log ${name} must be an integer ≥ 1, got ${String(value)}`);
  }
  if (options.window !== undefined && !(Number.isSafeInteger(options.window) && options.window >= 0))
    throw new DecisionLogOptionError(`decision log window must be an integer ≥ 0, got ${String(options.window)}`);
  if (options.dir !== undefined && (typeof options.dir !== 'string' || options.dir.length === 0))
    throw new DecisionLogOptionError('decision log dir must be a non-empty path');
}

export function createDecisionLog(options: DecisionLogOptions = {}): DecisionLog {
  checkOptions(options);
  const sample = options.sample ?? 1;
  const random = options.random ?? Math.random;
  const always = options.alwaysRules === undefined ? undefined : new Set(options.alwaysRules);
  const maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
  const maxQueuedPairs = options.maxQueuedPairs ?? DEFAULT_MAX_QUEUED_PAIRS;
  const retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  const windowSize = options.window ?? 0;
  const build = { includeQuery: options.includeQuery === true, includeText: options.includeText === true };
  const windowPolicies = new Map<string, PolicyRecord>();
  // The inspector's window keeps lines and parses one only when the window is read.
  const recent: Array<{ line: string; policyHash: string; record?: DecisionRecord }> = [];
  const counts = { offered: 0, sampledOut: 0, written: 0, bytes: 0 };
  const dropped: Record<DropReason, number> = { 'queue-full': 0, 'write-error': 0, closed: 0, 'build-error': 0 };
  let lastError: string | null = null;

  const host: WriterHost = {
    keepsLines: windowSize > 0,
    written(n, bytes) {
      counts.written += n;
      counts.bytes += bytes;
    },
    dropped(reason, n, error) {
      dropped[reason] += n;
      if (error !== undefined) lastError = error;
    },
    failed(error) {
      lastError = error;
    },
    remember(policyHash, line) {
      recent.push({ line, policyHash });
      if (recent.length > windowSize * 2) recent.splice(0, recent.length - windowSize);
    },
  };
  const thread = options.thread ?? availableParallelism() >= MIN_CORES_FOR_THREAD;
  const writer: LineWriter =
    options.dir === undefined
      ? createInlineWriter(host, build)
      : (thread ? createThreadWriter : createInlineWriter)(host, build, {
          dir: options.dir,
          maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
          maxFiles: options.maxFiles ?? DEFAULT_MAX_FILES,
          retryMs,
        });

  // The queue: an array with a head index (no shift), compacted when drained.
  let queue: Array<{ entry: DecisionEntry<Passage>; time: Date; pairs: number }> = [];
  let head = 0;
  let queuedPairs = 0;
  let draining: Promise<void> | undefined;
  let closed = false;
  const policies = new WeakMap<DecisionLogModel, PolicyLine>();

  const sampled = (entry: DecisionEntry<Passage>): boolean => {
    if (sample >= 1 || random() < sample) return true;
    if (always === undefined) return false;
    const r = entry.result;
    for (const list of [r.included, r.conflicting, r.excluded])
      for (const item of list) if (always.has(item.rule)) return true;
    return false;
  };

  const policyOf = (model: DecisionLogModel): PolicyLine => {
    let p = policies.get(model);
    if (p === undefined) {
      const record = policyRecordOf(model);
      p = { record, line: JSON.stringify(record) };
      policies.set(model, p);
      if (windowSize > 0) windowPolicies.set(record.policyHash, record);
    }
    return p;
  };

  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  const drainLoop = async (): Promise<void> => {
    while (head < queue.length) {
      // Let the answer go out before any work is spent on its record.
      await turn();
      const start = performance.now();
      let taken = 0;
      while (head < queue.length && (taken === 0 || performance.now() - start < SLICE_MS)) {
        const { entry, time, pairs } = queue[head];
        queue[head++] = undefined as never;
        queuedPairs -= pairs;
        taken++;
        try {
          const policy = policyOf(entry.model);
          writer.add(entry, { hash: policy.record.policyHash, line: policy.line }, time);
        } catch (error) {
          dropped['build-error']++;
          lastError = error instanceof Error ? error.message : String(error);
        }
      }
      if (head === queue.length) {
        queue = [];
        head = 0;
      }
    }
  };

  const startDrain = (): void => {
    if (draining !== undefined) return;
    draining = drainLoop()
      .catch((error: unknown) => {
        lastError = error instanceof Error ? error.message : String(error);
      })
      .finally(() => {
        draining = undefined;
        if (head < queue.length) startDrain();
      });
  };

  const log: DecisionLog = {
    record(entry) {
      try {
        counts.offered++;
        if (closed) {
          dropped.closed++;
          return false;
        }
        const e = entry as DecisionEntry<Passage>;
        if (!sampled(e)) {
          counts.sampledOut++;
          return false;
        }
        const r = e.result;
        const pairs = r.included.length + r.conflicting.length + r.excluded.length;
        if (
          queue.length - head + writer.waiting >= maxQueued ||
          (queuedPairs > 0 && queuedPairs + pairs > maxQueuedPairs)
        ) {
          dropped['queue-full']++;
          return false;
        }
        queuedPairs += pairs;
        queue.push({ entry: e, time: new Date(), pairs });
        startDrain();
        return true;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
        return false;
      }
    },
    stats() {
      let total = 0;
      for (const n of Object.values(dropped)) total += n;
      return {
        offered: counts.offered,
        sampledOut: counts.sampledOut,
        written: counts.written,
        dropped: total,
        droppedByReason: { ...dropped },
        bytes: counts.bytes,
        queued: queue.length - head + writer.waiting,
        files: writer.files,
        lastError,
      };
    },
    window() {
      const kept = recent.slice(Math.max(0, recent.length - windowSize));
      const decisions: DecisionRecord[] = [];
      const used = new Map<string, PolicyRecord>();
      for (const r of kept) {
        r.record ??= JSON.parse(r.line) as DecisionRecord;
        decisions.push(r.record);
        const p = windowPolicies.get(r.policyHash);
        if (p !== undefined) used.set(r.policyHash, p);
      }
      return { decisions, policies: used };
    },
    async flush() {
      while (draining !== undefined) await draining;
      await writer.flush();
    },
    async close() {
      closed = true;
      await log.flush();
      await writer.close();
    },
  };
  return log;
}
