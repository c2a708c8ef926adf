/**
 * Open-loop load generator: requests are sent at Poisson-distributed SCHEDULED times whatever the
 * engine's state (no waiting for responses), and every latency is measured from the scheduled
 * time, not from when the generator got round to sending it. A generator that falls behind (busy
 * event loop, timer granularity) therefore adds its lag to the measured latency instead of hiding
 * it: coordinated-omission safe. The deadline given to the engine is also scheduled time + budget.
 *
 * The generator shares the main thread with the gate, so it is kept cheap: one timer per wake-up,
 * all due requests sent in that wake-up, O(1) bookkeeping per request (HDR histogram record). Its
 * own cost is measured (self time per request, scheduling lag, event-loop delay) and reported.
 */
import { sampleSteal } from './host-steal.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import hdr from 'hdr-histogram-js';
import type { GateResult } from '../../gate/types.js';
import type { Passage } from '../../types.js';
import { createRng, exponentialGapMs } from './random.js';
import type { Workload } from './workload.js';

type Histogram = ReturnType<typeof hdr.build>;

const LOOP_RESOLUTION_MS = 10;
/** The generator sends due requests for at most this long before letting the event loop turn. */
const SEND_SLICE_MS = 1;

/**
 * The deadline bound: a request is late when it is answered more than this many ms after its
 * deadline (scheduled send time + budget), measured from the scheduled send, generator lag
 * included. See docs/router.md (Hard deadline) for how the bound was chosen and measured.
 */
export const DEFAULT_LATE_BOUND_MS = 2;

/** The part of a gate result the generator reads (an HTTP target builds it from the response). */
export type TargetResult = Pick<GateResult, 'tier' | 'errors'> & {
  readonly stats: Pick<GateResult['stats'], 'retrieved' | 'unscored' | 'unscoredByReason'>;
  /** HTTP status of the answer (HTTP targets). */
  readonly status?: number;
  /** The target's own time for the request (HTTP: the answer's Server-Timing `total`), ms. */
  readonly serverMs?: number;
  /**
   * From the generator's send to the request's last byte handed to the OS, ms (HTTP): a wait for
   * a pooled connection or a full socket buffer, which the send lag does not see.
   */
  readonly writeMs?: number;
  /** Pairs by the label of their degraded scoring (HTTP gate answers: `shed`, `deadline`, ...). */
  readonly degraded?: Readonly<Record<string, number>>;
};

/** The first late answers of a phase kept for reading: what each one was. */
export const MAX_LATE_ANSWERS = 100;

/** One answer later than deadline + bound: enough to tell a server stall from a client or host one. */
export interface LateAnswer {
  /** Its bucket of scheduled time (TimelineSecond.second). */
  readonly second: number;
  /** From the scheduled send to the answer read, ms. */
  readonly latencyMs: number;
  /** How late the generator sent it after its schedule, ms (included in latencyMs). */
  readonly sendLagMs: number;
  /** The target's own time (Server-Timing), ms; absent in-process. */
  readonly serverMs?: number;
  /** Whether serverMs was within budget + bound (the lateness came after the target's answer); absent with serverMs. */
  readonly serverOnTime?: boolean;
  /** See TargetResult.writeMs; absent in-process. */
  readonly writeMs?: number;
  readonly status?: number;
  /** A refusal's or an error's message (its first 160 characters): which admission check refused it. */
  readonly message?: string;
  /** Its pairs by tier label, and by degrade label where the answer names them. */
  readonly pairsByTier: Readonly<Record<string, number>>;
  readonly degraded?: Readonly<Record<string, number>>;
}

/**
 * What the generator drives: a gate in-process, or an HTTP client of a server (http-target.ts).
 * A request the target could not answer rejects; an error with `refused: true` is a refusal under
 * load (HTTP 429), counted apart from errors, and one with a numeric `status` is counted by it.
 */
