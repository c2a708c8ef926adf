/**
 * Soak: the gate with the cascade router (fast path → cross-encoder) under a sustained overload of the
 * cross-encoder, for minutes, in one process. First the cross-encoder's capacity is measured in the
 * same run (closed loop straight to the tier, as `relevance-gate bench --capacity` does), then an
 * open-loop phase offers `--factor` × that capacity (pairs/s, k pairs per request) for `--minutes`.
 *
 * Prints one row per minute of scheduled time: requests, p50 / p99 / max latency (from the
 * scheduled send), requests late beyond the deadline bound, requests with unscored pairs, pairs
 * shed / cancelled at the deadline / unscored (router counters), RSS and heap. Then the verdict
 * against the acceptance: 0 requests late beyond the bound, 0 errors (thrown, unfinished or with
 * an unscored pair), RSS growth < 10 % from minute 2 to the last minute (mean RSS of each minute).
 * Exit code 1 when a check fails.
 *
 * Usage:
 *   npx tsx bench/soak.ts [--minutes 10] [--factor 2] [--capacity-sec 10] [--budget-ms 100]
 *     [--collection ../shared/data/scifact] [--k 20] [--cross-encoder models/generated/tinybert-l2]
 *     [--fast-path models/fast-path-lexical] [--worker-nice 10] [--return-margin-ms 5] [--workers N]
 *     [--late-bound-ms 2] [--warmup-sec 5] [--cache] [--no-loop-watch] [--seed 1] [--json out.json]
 * See docs/bench.md (Soak) and docs/router.md (Hard deadline).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createScoreCache, type ScoreCache } from '../src/cache/score-cache.js';
import { loadCollection } from '../src/tooling/eval/collection.js';
import { buildCorpusStats } from '../src/features/corpus-stats.js';
import { createGate } from '../src/gate/gate.js';
import { listThreads, reniceNewThreads } from '../src/tooling/loadgen/bench-runner.js';
import { measureCapacity } from '../src/tooling/loadgen/capacity.js';
import { DEFAULT_LATE_BOUND_MS, runOpenLoopPhase } from '../src/tooling/loadgen/open-loop.js';
import { buildBenchWorkload } from '../src/tooling/loadgen/workload.js';
import { createRouter } from '../src/router/router.js';
import { crossEncoderTier, fastPathTier } from '../src/router/tiers.js';
import type { RouterStats } from '../src/router/types.js';
import { createCrossEncoder } from '../src/tiers/cross-encoder/cross-encoder.js';
import { createCrossEncoderScorer } from '../src/tiers/cross-encoder/scorer.js';
import { loadFastPathScorer } from '../src/tiers/fast-path/fast-path-scorer.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
function numberArg(name: string, fallback: number): number {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number ≥ 0`);
  return v;
}
const flag = (name: string): boolean => process.argv.includes(`--${name}`);

const minutes = numberArg('minutes', 10);
const factor = numberArg('factor', 2);
const capacitySec = numberArg('capacity-sec', 10);
const budgetMs = numberArg('budget-ms', 100);
const k = numberArg('k', 20);
const warmupSec = numberArg('warmup-sec', 5);
const lateBoundMs = numberArg('late-bound-ms', DEFAULT_LATE_BOUND_MS);
const returnMarginMs = numberArg('return-margin-ms', 5);
const workerNice = flag('no-nice') ? undefined : numberArg('worker-nice', 10);
const workersArg = arg('workers', '');
const workers = workersArg === '' ? undefined : numberArg('workers', 2);
const seed = numberArg('seed', 1);
const collectionDir = arg('collection', '../shared/data/scifact');
const crossEncoderDir = arg('cross-encoder', 'models/generated/tinybert-l2');
const fastPathDir = arg('fast-path', 'models/fast-path-lexical');
const useCache = flag('cache');
const jsonPath = arg('json', '');
const log = (line: string): void => {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};

const collection = loadCollection(collectionDir);
const workload = buildBenchWorkload(collection, { k, seed });
log(
  `collection ${collection.name}: ${workload.queries.length} queries, BM25 top-${k} (mean ${workload.meanPassages.toFixed(1)} passages)`,
);
const stats = await buildCorpusStats(join(collection.dir, 'docs.jsonl'));
const fastPath = await loadFastPathScorer(fastPathDir, { stats });
const threadsBefore = listThreads();
const encoder = await createCrossEncoder({ modelDir: crossEncoderDir, workers, maxPendingPairs: 10_000_000 });
if (workerNice !== undefined)
  log(`worker niceness: ${reniceNewThreads(threadsBefore, workerNice)} cross-encoder threads at nice ${workerNice}`);
log(
  `cross-encoder ${encoder.info.id}: ${encoder.info.workers} workers × ${encoder.info.intraOpThreads} threads (speed/shape model)`,
);
const threshold = fastPath.recommendedThreshold ?? 0.5;

let exitCode = 0;
try {
  // 1. Capacity, in this run: warm the pool, then a closed loop straight to the tier.
  const ceScorer = createCrossEncoderScorer(encoder);
  workload.restart(seed + 3);
  await measureCapacity(ceScorer, workload, 1.5, Math.max(4, encoder.info.workers * 4));
  const concurrency = Math.max(8, encoder.info.workers * 8);
  workload.restart(seed + 7);
  const capacity = await measureCapacity(ceScorer, workload, capacitySec, concurrency);
  const qps = (factor * capacity.pairsPerSec) / workload.meanPassages;
  log(
    `cross-encoder capacity: ${capacity.pairsPerSec.toFixed(0)} pairs/s (${capacity.requestsPerSec.toFixed(1)} requests/s; closed loop, ${concurrency} concurrent, ${capacity.seconds.toFixed(1)} s, ${capacity.errors} errors) → offering ${factor}x = ${qps.toFixed(1)} requests/s`,
  );

  // 2. The system under test.
  const cache: ScoreCache | undefined = useCache ? createScoreCache({ maxBytes: 256 * 1024 * 1024 }) : undefined;
  const router = createRouter({
    tiers: [fastPathTier(fastPath), crossEncoderTier(encoder)],
    routing: { mode: 'cascade', threshold },
    cache,
    defaultBudgetMs: budgetMs,
    returnMarginMs,
    answerLag: { watchEventLoop: !flag('no-loop-watch') },
  });
  const warm = await router.warmUp();
  log(
    `router warm-up: ${warm.tiers.map((t) => `${t.name} ${t.ms.toFixed(1)} ms${t.error ? ` (${t.error})` : ''}`).join(', ')}`,
  );
  const gate = createGate({ scorer: router, policy: { threshold } });

  // 3. Per-minute samples: RSS and heap every second, router counters at each minute boundary.
  interface MinuteSample {
    rss: number[];
    heap: number[];
    stats?: RouterStats;
  }
  const samples: MinuteSample[] = [];
  let measureStartedAt: number | undefined;
  let lastStats: RouterStats | undefined;
  const sampler = setInterval(() => {
    if (measureStartedAt === undefined) return;
    const minute = Math.floor((performance.now() - measureStartedAt) / 60_000);
    if (minute >= minutes) return;
    const m = process.memoryUsage();
    samples[minute] ??= { rss: [], heap: [] };
    samples[minute].rss.push(m.rss);
    samples[minute].heap.push(m.heapUsed);
    // Counters at the end of each minute (the last sample of a minute overwrites the earlier ones).
    samples[minute].stats = router.stats();
  }, 1000);
  let lastMinuteLogged = -1;
  workload.restart(seed);
  const phase = await runOpenLoopPhase({
    gate,
    workload,
    qps,
    durationSec: minutes * 60,
    warmupSec,
    budgetMs,
    lateBoundMs,
    timelineBucketSec: 60,
    seed: seed + 1,
    onMeasureStart: () => {
      router.resetStats();
      measureStartedAt = performance.now();
    },
    onTick: (live) => {
      if (!live.measuring || measureStartedAt === undefined) return;
      const minute = Math.floor((performance.now() - measureStartedAt) / 60_000);
      if (minute > lastMinuteLogged && minute > 0) {
        lastMinuteLogged = minute;
        const rss = samples[minute - 1]?.rss.at(-1) ?? 0;
        log(
          `minute ${minute} done: sent ${live.sent}, in flight ${live.inFlight}, p99 so far ${live.p99Ms.toFixed(1)} ms, RSS ${(rss / 1048576).toFixed(0)} MB`,
        );
      }
    },
  });
  clearInterval(sampler);
  router.close();
  await cache?.close();

  // 4. The curve.
  const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const rows: Array<Record<string, number>> = [];
  for (let m = 0; m < minutes; m++) {
    const t = phase.timeline[m];
    const st = samples[m]?.stats;
    const diff = (key: 'shedPairs' | 'deadlinePairs' | 'unscoredPairs' | 'errorPairs' | 'degradedPairs'): number =>
      st === undefined ? 0 : st[key] - (lastStats?.[key] ?? 0);
    rows.push({
      minute: m + 1,
      requests: t?.requests ?? 0,
      p50Ms: t?.p50Ms ?? 0,
      p99Ms: t?.p99Ms ?? 0,
      maxMs: t?.maxMs ?? 0,
      late: t?.late ?? 0,
      withUnscored: t?.withUnscored ?? 0,
      allUnscored: t?.allUnscored ?? 0,
      shedPairs: diff('shedPairs'),
      deadlinePairs: diff('deadlinePairs'),
      errorPairs: diff('errorPairs'),
      unscoredPairs: diff('unscoredPairs'),
      ceShare:
        t === undefined ? 0 : (t.pairsByTier['cross-encoder'] ?? 0) / Math.max(1, t.requests * workload.meanPassages),
      rssMb: mean(samples[m]?.rss ?? []) / 1048576,
      heapMb: mean(samples[m]?.heap ?? []) / 1048576,
      // The router's answer-lag allowance at the end of the minute, and the host's steal in it.
      lagMs: st?.answerLagMs ?? 0,
      stealMs: t?.hostStealMs ?? Number.NaN,
    });
    if (st !== undefined) lastStats = st;
  }
  const header = [
    'min',
    'requests',
    'p50',
    'p99',
    'max',
    `late>${budgetMs}+${lateBoundMs}`,
    'w/unscored',
    'all-unscored',
    'shed',
    'deadline',
    'err',
    'unscored',
    'CE%',
    'RSS MB',
    'heap MB',
    'lag ms',
    'steal ms',
  ];
  const table = [
    header.join('\t'),
    ...rows.map((r) =>
      [
        r.minute,
        r.requests,
        r.p50Ms.toFixed(1),
        r.p99Ms.toFixed(1),
        r.maxMs.toFixed(1),
        r.late,
        r.withUnscored,
        r.allUnscored,
        r.shedPairs,
        r.deadlinePairs,
        r.errorPairs,
        r.unscoredPairs,
        (r.ceShare * 100).toFixed(1),
        r.rssMb.toFixed(1),
        r.heapMb.toFixed(1),
        r.lagMs.toFixed(1),
        Number.isNaN(r.stealMs) ? '-' : r.stealMs.toFixed(0),
      ].join('\t'),
    ),
  ].join('\n');
  process.stdout.write(
    `\nper minute of scheduled time (latency in ms from the scheduled send; pairs counted by the router):\n${table}\n`,
  );

  // 5. Verdict.
  const l = phase.latencyMs;
  const from = rows[Math.min(1, rows.length - 1)]?.rssMb ?? 0;
  const to = rows[rows.length - 1]?.rssMb ?? 0;
  const growth = from > 0 ? to / from - 1 : 0;
  const peak = Math.max(...rows.slice(Math.min(1, rows.length - 1)).map((r) => r.rssMb)); // from minute 2, as the growth
  const checks = [
    {
      name: `0 requests answered later than budget + ${lateBoundMs} ms`,
      ok: phase.lateBeyondBound === 0,
      value: phase.lateBeyondBound,
    },
    { name: '0 errors (thrown, unfinished, or with an unscored pair)', ok: phase.errors === 0, value: phase.errors },
    {
      name: 'RSS growth from minute 2 to the last minute < 10 %',
      ok: growth < 0.1,
      value: `${(growth * 100).toFixed(1)} %`,
    },
  ];
  process.stdout.write(
    `\n${phase.requests} requests at ${phase.achievedQps.toFixed(1)} requests/s achieved (${qps.toFixed(1)} offered = ${factor}x capacity ${capacity.pairsPerSec.toFixed(0)} pairs/s), ${phase.pairs} pairs\n` +
      `latency p50 ${l.p50} p99 ${l.p99} p99.9 ${l.p999} p99.99 ${l.p9999} max ${l.max} ms; after the deadline at all: ${phase.afterDeadline}; late beyond the bound: ${phase.lateBeyondBound}; all pairs unscored: ${phase.allUnscored}\n` +
      `errors ${phase.errors} (thrown ${phase.thrown}, unfinished ${phase.unfinished}, with unscored pairs ${phase.withUnscoredPairs}); first errors: ${phase.firstErrors.join(' | ') || 'none'}\n` +
      `RSS minute 2 ${from.toFixed(1)} MB → minute ${rows.length} ${to.toFixed(1)} MB (${(growth * 100).toFixed(1)} %), peak ${peak.toFixed(1)} MB; ` +
      `schedule lag p99 ${phase.scheduleLagMs.p99} ms max ${phase.scheduleLagMs.max} ms, event-loop delay p99 ${phase.eventLoopDelayMs.p99.toFixed(1)} max ${phase.eventLoopDelayMs.max.toFixed(1)} ms, CPU ${phase.cpuCores.toFixed(2)} cores\n`,
  );
  for (const c of checks) process.stdout.write(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.value}\n`);
  if (checks.some((c) => !c.ok)) exitCode = 1;
  if (jsonPath !== '') {
    const os = await import('node:os');
    await writeFile(
      jsonPath,
      `${JSON.stringify(
        {
          createdAt: new Date().toISOString(),
          machine: { cpus: os.availableParallelism(), loadavg: os.loadavg(), node: process.version },
          config: {
            minutes,
            factor,
            capacitySec,
            budgetMs,
            k,
            warmupSec,
            lateBoundMs,
            returnMarginMs,
            workerNice,
            cache: useCache,
            seed,
            collectionDir,
            crossEncoderDir,
            fastPathDir,
            threshold,
            crossEncoderId: encoder.info.id,
            workers: encoder.info.workers,
          },
          capacity,
          offeredQps: qps,
          summary: { ...phase, timeline: undefined, rssGrowth: growth, rssPeakMb: peak },
          minutes: rows,
          checks,
        },
        null,
        2,
      )}\n`,
    );
    process.stdout.write(`JSON written to ${jsonPath}\n`);
  }
} finally {
  await encoder.close();
  fastPath.model.dispose();
}
process.exitCode = exitCode;
