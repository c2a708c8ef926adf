/**
 * `relevance-gate bench`: open-loop load test of the gate + router + tiers in-process, with
 * coordinated-omission-safe HDR latencies, per-tier shares, a table, JSON and an SVG plot.
 * See docs/bench.md.
 */
import type { Command } from 'commander';
import { isPositive, isPositiveInt, optionalNumberOption } from '../number-option.js';
import { InvalidArgumentError } from '../../errors.js';
import type { RoutingSpec } from '../../loadgen/bench-runner.js';

interface BenchCliOptions {
  collection: string;
  k: string;
  qps: string;
  duration: string;
  budgetMs: string;
  routing: string;
  fixedTier: string;
  crossEncoder: string;
  trees: string;
  zipf?: string;
  distinct?: string;
  warmup: string;
  json?: string;
  plot?: string;
  cache: boolean;
  cacheMb: string;
  cacheTrees: boolean;
  backgroundFill: boolean;
  workers?: string;
  maxBatchTokens?: string;
  maxQueueDelayMs?: string;
  maxLength?: string;
  threshold?: string;
  headroom?: string;
  returnMarginMs?: string;
  maxQueuedPairs?: string;
  capacity: string;
  fixedDeadline: boolean;
  seed: string;
  workerNice?: string;
  progress: boolean;
}

const num = optionalNumberOption;
const positive = isPositive;
const positiveInt = isPositiveInt;