export interface LoadTarget {
  filter(query: string, passages: readonly Passage[], options?: { readonly deadline?: number }): Promise<TargetResult>;
}

export interface PhaseOptions {
  readonly gate: LoadTarget;
  readonly workload: Workload;
  /** Offered load, requests per second. */
  readonly qps: number;
  /** Measured window, seconds. */
  readonly durationSec: number;
  /** Unmeasured lead-in at the same rate (warms caches and cost models), seconds. */
  readonly warmupSec: number;
  /** Per-request budget; undefined = no deadline given to the gate. */
  readonly budgetMs: number | undefined;
  /** A request answered more than this long after its deadline is late (default DEFAULT_LATE_BOUND_MS). */
  readonly lateBoundMs?: number;
  /** Width of a timeline bucket of scheduled time, seconds (default 1). */
  readonly timelineBucketSec?: number;
  readonly seed: number;
  /** How long to wait for requests still in flight after the last send, ms (default 120000). */
  readonly drainTimeoutMs?: number;
  /** Called once when the measured window starts (e.g. to reset counters). */
  readonly onMeasureStart?: () => void;
  /** Called about every 250 ms with live figures. */
  readonly onTick?: (live: LiveFigures) => void;
}

export interface LiveFigures {
  readonly elapsedSec: number;
  readonly totalSec: number;
  readonly sent: number;
  readonly completed: number;
  readonly inFlight: number;
  readonly measuring: boolean;
  /** p99 so far in the measured window, ms. */
  readonly p99Ms: number;
}

export interface LatencySummary {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly p9999: number;
  readonly max: number;
  readonly mean: number;
}

/** Figures of the requests SCHEDULED in one bucket (a second by default) of the measured window. */
export interface TimelineSecond {
  /** Bucket index (seconds from the measured window's start with 1-second buckets). */
  readonly second: number;
  readonly requests: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Requests answered later than deadline + lateBoundMs. */
  readonly late: number;
  /** Requests with at least one unscored pair / with every pair unscored. */
  readonly withUnscored: number;
  readonly allUnscored: number;
  /** Requests that failed (an error other than a refusal: HTTP 5xx / 4xx, connection errors). */
  readonly thrown: number;
  /** Pairs by tier label. */
  readonly pairsByTier: Readonly<Record<string, number>>;
  /** Of `late`, those whose target said it answered within budget + bound (see PhaseResult.lateServerOnTime). */
  readonly lateServerOnTime: number;
  /**
   * The most the generator sent a request of this bucket after its scheduled time, ms: a stall of
   * the generator's own process, which the latency of these requests includes.
   */
  readonly maxSendLagMs: number;
  /** Host steal in this second (ms summed over vCPUs, 10 ms granularity); absent where unavailable. */
  readonly hostStealMs?: number;
}

