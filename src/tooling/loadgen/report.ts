/**
 * Bench output: one row per (routing, offered QPS) point as JSON, a readable table, and an SVG of
 * latency percentiles against offered QPS (src/tooling/report/svg-line-chart.ts).
 */
import { renderLineChart, type ChartSeries } from '../report/svg-line-chart.js';
import type { RouterStats, TierLoadStats } from '../../router/types.js';
import type { LateAnswer, LatencySummary, LiveFigures, PhaseResult, TimelineSecond } from './open-loop.js';

/** Where a bench run reports as it goes: log lines, live figures of a point, workload building. */
export interface BenchProgress {
  readonly log: (line: string) => void;
  readonly onLive?: (label: string, live: LiveFigures) => void;
  readonly onPhaseEnd?: (label: string) => void;
  readonly onWorkloadProgress?: (done: number, total: number) => void;
}

export interface TierShare {
  readonly cache: number;
  readonly 'fast-path': number;
  readonly 'cross-encoder': number;
  /** Pairs without a score (fail closed). */
  readonly unscored: number;
}

export interface BenchPoint {
  /** Routing of this point, e.g. 'cascade', 'budget', 'fixed:cross-encoder'. */
  readonly routing: string;
  readonly offeredQps: number;
  readonly achievedQps: number;
  readonly latencyMs: LatencySummary;
  /** Requests that failed, came back with unscored pairs, or never finished; refusals (429) are not errors. */
  readonly errors: number;
  /** Requests refused under load (HTTP 429), disjoint from `errors`. */
  readonly refused: number;
  readonly requests: number;
  /** The bound late requests are counted against (ms after the deadline); null without a budget. */
  readonly lateBoundMs: number | null;
  /** Requests answered later than deadline + lateBoundMs (from the scheduled send). */
  readonly lateBeyondBound: number;
  /** Of lateBeyondBound, those the server itself answered in time (Server-Timing); null in-process. */
  readonly lateServerOnTime: number | null;
  /** Requests answered after their deadline at all. */
  readonly afterDeadline: number;
  /** Requests that came back with every pair unscored. */
  readonly allUnscored: number;
  readonly pairs: number;
  /** Fractions of pairs by the tier label of their result. */
  readonly tierShare: TierShare;
  /** Fractions of pairs by the MODEL their score came from (cache hits attributed to the tier that scored them). */
  readonly modelShare: { readonly 'cross-encoder': number; readonly 'fast-path': number };
  readonly degradedPairs: number;
  readonly shedPairs: number;
  readonly deadlinePairs: number;
  readonly errorPairs: number;
  readonly cancelledPairs: number;
  readonly lateCalls: number;
  /** The router's answer-lag allowance at the end of the phase, ms (in-process runs only). */
  readonly answerLagMs?: number;
  /** Pairs the router sent to the cross-encoder in the background (idle-time refinement). */
  readonly backgroundPairs: number;
  readonly scheduleLagMs: LatencySummary;
  readonly eventLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly generatorUsPerRequest: number;
  readonly cpuCores: number;
  /** Host steal over the measured window (Linux VMs), ms summed over vCPUs; null where unavailable. */
  readonly hostStealMs: PhaseResult['hostStealMs'];
  readonly cache: {
    readonly hitRate: number;
    readonly entries: number;
    readonly evictions: number;
    readonly mb: number;
  } | null;
  /** The cross-encoder pool over the point (the tier's own counters). */
  readonly 'cross-encoder': {
    readonly pairsRun: number;
    readonly pairsDropped: number;
    readonly meanBatchSize: number;
    readonly pairsPerSec: number;
  };
  /** The router's cost models at the end of the point. */
  readonly routerTiers: readonly TierLoadStats[];
  /** Per second of scheduled time (latency percentiles, pairs by tier label). */
  readonly timeline: readonly TimelineSecond[];
  /** The first late answers, each with its server time, send lag, tiers and degrade labels. */
  readonly lateAnswers: readonly LateAnswer[];
  readonly firstErrors: readonly string[];
  /** Over HTTP: the server process's CPU time (all threads) per request it served (warm-up included), ms, from its /metrics. */
  readonly serverCpuMsPerRequest?: number;
}