export function register(program: Command): void {
  program
    .command('bench')
    .description(
      'Open-loop load test (Poisson arrivals, latency from the scheduled send time, HDR histograms) of the gate with the tier router, ' +
        'on BM25 top-k passages of a real collection; table, JSON and an SVG of latency percentiles vs offered QPS.',
    )
    .requiredOption(
      '--collection <dir>',
      'collection folder: docs.jsonl, queries.jsonl, qrels.tsv',
    )
    .option('--k <n>', 'passages per request (BM25 top-k)', '20')
    .requiredOption(
      '--qps <list>',
      "offered requests/s, comma list for a sweep; 'Nx' = N × the measured cross-encoder capacity (e.g. 2x)",
    )
    .option('--duration <sec>', 'measured seconds per point', '10')
    .option('--warmup <sec>', 'unmeasured seconds before each point at the same rate', '2')
    .option('--budget-ms <ms>', 'latency budget per request', '100')
    .option('--routing <list>', 'fixed | budget | cascade, comma list to compare in one run', 'cascade')
    .option('--fixed-tier <tier>', 'tier of fixed routing: crossEncoder | trees', 'crossEncoder')
    .option(
      '--cross-encoder <dir>',
      'cross-encoder model folder (generated as the TinyBERT-L2 speed/shape model when missing)',
      'models/generated/tinybert-l2',
    )
    .option('--trees <dir>', 'fast-path model folder', 'models/fastpath-lexical')
    .option('--zipf <s>', 'draw queries by Zipf(s) over the distinct queries (default uniform)')
    .option(
      '--distinct <n>',
      'distinct queries (more than the collection has: synthesised pairs of queries, see docs/bench.md)',
    )
    .option('--json <file>', 'write the JSON report here')
    .option('--plot <file.svg>', 'write the latency-vs-offered-QPS plot here')
    .option('--no-cache', 'run without the score cache')
    .option('--cache-mb <mb>', 'score cache size', '256')
    .option(
      '--background-fill',
      'router: send shed pairs to the idle cross-encoder in the background, through the cache',
      false,
    )
    .option('--no-cache-trees', 'do not cache fast-path scores (cross-encoder scores only)')
    .option('--workers <n>', 'cross-encoder worker threads (default: the tier default)')
    .option('--max-batch-tokens <n>', 'cross-encoder batch token budget')
    .option('--max-queue-delay-ms <ms>', 'cross-encoder max queue delay')
    .option('--max-length <n>', 'cross-encoder max tokens per pair')
    .option('--threshold <p>', "cascade decision threshold (default: the fast-path model's recommended threshold)")
    .option('--headroom <f>', 'share of the remaining budget a prediction may fill (router)')
    .option('--return-margin-ms <ms>', 'router answers this long before the deadline')
    .option('--max-queued-pairs <n>', 'router bound on pairs outstanding on the cross-encoder')
    .option(
      '--capacity <sec>',
      'measure the cross-encoder capacity first for this long (auto 8 s when a QPS is relative)',
      '0',
    )
    .option(
      '--fixed-deadline',
      'pass the budget to the gate in fixed routing too (default: fixed = the naive policy, no deadline)',
      false,
    )
    .option('--seed <n>', 'workload seed', '1')
    .option(
      '--worker-nice <n>',
      'Linux: nice value (0..19) for the cross-encoder worker threads, so the event loop keeps priority',
    )
    .option('--no-progress', 'no live progress line')
    .action(async (opts: BenchCliOptions) => {
      const [{ runBench, routingLabel }, { formatTable, renderLatencyPlot }, { createProgress }, { writeFile }] =
        await Promise.all([
          import('../../loadgen/bench-runner.js'),
          import('../../loadgen/report.js'),
          import('../../util/progress.js'),
          import('node:fs/promises'),
        ]);
      const qps = opts.qps.split(',').map((s) => {
        const t = s.trim();
        if (/^\d+(\.\d+)?x$/i.test(t)) return { kind: 'capacity' as const, factor: Number(t.slice(0, -1)) };
        return { kind: 'absolute' as const, qps: num('qps', t, positive, 'positive numbers or Nx') as number };
      });
      const fixedTier = opts.fixedTier;
      if (fixedTier !== 'crossEncoder' && fixedTier !== 'trees')
        throw new InvalidArgumentError(`--fixed-tier must be crossEncoder or trees, got "${fixedTier}"`);
      const routings = opts.routing.split(',').map((s): RoutingSpec => {
        const mode = s.trim();
        if (mode !== 'fixed' && mode !== 'budget' && mode !== 'cascade')
          throw new InvalidArgumentError(`--routing must be fixed, budget or cascade, got "${mode}"`);
        return mode === 'fixed' ? { mode, tier: fixedTier } : { mode };
      });
      const durationSec = num('duration', opts.duration, positive, 'a positive number of seconds') as number;
      const progressEnabled = opts.progress;
      let progress: ReturnType<typeof createProgress> | undefined;
      let progressLabel = '';
      const report = await runBench({
        collection: opts.collection,
        k: num('k', opts.k, positiveInt, 'a positive integer') as number,
        qps,
        durationSec,
        warmupSec: num('warmup', opts.warmup, (n) => n >= 0, 'a number of seconds ≥ 0') as number,
        budgetMs: num('budget-ms', opts.budgetMs, positive, 'a positive number of ms') as number,
        routings,
        crossEncoderDir: opts.crossEncoder,
        treesDir: opts.trees,
        zipf: num('zipf', opts.zipf, (n) => n >= 0, 'a number ≥ 0'),
        distinct: num('distinct', opts.distinct, positiveInt, 'a positive integer'),
        cache: opts.cache,
        cacheTrees: opts.cacheTrees,
        backgroundFill: opts.backgroundFill,
        cacheMb: num('cache-mb', opts.cacheMb, positive, 'a positive number') as number,
        workers: num('workers', opts.workers, positiveInt, 'a positive integer'),
        maxBatchTokens: num('max-batch-tokens', opts.maxBatchTokens, positiveInt, 'a positive integer'),
        maxQueueDelayMs: num('max-queue-delay-ms', opts.maxQueueDelayMs, (n) => n >= 0, 'a number ≥ 0'),
        maxLength: num('max-length', opts.maxLength, positiveInt, 'a positive integer'),
        threshold: num('threshold', opts.threshold, (n) => n >= 0 && n <= 1, 'a probability'),
        headroom: num('headroom', opts.headroom, (n) => n > 0 && n <= 1, 'in (0, 1]'),
        returnMarginMs: num('return-margin-ms', opts.returnMarginMs, (n) => n >= 0, 'a number ≥ 0'),
        maxQueuedPairs: num('max-queued-pairs', opts.maxQueuedPairs, positiveInt, 'a positive integer'),
        capacitySec: num('capacity', opts.capacity, (n) => n >= 0, 'a number of seconds ≥ 0') as number,
        fixedDeadline: opts.fixedDeadline,
        workerNice: num(
          'worker-nice',
          opts.workerNice,
          (n) => Number.isInteger(n) && n >= 0 && n <= 19,
          'an integer 0..19',
        ),
        seed: num('seed', opts.seed, (n) => Number.isInteger(n) && n >= 0, 'an integer ≥ 0') as number,
        log: (line) => {
          if (progress !== undefined) {
            progress.finish();
            progress = undefined;
          }
          process.stderr.write(`${line}\n`);
        },
        onLive: (label, live) => {
          if (!progressEnabled) return;
          if (progress === undefined || progressLabel !== label) {
            progress = createProgress(label, Math.round(live.totalSec));
            progressLabel = label;
          }
          progress.update(
            Math.min(Math.round(live.totalSec), Math.floor(live.elapsedSec)),
            `sent ${live.sent} done ${live.completed} in-flight ${live.inFlight}${live.measuring ? ` p99 ${live.p99Ms.toFixed(1)}ms` : ' (warm-up)'}`,
          );
        },
        onWorkloadProgress: (done, total) => {
          if (!progressEnabled) return;
          if (progress === undefined || progressLabel !== 'BM25 top-k') {
            progress = createProgress('BM25 top-k', total);
            progressLabel = 'BM25 top-k';
          }
          progress.update(done);
          if (done === total) {
            progress.finish();
            progress = undefined;
          }
        },
        onPhaseEnd: () => {
          progress?.finish();
          progress = undefined;
        },
      });
      process.stdout.write(`\n${formatTable(report.results)}`);
      if (report.capacity !== null) {
        process.stdout.write(
          `cross-encoder capacity: ${report.capacity.pairsPerSec.toFixed(0)} pairs/s (${report.capacity.method})\n`,
        );
      }
      const lag = report.results.map((r) => r.scheduleLagMs.p99);
      const gen = report.results.map((r) => r.generatorUsPerRequest);
      process.stdout.write(
        `generator: schedule lag p99 ${Math.min(...lag).toFixed(2)}–${Math.max(...lag).toFixed(2)} ms, self time ${Math.min(...gen).toFixed(1)}–${Math.max(...gen).toFixed(1)} µs/request\n`,
      );
      if (opts.json !== undefined) {
        await writeFile(opts.json, `${JSON.stringify(report, null, 2)}\n`);
        process.stdout.write(`JSON written to ${opts.json}\n`);
      }
      if (opts.plot !== undefined) {
        const title = `${report.workload.collection} k=${report.config.k as number}, budget ${report.config.budgetMs as number} ms: ${routings.map(routingLabel).join(' vs ')}`;
        const budget = report.config.budgetMs as number;
        await writeFile(opts.plot, renderLatencyPlot(report.results, budget, title));
        process.stdout.write(`plot written to ${opts.plot}\n`);
        if (report.results.some((r) => r.latencyMs.p999 > 3 * budget)) {
          const zoom = opts.plot.replace(/(\.svg)?$/i, '-zoom.svg');
          await writeFile(
            zoom,
            renderLatencyPlot(report.results, budget, `${title} (zoom, capped at ${3 * budget} ms)`, 3 * budget),
          );
          process.stdout.write(`zoomed plot written to ${zoom}\n`);
        }
      }
    });
}
