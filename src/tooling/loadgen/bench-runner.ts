/**
 * `relevance-gate bench` engine: loads the workload and the tiers once, optionally measures the
 * cross-encoder's capacity, then for every routing mode and offered QPS builds a FRESH router,
 * cache and gate (so points do not share cache contents or learned costs), runs an open-loop phase
 * and collects one BenchPoint. See docs/bench.md.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { createScoreCache, type ScoreCache } from '../../cache/score-cache.js';
import { InvalidArgumentError } from '../../errors.js';
import { loadCollection } from '../eval/collection.js';
import { buildCorpusStats } from '../../features/corpus-stats.js';
import { createGate } from '../../gate/gate.js';
import { createRouter } from '../../router/router.js';
import { crossEncoderTier, fastPathTier } from '../../router/tiers.js';
import type { Router, RoutingMode } from '../../router/types.js';
import { createCrossEncoder, type CrossEncoder } from '../../tiers/cross-encoder/cross-encoder.js';
import { createCrossEncoderScorer } from '../../tiers/cross-encoder/scorer.js';
import { loadFastPathScorer, type FastPathScorer } from '../../tiers/fast-path/fast-path-scorer.js';
import { measureCapacity, type CapacityResult } from './capacity.js';
import { runOpenLoopPhase, type PhaseResult } from './open-loop.js';
import {
  type BenchPoint,
  type BenchProgress,
  formatPointHead,
  phaseGeneratorFields,
  routerCounterFields,
  phaseLoadFields,
  share,
} from './report.js';
import { buildBenchWorkload } from './workload.js';

/** A QPS value: absolute requests/s, or a multiple of the measured cross-encoder capacity ('2x'). */
export type QpsSpec =
  | { readonly kind: 'absolute'; readonly qps: number }
  | { readonly kind: 'capacity'; readonly factor: number };

export interface RoutingSpec {
  readonly mode: RoutingMode;
  /** For fixed. */
  readonly tier?: 'fast-path' | 'cross-encoder';
}

export interface BenchOptions extends BenchProgress {
  readonly collection: string;
  readonly k: number;
  readonly qps: readonly QpsSpec[];
  readonly durationSec: number;
  readonly warmupSec: number;
  readonly budgetMs: number;
  readonly routings: readonly RoutingSpec[];
  readonly crossEncoderDir: string;
  readonly fastPathDir: string;
  readonly zipf?: number;
  readonly distinct?: number;
  readonly cache: boolean;
  readonly cacheMb: number;
  /** Idle-time refinement of shed pairs through the cache (router backgroundFill). */
  readonly backgroundFill?: boolean;
  /** Cache fast-path scores too (default true). */
  readonly cacheFastPath?: boolean;
  readonly workers?: number;
  readonly maxBatchTokens?: number;
  readonly maxQueueDelayMs?: number;
  readonly maxLength?: number;
  /** Cascade threshold; default the fast-path model's recommended threshold, else 0.5. */
  readonly threshold?: number;
  readonly headroom?: number;
  readonly returnMarginMs?: number;
  /** Router answer-lag allowance also learns from event-loop stalls (answerLag.watchEventLoop; default true). */
  readonly watchEventLoop?: boolean;
  readonly maxQueuedPairs?: number;
  /** Capacity probe seconds (0 = skip unless a QPS is relative to capacity). */
  readonly capacitySec: number;
  /** Pass the budget to the gate in fixed mode too (default: fixed runs without a deadline, as the naive policy). */
  readonly fixedDeadline: boolean;
  readonly seed: number;
  /** Linux: nice value for the cross-encoder pool's threads (undefined = leave as is). */
  readonly workerNice?: number;
}

export interface BenchReport {
  readonly createdAt: string;
  readonly machine: { readonly cpus: number; readonly loadavg: readonly number[]; readonly node: string };
  readonly config: Record<string, unknown>;
  readonly workload: {
    readonly collection: string;
    readonly distinct: number;
    readonly collectionQueries: number;
    readonly syntheticQueries: number;
    readonly zipf: number | null;
    readonly meanPassages: number;
  };
  readonly capacity: (CapacityResult & { readonly method: string }) | null;
  readonly results: BenchPoint[];
}