/** Fraction of `total` that `count` is; 0 when there is nothing to divide. */
export function share(count: number | undefined, total: number): number {
  return total === 0 ? 0 : (count ?? 0) / total;
}

/** The fields of a point read straight off its open-loop phase: load, latency, errors, tier shares. */
export function phaseLoadFields(
  phase: PhaseResult,
  offeredQps: number,
): Pick<
  BenchPoint,
  | 'offeredQps'
  | 'achievedQps'
  | 'latencyMs'
  | 'errors'
  | 'refused'
  | 'requests'
  | 'lateBoundMs'
  | 'lateBeyondBound'
  | 'lateServerOnTime'
  | 'afterDeadline'
  | 'allUnscored'
  | 'pairs'
  | 'tierShare'
> {
  const total = phase.pairs;
  const byTier = phase.pairsByTier;
  return {
    offeredQps,
    achievedQps: phase.achievedQps,
    latencyMs: phase.latencyMs,
    errors: phase.errors,
    refused: phase.refused,
    requests: phase.requests,
    lateBoundMs: phase.lateBoundMs,
    lateBeyondBound: phase.lateBeyondBound,
    lateServerOnTime: phase.lateServerOnTime,
    afterDeadline: phase.afterDeadline,
    allUnscored: phase.allUnscored,
    pairs: total,
    tierShare: {
      cache: share(byTier.cache, total),
      'fast-path': share(byTier['fast-path'], total),
      'cross-encoder': share(byTier['cross-encoder'], total),
      unscored: share(byTier.unscored, total),
    },
  };
}

/** The fields of a point that describe the load generator itself while the phase ran. */
export function phaseGeneratorFields(
  phase: PhaseResult,
): Pick<BenchPoint, 'scheduleLagMs' | 'eventLoopDelayMs' | 'generatorUsPerRequest' | 'cpuCores' | 'hostStealMs'> {
  return {
    hostStealMs: phase.hostStealMs,
    scheduleLagMs: phase.scheduleLagMs,
    eventLoopDelayMs: phase.eventLoopDelayMs,
    generatorUsPerRequest: phase.generatorUsPerRequest,
    cpuCores: phase.cpuCores,
  };
}

/** A point's router counters, from `router.stats()` over the measured phase. */
export function routerCounterFields(
  rs: RouterStats,
): Pick<
  BenchPoint,
  | 'degradedPairs'
  | 'shedPairs'
  | 'deadlinePairs'
  | 'errorPairs'
  | 'cancelledPairs'
  | 'lateCalls'
  | 'answerLagMs'
  | 'backgroundPairs'
> {
  return {
    degradedPairs: rs.degradedPairs,
    shedPairs: rs.shedPairs,
    deadlinePairs: rs.deadlinePairs,
    errorPairs: rs.errorPairs,
    cancelledPairs: rs.cancelledPairs,
    lateCalls: rs.lateCalls,
    answerLagMs: rs.answerLagMs,
    backgroundPairs: rs.backgroundPairs,
  };
}

