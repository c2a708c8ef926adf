/**
 * The seed scenario with its cross-encoder REMOTE: does the cascade still hold the deadline bound
 * when the slow tier is an HTTP call? One `relevance-gate serve --cross-encoder <dir>` process
 * stands in for the GPU server (no score cache, its own budget 1 s: the caller's deadline is what
 * bounds a call, as against a GPU server that has none), or --url names a running backend. The
 * engine under test runs in this process: the router cascade, fast path → `createRemoteScorer`
 * (protocol `cohere`, POST <url>/v2/rerank, model `cross-encoder`) as the router's tier named
 * 'cross-encoder', a 256 MB score cache, the gate on top: what `relevance-gate bench` builds, with
 * the remote scorer in the local cross-encoder's place, driven by the same open-loop generator
 * (runOpenLoopPhase: Poisson arrivals, latency from the scheduled send, deadline = scheduled send
 * + budget) over the same workload (buildBenchWorkload).
 *
 *   npx tsx bench/remote-cascade.ts [--url http://gpu-host:8080] [--cross-encoder models/generated/tinybert-l2]
 *       [--collection ../shared/data/scifact] [--k 20] [--qps 1000] [--duration 60] [--warmup 5]
 *       [--budget-ms 100] [--zipf 1.0] [--distinct 5000] [--return-margin-ms (router default 5)] [--max-queued-pairs 512]
 *       [--model cross-encoder] [--workers N (the stand-in's)] [--seed 1] [--json out.json]
 *
 * Prints `bench`'s table (late > budget + 2 ms, all-unscored, errors, p50 … max, CE-model = pairs
 * whose score came from the remote cross-encoder, fresh or cached), what became of the requests,
 * the router's degraded pairs and the remote scorer's requests. Exit code 1 when a request was
 * late beyond the bound or an error (thrown, unfinished, or with an unscored pair).
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createScoreCache } from '../src/cache/score-cache.js';
import { buildCorpusStats } from '../src/features/corpus-stats.js';
import { createGate } from '../src/gate/gate.js';
import { createRouter } from '../src/router/router.js';
import { fastPathTier } from '../src/router/tiers.js';
import type { TierLoadStats } from '../src/router/types.js';
import { CROSS_ENCODER_TIER } from '../src/tiers/cross-encoder/scorer.js';
import { loadFastPathScorer } from '../src/tiers/fast-path/fast-path-scorer.js';
import { createRemoteScorer, type RemoteScorerStats } from '../src/tiers/remote/index.js';
import { loadCollection } from '../src/tooling/eval/collection.js';
import { runOpenLoopPhase } from '../src/tooling/loadgen/open-loop.js';
import {
  type BenchPoint,
  formatPointHead,
  formatRequestOutcomes,
  formatTable,
  phaseGeneratorFields,
  routerCounterFields,
  phaseLoadFields,
  share,
} from '../src/tooling/loadgen/report.js';
import { buildBenchWorkload } from '../src/tooling/loadgen/workload.js';
import { type ServeChild, startServeChild } from './serve-child.js';

const root = resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    'cross-encoder': { type: 'string', default: join(root, 'models', 'generated', 'tinybert-l2') },
    workers: { type: 'string' },
    model: { type: 'string', default: 'cross-encoder' },
    collection: { type: 'string', default: join(root, '..', 'shared', 'data', 'scifact') },
    'fast-path': { type: 'string', default: join(root, 'models', 'fast-path-lexical') },
    k: { type: 'string', default: '20' },
    qps: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '5' },
    'budget-ms': { type: 'string', default: '100' },
    zipf: { type: 'string', default: '1.0' },
    distinct: { type: 'string', default: '5000' },
    'return-margin-ms': { type: 'string' },
    'max-queued-pairs': { type: 'string' },
    'cache-mb': { type: 'string', default: '256' },
    seed: { type: 'string', default: '1' },
    json: { type: 'string' },
  },
});
const number = (name: keyof typeof args): number | undefined => {
  const value = args[name];
  if (typeof value !== 'string') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number ≥ 0, got ${value}`);
  return n;
};
const k = number('k') as number;
const qps = number('qps') as number;
const durationSec = number('duration') as number;
const warmupSec = number('warmup') as number;
const budgetMs = number('budget-ms') as number;
const seed = number('seed') as number;

/** The tier's cumulative counters over the measured window. */
function tierDelta(now: TierLoadStats | undefined, before: TierLoadStats | undefined) {
  const d = (key: 'submittedPairs' | 'completedPairs' | 'failedPairs' | 'calls'): number =>
    (now?.[key] ?? 0) - (before?.[key] ?? 0);
  return {
    submittedPairs: d('submittedPairs'),
    completedPairs: d('completedPairs'),
    failedPairs: d('failedPairs'),
    submissions: d('calls'),
  };
}