export interface PhaseResult {
  readonly offeredQps: number;
  readonly achievedQps: number;
  /** Requests scheduled in the measured window. */
  readonly requests: number;
  readonly completed: number;
  /**
   * Requests that failed (threw, refusals excluded), had unscored pairs, or were still in flight at
   * the drain timeout. Never counts a refusal: requests = answered + refused + thrown + unfinished.
   */
  readonly errors: number;
  /** Requests that failed (an error other than a refusal: HTTP 5xx / 4xx, connection errors). */
  readonly thrown: number;
  /** Requests the target refused under load (HTTP 429): answered at once, not errors. */
  readonly refused: number;
  /** Measured requests by the HTTP status of their answer (HTTP targets; a request without an answer has none). */
  readonly statuses: Readonly<Record<string, number>>;
  readonly withUnscoredPairs: number;
  /** Requests (with at least one pair) that came back with every pair unscored. */
  readonly allUnscored: number;
  readonly unfinished: number;
  /** The bound (ms after the deadline) `lateBeyondBound` counts against; null without a budget. */
  readonly lateBoundMs: number | null;
  /** Requests answered (or still open at the end) later than deadline + lateBoundMs; 0 without a budget. */
  readonly lateBeyondBound: number;
  /** Requests answered after their deadline at all (latency > budget); 0 without a budget. */
  readonly afterDeadline: number;
  /**
   * Of lateBeyondBound, the requests whose target said it answered within budget + bound (its own
   * Server-Timing): their lateness lies between the server's answer and the client reading it. Null
   * when the target reports no time of its own (in-process).
   */
  readonly lateServerOnTime: number | null;
  /** The first MAX_LATE_ANSWERS answers later than deadline + bound, in the order they came. */
  readonly lateAnswers: readonly LateAnswer[];
  readonly firstErrors: readonly string[];
  readonly pairs: number;
  /** Pairs by the tier label of their result (gate result tier counts; unscored pairs under 'unscored'). */
  readonly pairsByTier: Readonly<Record<string, number>>;
  readonly latencyMs: LatencySummary;
  /** How late the generator sent requests compared with their schedule. */
  readonly scheduleLagMs: LatencySummary;
  /** Event-loop delay while the phase ran (perf_hooks.monitorEventLoopDelay at 10 ms resolution, minus the 10 ms). */
  readonly eventLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Generator bookkeeping per request (excluding the gate call itself), µs. */
  readonly generatorUsPerRequest: number;
  /** Process CPU time over the phase / wall time (all threads: main + workers), in cores. */
  readonly cpuCores: number;
  readonly wallSec: number;
  /** Per second of scheduled time: shows a queue growing (latency rising) or a cache warming. */
  readonly timeline: readonly TimelineSecond[];
  /** Host steal over the measured window (host-steal.ts), ms summed over vCPUs; null where unavailable. */
  readonly hostStealMs: { readonly total: number; readonly maxPerSecond: number } | null;
}