/** The start of a point's progress line: achieved rate and latency percentiles. */
export function formatPointHead(label: string, point: BenchPoint): string {
  const late =
    point.lateBoundMs === null
      ? ''
      : `late > budget + ${point.lateBoundMs} ms: ${point.lateBeyondBound} (after the deadline at all: ${point.afterDeadline}${
          point.lateServerOnTime === null
            ? ''
            : `; answered in time by the server's own timing: ${point.lateServerOnTime}`
        }${point.answerLagMs === undefined ? '' : `; answer-lag allowance ${point.answerLagMs.toFixed(1)} ms`}), `;
  return (
    `${label}: achieved ${point.achievedQps.toFixed(1)} rps, p50 ${point.latencyMs.p50} p99 ${point.latencyMs.p99} p99.9 ${point.latencyMs.p999} p99.99 ${point.latencyMs.p9999} max ${point.latencyMs.max} ms, ` +
    `${late}all pairs unscored: ${point.allUnscored}, `
  );
}

/**
 * What became of a phase's measured requests, in parts that add up and never overlap:
 * `N requests: a answered, r refused (429), f failed, u unfinished [HTTP 200×a 429×r …]; errors e
 * (f failed + u unfinished + w answered with unscored pairs)`. Warm-up requests are not counted.
 */
export function formatRequestOutcomes(
  phase: Pick<
    PhaseResult,
    'requests' | 'completed' | 'refused' | 'thrown' | 'unfinished' | 'statuses' | 'errors' | 'withUnscoredPairs'
  >,
): string {
  const answered = phase.completed - phase.refused - phase.thrown;
  const statuses = Object.entries(phase.statuses)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');
  return (
    `${phase.requests} requests: ${answered} answered, ${phase.refused} refused (429), ${phase.thrown} failed, ${phase.unfinished} unfinished` +
    `${statuses === '' ? '' : ` [HTTP ${statuses}]`}; errors ${phase.errors}` +
    ` (${phase.thrown} failed + ${phase.unfinished} unfinished + ${phase.withUnscoredPairs} answered with unscored pairs)`
  );
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const ms = (x: number): string => (x >= 10_000 ? `${(x / 1000).toFixed(1)}s` : x >= 100 ? x.toFixed(0) : x.toFixed(1));

export function formatTable(points: readonly BenchPoint[]): string {
  const header = [
    'routing',
    'offered',
    'achieved',
    'p50',
    'p90',
    'p99',
    'p99.9',
    'p99.99',
    'max',
    'late>bound',
    'all-unscored',
    'errors',
    'refused',
    'pairs',
    'cache',
    'fast-path',
    'CE',
    'CE-model',
    'degraded',
    'lag p99',
    'loop p99',
  ];
  const rows = points.map((p) => [
    p.routing,
    p.offeredQps.toFixed(1),
    p.achievedQps.toFixed(1),
    ms(p.latencyMs.p50),
    ms(p.latencyMs.p90),
    ms(p.latencyMs.p99),
    ms(p.latencyMs.p999),
    ms(p.latencyMs.p9999),
    ms(p.latencyMs.max),
    p.lateBoundMs === null ? '-' : String(p.lateBeyondBound),
    String(p.allUnscored),
    String(p.errors),
    String(p.refused),
    String(p.pairs),
    pct(p.tierShare.cache),
    pct(p.tierShare['fast-path']),
    pct(p.tierShare['cross-encoder']),
    pct(p.modelShare['cross-encoder']),
    String(p.degradedPairs),
    ms(p.scheduleLagMs.p99),
    ms(p.eventLoopDelayMs.p99),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return (
    [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') +
    '\n(latencies in ms from the scheduled send time; late>bound = requests answered more than the bound after their deadline; all-unscored = requests with every pair unscored; errors = requests that failed, never finished or had unscored pairs; refused = 429s, not errors; CE-model = pairs whose score came from the cross-encoder, fresh or cached)\n'
  );
}

/**
 * p50 / p99 / p99.9 per routing against offered QPS. With `capMs`, values above it are drawn at the
 * cap and the series is marked "(capped)" (a zoomed view next to a naive baseline in seconds).
 */
export function renderLatencyPlot(
  points: readonly BenchPoint[],
  budgetMs: number | undefined,
  title: string,
  capMs?: number,
): string {
  const routings = [...new Set(points.map((p) => p.routing))];
  const series: ChartSeries[] = [];
  for (const routing of routings) {
    const ps = points.filter((p) => p.routing === routing).sort((a, b) => a.offeredQps - b.offeredQps);
    for (const [name, pick] of [
      ['p50', (p: BenchPoint) => p.latencyMs.p50],
      ['p99', (p: BenchPoint) => p.latencyMs.p99],
      ['p99.9', (p: BenchPoint) => p.latencyMs.p999],
    ] as const) {
      const values = ps.map((p) => [p.offeredQps, pick(p)] as const);
      const capped = capMs !== undefined && values.some(([, y]) => y > capMs);
      series.push({
        name: `${routing} ${name}${capped ? ' (capped)' : ''}`,
        points: values.map(([x, y]) => [x, capMs === undefined ? y : Math.min(y, capMs)] as const),
      });
    }
  }
  return renderLineChart({
    title,
    xLabel: 'offered load (requests/s)',
    yLabel: 'latency (ms, from scheduled send)',
    series,
    hLines: budgetMs === undefined ? [] : [{ y: budgetMs, label: `budget ${budgetMs} ms` }],
    yRange: capMs === undefined ? undefined : [0, capMs],
    width: 900,
    height: 500,
  });
}