async function main(): Promise<void> {
  const collection = loadCollection(args.collection as string);
  const workload = buildBenchWorkload(collection, { k, distinct: number('distinct'), zipf: number('zipf'), seed });
  console.log(
    `workload: ${collection.name}, ${workload.queries.length} distinct queries (${workload.syntheticQueries} synthesised), BM25 top-${k} (mean ${workload.meanPassages.toFixed(1)} passages), Zipf ${args.zipf}`,
  );
  const stats = await buildCorpusStats(join(collection.dir, 'docs.jsonl'));
  const fastPath = await loadFastPathScorer(args['fast-path'] as string, { stats });
  let standIn: ServeChild | undefined;
  try {
    let url = args.url;
    if (url === undefined) {
      const workers = args.workers === undefined ? [] : ['--workers', args.workers];
      standIn = await startServeChild([
        '--cross-encoder',
        args['cross-encoder'] as string,
        '--no-cache',
        '--budget-ms',
        '1000',
        ...workers,
      ]);
      url = standIn.url;
      console.log(
        `remote cross-encoder: stand-in serve --cross-encoder ${args['cross-encoder']} --no-cache at ${url} (pid ${standIn.cli.child.pid})`,
      );
    }
    const remote = createRemoteScorer({ protocol: 'cohere', url, model: args.model as string });
    const cache = createScoreCache({ maxBytes: (number('cache-mb') as number) * 1024 * 1024 });
    const threshold = fastPath.recommendedThreshold ?? 0.5;
    const maxQueuedPairs = number('max-queued-pairs');
    const router = createRouter({
      tiers: [fastPathTier(fastPath), { name: CROSS_ENCODER_TIER, scorer: remote, quality: 2, maxQueuedPairs }],
      routing: { mode: 'cascade', threshold },
      cache,
      defaultBudgetMs: budgetMs,
      returnMarginMs: number('return-margin-ms'),
      answerLag: { watchEventLoop: true },
    });
    try {
      const warm = await router.warmUp();
      console.log(
        `router warm-up: ${warm.tiers.map((t) => `${t.name} ${t.ms.toFixed(1)} ms${t.error === undefined ? '' : ` (${t.error})`}`).join(', ')}`,
      );
      const gate = createGate({ scorer: router, policy: { threshold } });
      const tierOf = (): TierLoadStats | undefined => router.stats().tiers.find((t) => t.name === CROSS_ENCODER_TIER);
      let tierBefore: TierLoadStats | undefined;
      let remoteBefore: RemoteScorerStats = remote.stats();
      let nextTick = 0;
      workload.restart(seed);
      const phase = await runOpenLoopPhase({
        gate,
        workload,
        qps,
        durationSec,
        warmupSec,
        budgetMs,
        seed: seed + 1,
        onMeasureStart: () => {
          router.resetStats();
          tierBefore = tierOf();
          remoteBefore = remote.stats();
        },
        onTick: (live) => {
          if (live.elapsedSec < nextTick) return;
          nextTick = live.elapsedSec + 10;
          process.stderr.write(
            `${live.elapsedSec.toFixed(0)}/${live.totalSec.toFixed(0)} s: sent ${live.sent}, done ${live.completed}, in flight ${live.inFlight}${live.measuring ? `, p99 ${live.p99Ms.toFixed(1)} ms` : ' (warm-up)'}\n`,
          );
        },
      });
      const rs = router.stats();
      const tier = tierDelta(tierOf(), tierBefore);
      const remoteNow = remote.stats();
      const cacheStats = cache.stats();
      const point: BenchPoint = {
        routing: 'cascade:remote',
        ...phaseLoadFields(phase, qps),
        modelShare: {
          'cross-encoder': share(
            (phase.pairsByTier[CROSS_ENCODER_TIER] ?? 0) + (rs.cacheHitsBySource[CROSS_ENCODER_TIER] ?? 0),
            phase.pairs,
          ),
          'fast-path': share(
            (phase.pairsByTier['fast-path'] ?? 0) + (rs.cacheHitsBySource['fast-path'] ?? 0),
            phase.pairs,
          ),
        },
        ...routerCounterFields(rs),
        ...phaseGeneratorFields(phase),
        cache: {
          hitRate: share(rs.byTier.cache, rs.pairs),
          entries: cacheStats.entries,
          evictions: cacheStats.evictions,
          mb: cacheStats.bytes / 1048576,
        },
        // The remote tier as the router saw it: pairs answered, pairs failed or cancelled, pairs per call.
        'cross-encoder': {
          pairsRun: tier.completedPairs,
          pairsDropped: tier.failedPairs,
          meanBatchSize: tier.submissions === 0 ? 0 : tier.submittedPairs / tier.submissions,
          pairsPerSec: tier.completedPairs / phase.wallSec,
        },
        routerTiers: rs.tiers,
        timeline: phase.timeline,
        lateAnswers: phase.lateAnswers,
        firstErrors: phase.firstErrors,
      };
      const remoteDelta = {
        requests: remoteNow.requests - remoteBefore.requests,
        calls: remoteNow.calls - remoteBefore.calls,
        failedCalls: remoteNow.failedCalls - remoteBefore.failedCalls,
      };
      const label = `cascade, remote cross-encoder @ ${qps} rps`;
      console.log(`${formatPointHead(label, point)}errors ${point.errors}`);
      console.log(formatRequestOutcomes(phase));
      console.log(`\n${formatTable([point])}`);
      console.log(
        `router: ${rs.degradedPairs} pairs degraded to the fast path (${rs.shedPairs} shed, ${rs.deadlinePairs} deadline, ${rs.errorPairs} error; ${rs.cancelledPairs} cancelled at the deadline), ${rs.lateCalls} late calls, answer-lag allowance ${rs.answerLagMs.toFixed(1)} ms`,
      );
      console.log(
        `remote: ${remoteDelta.requests} requests, ${remoteDelta.calls} calls answered, ${remoteDelta.failedCalls} failed (deadline, abort or error); ${tier.submittedPairs} pairs sent, ${tier.completedPairs} answered (${point['cross-encoder'].pairsPerSec.toFixed(0)} pairs/s), ${point['cross-encoder'].meanBatchSize.toFixed(1)} pairs per call`,
      );
      console.log(
        `generator: schedule lag p99 ${phase.scheduleLagMs.p99} ms, event-loop delay p99 ${phase.eventLoopDelayMs.p99.toFixed(1)} ms, ${phase.cpuCores.toFixed(2)} cores` +
          (phase.hostStealMs === null ? '' : `, host steal ${phase.hostStealMs.total.toFixed(0)} ms over the window`),
      );
      if (args.json !== undefined) {
        const report = {
          createdAt: new Date().toISOString(),
          machine: { cpus: availableParallelism(), loadavg: loadavg(), node: process.version },
          config: {
            k,
            qps,
            durationSec,
            warmupSec,
            budgetMs,
            threshold,
            seed,
            returnMarginMs: number('return-margin-ms') ?? null,
            maxQueuedPairs: maxQueuedPairs ?? null,
            cacheMb: number('cache-mb'),
            'fast-path': { dir: args['fast-path'], id: fastPath.id },
          },
          remote: {
            url,
            protocol: 'cohere',
            model: args.model,
            id: remote.id,
            standIn:
              standIn === undefined ? null : { crossEncoder: args['cross-encoder'], cache: false, budgetMs: 1000 },
            ...remoteDelta,
          },
          workload: {
            collection: collection.name,
            distinct: workload.queries.length,
            collectionQueries: workload.collectionQueries,
            syntheticQueries: workload.syntheticQueries,
            zipf: number('zipf') ?? null,
            meanPassages: workload.meanPassages,
          },
          results: [point],
        };
        writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
        console.log(`JSON written to ${args.json}`);
      }
      const held = point.lateBeyondBound === 0 && point.errors === 0;
      console.log(held ? 'bound held: 0 late beyond budget + 2 ms, 0 errors' : 'bound NOT held');
      if (!held) process.exitCode = 1;
    } finally {
      router.close();
      await cache.close();
    }
  } finally {
    fastPath.model.dispose();
    await standIn?.stop();
  }
}

await main();