export function routingLabel(r: RoutingSpec): string {
  return r.mode === 'fixed' ? `fixed:${r.tier ?? 'cross-encoder'}` : r.mode;
}

/** Whether `dir` holds a generated speed/shape model (its README says so). */
function isShapeModel(dir: string): boolean {
  try {
    return readFileSync(join(dir, 'README.md'), 'utf8').includes('SPEED/SHAPE MODEL');
  } catch {
    return false;
  }
}

/**
 * Generates the TinyBERT-L2 shape model into a folder that does not exist yet (or is empty), so that
 * `bench` runs on a fresh clone. A folder that holds anything is someone's model (one shipping only
 * an int8 variant has no model.onnx) and is never written.
 */
export async function ensureCrossEncoderModel(dir: string, log: (line: string) => void): Promise<void> {
  if (existsSync(dir) && readdirSync(dir).length > 0) return;
  log(
    `cross-encoder model missing at ${dir}: generating the TinyBERT-L2 SPEED/SHAPE model (random weights, not a relevance model)`,
  );
  const { writeCrossEncoderModelDir } = await import('../model-gen/index.js');
  await writeCrossEncoderModelDir(dir, 'tinybert-l2', { seed: 42 });
}

/** Thread ids of this process (Linux /proc); empty elsewhere. */
export function listThreads(): Set<number> {
  try {
    return new Set(readdirSync('/proc/self/task').map(Number));
  } catch {
    return new Set();
  }
}

/**
 * Lowers the scheduling priority of the threads started since `before` (the cross-encoder's worker
 * threads and their onnxruntime threads). On Linux nice values are per thread, so the main thread
 * (event loop: router timers, gate, load generator) keeps winning the CPU when the workers saturate
 * the cores. Returns how many threads were changed.
 */
