/**
 * createDecisionLog: the opt-in record of what the gate decided. `record()` runs on the request
 * path and only samples and enqueues references (about a microsecond, never throws, never
 * waits); the lines are built (hashing, copying) and written by a drain that runs after the
 * answer, in slices of about half a millisecond of CPU between event-loop turns, with one write in flight.
 * The queue is bounded: when it is full, or the directory cannot be written (full disk, read-only,
 * gone), records are dropped and counted by reason; the drain tries the directory again after
 * `retryMs`. Requests are answered either way.
 */
import { DecisionLogOptionError } from './errors.js';
import { FileSink, type SinkLine } from './file-sink.js';
import { decisionRecordOf, policyRecordOf } from './record.js';
import type {
  DecisionEntry,
  DecisionLogModel,
  DecisionLogOptions,
  DecisionLogStats,
  DecisionRecord,
  DropReason,
  PolicyRecord,
} from './types.js';
import type { Passage } from '../types.js';

const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_FILES = 16;
const DEFAULT_MAX_QUEUED = 4096;
const DEFAULT_MAX_QUEUED_PAIRS = 65_536;
const DEFAULT_RETRY_MS = 1000;
/** CPU the drain spends building lines before it lets the event loop turn, ms. */
const SLICE_MS = 0.5;
/** Bytes of one write at most (one file per write). */
const MAX_BATCH_BYTES = 1024 * 1024;

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
  const sink =
    options.dir === undefined
      ? undefined
      : new FileSink(
          options.dir,
          options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
          options.maxFiles ?? DEFAULT_MAX_FILES,
        );

  // The queue: an array with a head index (no shift), compacted when drained.
  let queue: Array<{ entry: DecisionEntry<Passage>; time: Date; pairs: number }> = [];
  let head = 0;
  let queuedPairs = 0;
  let draining: Promise<void> | undefined;
  let closed = false;
  let retryAt = 0;
  const policies = new WeakMap<DecisionLogModel, PolicyLine>();
  const recent: DecisionRecord[] = [];
  const recentPolicies = new Map<string, PolicyRecord>();
  const counts = { offered: 0, sampledOut: 0, written: 0, bytes: 0 };
  const dropped: Record<DropReason, number> = { 'queue-full': 0, 'write-error': 0, closed: 0, 'build-error': 0 };
  let lastError: string | null = null;

  const drop = (reason: DropReason, n = 1): void => {
    dropped[reason] += n;
  };

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
    }
    return p;
  };

  const remember = (record: DecisionRecord, policy: PolicyRecord): void => {
    if (windowSize === 0) return;
    recent.push(record);
    recentPolicies.set(policy.policyHash, policy);
    if (recent.length > windowSize * 2) recent.splice(0, recent.length - windowSize);
  };

  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  const drainLoop = async (): Promise<void> => {
    while (head < queue.length) {
      // Let the answer go out before any work is spent on its record.
      await turn();
      const lines: SinkLine[] = [];
      let bytes = 0;
      const start = performance.now();
      while (
        head < queue.length &&
        (lines.length === 0 || (performance.now() - start < SLICE_MS && bytes < MAX_BATCH_BYTES))
      ) {
        const { entry, time, pairs } = queue[head];
        queue[head++] = undefined as never;
        queuedPairs -= pairs;
        try {
          const policy = policyOf(entry.model);
          const record = decisionRecordOf(entry, policy.record.policyHash, build, time);
          const line = JSON.stringify(record);
          bytes += line.length;
          lines.push({ policyHash: policy.record.policyHash, policyLine: policy.line, line });
          remember(record, policy.record);
        } catch (error) {
          drop('build-error');
          lastError = error instanceof Error ? error.message : String(error);
        }
      }
      if (head === queue.length) {
        queue = [];
        head = 0;
      }
      if (sink === undefined || lines.length === 0) {
        if (sink === undefined) counts.written += lines.length;
        continue;
      }
      if (Date.now() < retryAt) {
        drop('write-error', lines.length);
        continue;
      }
      try {
        counts.bytes += await sink.write(lines);
        counts.written += lines.length;
      } catch (error) {
        drop('write-error', lines.length);
        lastError = error instanceof Error ? error.message : String(error);
        retryAt = Date.now() + retryMs;
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
          drop('closed');
          return false;
        }
        const e = entry as DecisionEntry<Passage>;
        if (!sampled(e)) {
          counts.sampledOut++;
          return false;
        }
        const r = e.result;
        const pairs = r.included.length + r.conflicting.length + r.excluded.length;
        if (queue.length - head >= maxQueued || (queuedPairs > 0 && queuedPairs + pairs > maxQueuedPairs)) {
          drop('queue-full');
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
        queued: queue.length - head,
        files: sink?.files ?? 0,
        lastError,
      };
    },
    window() {
      const decisions = recent.slice(Math.max(0, recent.length - windowSize));
      const used = new Map<string, PolicyRecord>();
      for (const d of decisions) {
        const p = recentPolicies.get(d.policyHash);
        if (p !== undefined) used.set(d.policyHash, p);
      }
      return { decisions, policies: used };
    },
    async flush() {
      while (draining !== undefined) await draining;
    },
    async close() {
      closed = true;
      await log.flush();
      await sink?.close();
    },
  };
  return log;
}