function newHistogram(): Histogram {
  // Microseconds from 1 µs to 1 hour, 3 significant digits.
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

function summarize(h: Histogram): LatencySummary {
  if (h.totalCount === 0) return { p50: 0, p90: 0, p99: 0, p999: 0, p9999: 0, max: 0, mean: 0 };
  const ms = (us: number): number => Math.round(us) / 1000;
  return {
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    p9999: ms(h.getValueAtPercentile(99.99)),
    max: ms(h.maxValue),
    mean: ms(h.mean),
  };
}

function recordUs(h: Histogram, ms: number): void {
  h.recordValue(Math.max(1, Math.min(3_600_000_000, Math.round(ms * 1000))));
}

/** Runs one open-loop phase (warm-up + measured window) and returns the measured figures. */
export async function runOpenLoopPhase(options: PhaseOptions): Promise<PhaseResult> {
  const { gate, workload, qps, durationSec, warmupSec, budgetMs } = options;
  const rng = createRng(options.seed);
  const latency = newHistogram();
  const lag = newHistogram();
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  const drainTimeoutMs = options.drainTimeoutMs ?? 120_000;

  const t0 = performance.now() + 5; // first arrival a few ms from now
  const epochOffset = Date.now() - performance.now(); // performance.now() → Date.now() clock
  const measureStart = t0 + warmupSec * 1000;
  const end = measureStart + durationSec * 1000;
  let nextAt = t0 + exponentialGapMs(rng, qps);
  let measuring = false;
  let sent = 0;
  let completed = 0;
  let inFlight = 0;
  let requests = 0;
  let measuredCompleted = 0;
  let thrown = 0;
  let refused = 0;
  const statuses: Record<string, number> = {};
  let withUnscored = 0;
  let allUnscored = 0;
  let lateBeyondBound = 0;
  let lateServerOnTime = 0;
  let serverTimed = false;
  let afterDeadline = 0;
  const lateBoundMs = options.lateBoundMs ?? DEFAULT_LATE_BOUND_MS;
  const lateAfterMs = budgetMs === undefined ? Number.POSITIVE_INFINITY : budgetMs + lateBoundMs;
  const deadlineAfterMs = budgetMs === undefined ? Number.POSITIVE_INFINITY : budgetMs;
  const bucketMs = (options.timelineBucketSec ?? 1) * 1000;
  let pairs = 0;
  let lastCompletion = measureStart;
  let generatorMs = 0;
  const firstErrors: string[] = [];
  const lateAnswers: LateAnswer[] = [];
  const pairsByTier: Record<string, number> = {};
  const pendingMeasured = new Set<number>();
  interface Bucket {
    h: Histogram;
    requests: number;
    late: number;
    lateServerOnTime: number;
    maxSendLagMs: number;
    withUnscored: number;
    allUnscored: number;
    thrown: number;
    pairsByTier: Record<string, number>;
  }
  const seconds: Bucket[] = [];
  const bucketIndexOf = (scheduledAt: number): number =>
    Math.max(0, Math.floor((scheduledAt - measureStart) / bucketMs));
  const secondOf = (scheduledAt: number): Bucket => {
    const k = bucketIndexOf(scheduledAt);
    let second = seconds[k];
    if (second === undefined) {
      second = {
        h: newHistogram(),
        requests: 0,
        late: 0,
        lateServerOnTime: 0,
        maxSendLagMs: 0,
        withUnscored: 0,
        allUnscored: 0,
        thrown: 0,
        pairsByTier: {},
      };
      seconds[k] = second;
    }
    return second;
  };
  let resolveDrained: (() => void) | undefined;
  let cpuStart = process.cpuUsage();
  let wallStart = performance.now();

  const onDone = (
    scheduledAt: number,
    sendLagMs: number,
    measured: boolean,
    result: TargetResult | undefined,
    error: unknown,
  ): void => {
    const now = performance.now();
    const g0 = now;
    inFlight--;
    completed++;
    if (measured) {
      pendingMeasured.delete(scheduledAt);
      measuredCompleted++;
      lastCompletion = now;
      const latencyMs = now - scheduledAt;
      recordUs(latency, latencyMs);
      const sec = secondOf(scheduledAt);
      sec.requests++;
      recordUs(sec.h, latencyMs);
      if (latencyMs > deadlineAfterMs) afterDeadline++;
      if (result?.serverMs !== undefined) serverTimed = true;
      const status = result === undefined ? (error as { status?: unknown } | undefined)?.status : result.status;
      if (latencyMs > lateAfterMs) {
        lateBeyondBound++;
        sec.late++;
        // A refusal or an error carries the target's time and write lag on the error (HttpStatusError).
        const timing = (result ?? error) as { serverMs?: unknown; writeMs?: unknown } | undefined;
        const serverMs = typeof timing?.serverMs === 'number' ? timing.serverMs : undefined;
        const writeMs = typeof timing?.writeMs === 'number' ? timing.writeMs : undefined;
        const serverOnTime = serverMs === undefined ? undefined : serverMs <= lateAfterMs;
        if (serverOnTime === true) {
          lateServerOnTime++;
          sec.lateServerOnTime++;
        }
        if (lateAnswers.length < MAX_LATE_ANSWERS)
          lateAnswers.push({
            second: bucketIndexOf(scheduledAt),
            latencyMs,
            sendLagMs,
            ...(serverMs === undefined ? {} : { serverMs, serverOnTime }),
            ...(writeMs === undefined ? {} : { writeMs }),
            ...(typeof status === 'number' ? { status } : {}),
            ...(result === undefined && error instanceof Error ? { message: error.message.slice(0, 160) } : {}),
            pairsByTier: { ...(result?.tier.counts ?? {}) },
            ...(result?.degraded === undefined ? {} : { degraded: result.degraded }),
          });
      }
      if (typeof status === 'number') statuses[status] = (statuses[status] ?? 0) + 1;
      if (result === undefined && (error as { refused?: unknown } | undefined)?.refused === true) refused++;
      else if (result === undefined) {
        thrown++;
        sec.thrown++;
        if (firstErrors.length < 5)
          firstErrors.push(
            `second ${bucketIndexOf(scheduledAt)}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
          );
      } else {
        const counts = result.tier.counts;
        for (const tier in counts) {
          pairsByTier[tier] = (pairsByTier[tier] ?? 0) + counts[tier];
          sec.pairsByTier[tier] = (sec.pairsByTier[tier] ?? 0) + counts[tier];
        }
        const unscored = result.stats.unscored;
        pairs += result.stats.retrieved;
        if (unscored > 0) {
          withUnscored++;
          sec.withUnscored++;
          if (unscored === result.stats.retrieved) {
            allUnscored++;
            sec.allUnscored++;
          }
          pairsByTier.unscored = (pairsByTier.unscored ?? 0) + unscored;
          if (firstErrors.length < 5)
            firstErrors.push(
              `unscored pairs: ${JSON.stringify(result.stats.unscoredByReason)} ${result.errors.join('; ')}`,
            );
        }
      }
    }
    generatorMs += performance.now() - g0;
    if (inFlight === 0 && resolveDrained !== undefined) resolveDrained();
  };

  const send = (scheduledAt: number): void => {
    const measured = scheduledAt >= measureStart;
    if (measured && !measuring) {
      measuring = true;
      options.onMeasureStart?.();
      cpuStart = process.cpuUsage();
      wallStart = performance.now();
      loopDelay.reset();
    }
    const now = performance.now();
    if (measured) {
      recordUs(lag, now - scheduledAt);
      const sec = secondOf(scheduledAt);
      if (now - scheduledAt > sec.maxSendLagMs) sec.maxSendLagMs = now - scheduledAt;
      requests++;
      pendingMeasured.add(scheduledAt);
    }
    const query = workload.next();
    sent++;
    inFlight++;
    const options_ = budgetMs === undefined ? undefined : { deadline: scheduledAt + epochOffset + budgetMs };
    let pending: Promise<TargetResult>;
    try {
      pending = gate.filter(query.text, query.passages, options_);
    } catch (error) {
      pending = Promise.reject(error);
    }
    const sendLagMs = now - scheduledAt;
    pending.then(
      (result) => onDone(scheduledAt, sendLagMs, measured, result, undefined),
      (error: unknown) => onDone(scheduledAt, sendLagMs, measured, undefined, error),
    );
  };

  const liveFigures = (now: number): LiveFigures => ({
    elapsedSec: (now - t0) / 1000,
    totalSec: (end - t0) / 1000,
    sent,
    completed,
    inFlight,
    measuring,
    p99Ms: latency.totalCount === 0 ? 0 : latency.getValueAtPercentile(99) / 1000,
  });

  loopDelay.enable();
  const steal = sampleSteal(measureStart, bucketMs);
  await new Promise<void>((resolve) => {
    let lastTick = 0;
    const tick = (): void => {
      const wake = performance.now();
      let gateMs = 0;
      while (nextAt <= wake && nextAt < end) {
        // A burst of due requests (after a stall) is sent in slices, so deadline timers that came
        // due meanwhile run between them instead of after the whole burst.
        if (performance.now() - wake >= SEND_SLICE_MS) break;
        const s0 = performance.now();
        send(nextAt);
        gateMs += performance.now() - s0;
        nextAt += exponentialGapMs(rng, qps);
      }
      const now = performance.now();
      if (options.onTick !== undefined && now - lastTick >= 250) {
        lastTick = now;
        options.onTick(liveFigures(now));
      }
      // Bookkeeping only: the gate's synchronous part is the engine's time, not the generator's.
      generatorMs += now - wake - gateMs;
      if (nextAt >= end) {
        resolve();
        return;
      }
      if (nextAt <= performance.now()) setImmediate(tick);
      else setTimeout(tick, Math.max(0, nextAt - performance.now()));
    };
    setTimeout(tick, Math.max(0, nextAt - performance.now()));
  });

  // Drain: wait for everything in flight (bounded).
  if (inFlight > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, drainTimeoutMs);
      resolveDrained = () => {
        clearTimeout(timer);
        resolve();
      };
      const progress = setInterval(() => {
        if (options.onTick !== undefined) {
          options.onTick(liveFigures(performance.now()));
        }
      }, 500);
      const stop = resolveDrained;
      resolveDrained = () => {
        clearInterval(progress);
        stop();
      };
      timer.unref?.();
    });
  }
  loopDelay.disable();
  const stealPerBucket = steal.stop();
  const wallMs = performance.now() - wallStart;
  const cpu = process.cpuUsage(cpuStart);
  // Requests that never finished count as errors, with a latency lower bound (still open-loop honest).
  const unfinished = pendingMeasured.size;
  const now = performance.now();
  for (const scheduledAt of pendingMeasured) {
    recordUs(latency, now - scheduledAt);
    const sec = secondOf(scheduledAt);
    recordUs(sec.h, now - scheduledAt);
    if (now - scheduledAt > deadlineAfterMs) afterDeadline++;
    if (now - scheduledAt > lateAfterMs) {
      lateBeyondBound++;
      sec.late++;
    }
  }
  const windowMs = Math.max(durationSec * 1000, lastCompletion - measureStart);
  return {
    offeredQps: qps,
    achievedQps: measuredCompleted / (windowMs / 1000),
    requests,
    completed: measuredCompleted,
    errors: thrown + withUnscored + unfinished,
    thrown,
    refused,
    statuses,
    withUnscoredPairs: withUnscored,
    allUnscored,
    unfinished,
    lateBoundMs: budgetMs === undefined ? null : lateBoundMs,
    lateBeyondBound,
    afterDeadline,
    lateServerOnTime: serverTimed ? lateServerOnTime : null,
    lateAnswers,
    firstErrors,
    pairs,
    pairsByTier,
    latencyMs: summarize(latency),
    scheduleLagMs: summarize(lag),
    // The histogram holds the full interval of a 10 ms timer: the delay is what exceeds 10 ms.
    eventLoopDelayMs: {
      p50: Math.max(0, loopDelay.percentile(50) / 1e6 - LOOP_RESOLUTION_MS),
      p99: Math.max(0, loopDelay.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
      max: Math.max(0, loopDelay.max / 1e6 - LOOP_RESOLUTION_MS),
    },
    generatorUsPerRequest: sent === 0 ? 0 : (generatorMs * 1000) / sent,
    cpuCores: (cpu.user + cpu.system) / 1000 / wallMs,
    wallSec: wallMs / 1000,
    timeline: Array.from({ length: seconds.length }, (_, second) => seconds[second]).map((sec, second) => ({
      second,
      requests: sec?.requests ?? 0,
      p50Ms: sec === undefined ? 0 : sec.h.getValueAtPercentile(50) / 1000,
      p99Ms: sec === undefined ? 0 : sec.h.getValueAtPercentile(99) / 1000,
      maxMs: sec === undefined ? 0 : sec.h.maxValue / 1000,
      late: sec?.late ?? 0,
      lateServerOnTime: sec?.lateServerOnTime ?? 0,
      maxSendLagMs: sec?.maxSendLagMs ?? 0,
      withUnscored: sec?.withUnscored ?? 0,
      allUnscored: sec?.allUnscored ?? 0,
      thrown: sec?.thrown ?? 0,
      pairsByTier: sec?.pairsByTier ?? {},
      ...(stealPerBucket === undefined ? {} : { hostStealMs: stealPerBucket[second] ?? 0 }),
    })),
    hostStealMs:
      stealPerBucket === undefined
        ? null
        : { total: stealPerBucket.reduce((a, b) => a + b, 0), maxPerSecond: Math.max(0, ...stealPerBucket) },
  };
}