export function reniceNewThreads(before: ReadonlySet<number>, nice: number): number {
  let changed = 0;
  for (const tid of listThreads()) {
    if (before.has(tid)) continue;
    try {
      setPriority(tid, nice);
      changed++;
    } catch {
      // a thread that exited meanwhile, or no permission: leave it
    }
  }
  return changed;
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const { log } = options;
  if (options.routings.length === 0) throw new InvalidArgumentError('at least one routing mode is needed');
  const collection = loadCollection(options.collection);
  log(`collection ${collection.name}: ${collection.docs.length} docs, ${collection.queries.length} queries`);
  const t0 = performance.now();
  const workload = buildBenchWorkload(collection, options);
  log(
    `workload: ${workload.queries.length} distinct queries (${workload.collectionQueries} from the collection, ${workload.syntheticQueries} synthesised as pairs of queries), ` +
      `BM25 top-${options.k} (mean ${workload.meanPassages.toFixed(1)} passages), ${options.zipf === undefined ? 'uniform draw' : `Zipf s=${options.zipf}`}; built in ${((performance.now() - t0) / 1000).toFixed(1)}s`,
  );

  const stats = await buildCorpusStats(join(collection.dir, 'docs.jsonl'));
  const fastPath: FastPathScorer = await loadFastPathScorer(options.fastPathDir, { stats });
  await ensureCrossEncoderModel(options.crossEncoderDir, log);
  const threadsBefore = options.workerNice === undefined ? undefined : listThreads();
  const encoder: CrossEncoder = await createCrossEncoder({
    modelDir: options.crossEncoderDir,
    workers: options.workers,
    maxBatchTokens: options.maxBatchTokens,
    maxQueueDelayMs: options.maxQueueDelayMs,
    maxLength: options.maxLength,
    // The router bounds what it queues; the naive fixed baseline must be free to queue without bound.
    maxPendingPairs: 10_000_000,
  });
  if (threadsBefore !== undefined && options.workerNice !== undefined) {
    const reniced = reniceNewThreads(threadsBefore, options.workerNice);
    log(
      `worker niceness: ${reniced} threads created by the cross-encoder pool set to nice ${options.workerNice} (the event loop keeps priority)`,
    );
  }
  log(
    `tiers: fast-path ${fastPath.id} (${options.fastPathDir}); cross-encoder ${encoder.info.id} (${options.crossEncoderDir}, ${encoder.info.workers} workers × ${encoder.info.intraOpThreads} threads, max length ${encoder.info.maxLength})${isShapeModel(options.crossEncoderDir) ? ' — SPEED/SHAPE model, random weights' : ''}`,
  );
  const threshold = options.threshold ?? fastPath.recommendedThreshold ?? 0.5;

  try {
    // Warm the pool (first runs allocate and are slow) and the batcher's cost estimates.
    workload.restart(options.seed + 3);
    await measureCapacity(createCrossEncoderScorer(encoder), workload, 1.5, Math.max(4, encoder.info.workers * 4));
    let capacity: BenchReport['capacity'] = null;
    const needCapacity = options.capacitySec > 0 || options.qps.some((q) => q.kind === 'capacity');
    if (needCapacity) {
      const seconds = options.capacitySec > 0 ? options.capacitySec : 8;
      const concurrency = Math.max(8, encoder.info.workers * 8);
      log(
        `measuring cross-encoder capacity: closed loop, ${concurrency} concurrent requests of the workload (k=${options.k}), straight to the tier, ${seconds}s ...`,
      );
      workload.restart(options.seed + 7);
      const c = await measureCapacity(createCrossEncoderScorer(encoder), workload, seconds, concurrency);
      capacity = {
        ...c,
        method: `closed loop, ${concurrency} concurrent k=${options.k} requests straight to the cross-encoder tier (no cache, no router) for ${seconds}s`,
      };
      log(
        `cross-encoder capacity: ${c.pairsPerSec.toFixed(0)} pairs/s = ${(c.pairsPerSec / workload.meanPassages).toFixed(1)} requests/s at ${workload.meanPassages.toFixed(1)} pairs/request (${c.errors} errors)`,
      );
    }
    const qpsValues = options.qps.map((q) => {
      if (q.kind === 'absolute') return q.qps;
      return (q.factor * (capacity as CapacityResult).pairsPerSec) / workload.meanPassages;
    });

    const results: BenchPoint[] = [];
    for (const routing of options.routings) {
      for (const qps of qpsValues) {
        const label = `${routingLabel(routing)} @ ${qps.toFixed(1)} rps`;
        const cache: ScoreCache | undefined = options.cache
          ? createScoreCache({ maxBytes: options.cacheMb * 1024 * 1024 })
          : undefined;
        const router: Router = createRouter({
          tiers: [
            fastPathTier(fastPath, { cache: options.cacheFastPath }),
            crossEncoderTier(encoder, { maxQueuedPairs: options.maxQueuedPairs }),
          ],
          routing: { mode: routing.mode, fixedTier: routing.tier ?? 'cross-encoder', threshold },
          cache,
          defaultBudgetMs: options.budgetMs,
          headroom: options.headroom,
          returnMarginMs: options.returnMarginMs,
          answerLag: { watchEventLoop: options.watchEventLoop !== false },
          backgroundFill: options.backgroundFill === true,
        });
        // Cold start is paid here, not by the first measured request (docs/router.md, Hard deadline).
        await router.warmUp();
        const gate = createGate({ scorer: router, policy: { threshold } });
        const ceBefore = { run: 0, dropped: 0 };
        workload.restart(options.seed);
        const fixedNoDeadline = routing.mode === 'fixed' && !options.fixedDeadline;
        const phase: PhaseResult = await runOpenLoopPhase({
          gate,
          workload,
          qps,
          durationSec: options.durationSec,
          warmupSec: options.warmupSec,
          budgetMs: fixedNoDeadline ? undefined : options.budgetMs,
          seed: options.seed + 1,
          onMeasureStart: () => {
            router.resetStats();
            const s = encoder.stats();
            ceBefore.run = s.pairsRun;
            ceBefore.dropped = s.pairsDropped;
          },
          onTick: (live) => options.onLive?.(label, live),
        });
        options.onPhaseEnd?.(label);
        const rs = router.stats();
        const ce = encoder.stats();
        const total = phase.pairs;
        const byTier = phase.pairsByTier;
        const cacheStats = cache?.stats();
        const ceFromCache = rs.cacheHitsBySource['cross-encoder'] ?? 0;
        const point: BenchPoint = {
          routing: routingLabel(routing),
          ...phaseLoadFields(phase, qps),
          modelShare: {
            'cross-encoder': share((byTier['cross-encoder'] ?? 0) + ceFromCache, total),
            'fast-path': share((byTier['fast-path'] ?? 0) + (rs.cacheHitsBySource['fast-path'] ?? 0), total),
          },
          ...routerCounterFields(rs),
          ...phaseGeneratorFields(phase),
          // The router probes L1 with lookup() (not counted by the cache): hits come from the router's counters.
          cache:
            cacheStats === undefined
              ? null
              : {
                  hitRate: share(rs.byTier.cache, rs.pairs),
                  entries: cacheStats.entries,
                  evictions: cacheStats.evictions,
                  mb: cacheStats.bytes / 1048576,
                },
          'cross-encoder': {
            pairsRun: ce.pairsRun - ceBefore.run,
            pairsDropped: ce.pairsDropped - ceBefore.dropped,
            meanBatchSize: ce.meanBatchSize,
            pairsPerSec: (ce.pairsRun - ceBefore.run) / phase.wallSec,
          },
          routerTiers: rs.tiers,
          timeline: phase.timeline,
          lateAnswers: phase.lateAnswers,
          firstErrors: phase.firstErrors,
        };
        results.push(point);
        log(
          formatPointHead(label, point) +
            `errors ${point.errors}, CE ${(point.tierShare['cross-encoder'] * 100).toFixed(1)}% cache ${(point.tierShare.cache * 100).toFixed(1)}% fast-path ${(point.tierShare['fast-path'] * 100).toFixed(1)}%, degraded ${point.degradedPairs}`,
        );
        if (phase.firstErrors.length > 0) log(`  first errors: ${phase.firstErrors.join(' | ')}`);
        router.close();
        await cache?.close();
        // Let the pool drain before the next point so it starts from an idle tier.
        for (let i = 0; i < 600; i++) {
          const s = encoder.stats();
          if (s.pendingRequests === 0 && s.inFlightBatches === 0) break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    const os = await import('node:os');
    return {
      createdAt: new Date().toISOString(),
      machine: { cpus: os.availableParallelism(), loadavg: os.loadavg(), node: process.version },
      config: {
        k: options.k,
        durationSec: options.durationSec,
        warmupSec: options.warmupSec,
        budgetMs: options.budgetMs,
        routings: options.routings.map(routingLabel),
        'cross-encoder': {
          dir: options.crossEncoderDir,
          id: encoder.info.id,
          workers: encoder.info.workers,
          intraOpThreads: encoder.info.intraOpThreads,
          maxLength: encoder.info.maxLength,
          note: 'speed/shape model with random weights, not a relevance model',
        },
        'fast-path': { dir: options.fastPathDir, id: fastPath.id },
        threshold,
        cache: options.cache ? { maxMb: options.cacheMb, 'fast-path': options.cacheFastPath ?? true } : false,
        headroom: options.headroom,
        returnMarginMs: options.returnMarginMs,
        watchEventLoop: options.watchEventLoop !== false,
        maxQueuedPairs: options.maxQueuedPairs,
        fixedDeadline: options.fixedDeadline,
        backgroundFill: options.backgroundFill === true,
        seed: options.seed,
        workerNice: options.workerNice ?? null,
      },
      workload: {
        collection: collection.name,
        distinct: workload.queries.length,
        collectionQueries: workload.collectionQueries,
        syntheticQueries: workload.syntheticQueries,
        zipf: options.zipf ?? null,
        meanPassages: workload.meanPassages,
      },
      capacity,
      results,
    };
  } finally {
    await encoder.close();
    fastPath.model.dispose();
  }
}
