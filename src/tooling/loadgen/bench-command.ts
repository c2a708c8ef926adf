/**
 * The work behind `relevance-gate bench` (the CLI file only declares the options): parse them, run
 * the open-loop load in process (`bench-runner.ts`) or over HTTP (`http-bench.ts`), optionally
 * against a `serve` child process and the bare HTTP floor, then print the table and write the
 * JSON report and the SVG plot. See docs/bench.md.
 */
import { InvalidArgumentError } from '../../errors.js';
import { resolveCrossEncoderDir } from '../../tiers/cross-encoder/shipped-model.js';
import { isPositive, isPositiveInt, optionalNumberOption } from '../../util/number-option.js';
import type { RoutingSpec } from './bench-runner.js';
import type { BenchPoint } from './report.js';

/** The options as the command line gives them (strings, before parsing). */
export interface BenchCommandOptions {
  collection: string;
  k: string;
  qps: string;
  duration: string;
  budgetMs: string;
  routing: string;
  fixedTier: string;
  crossEncoder: string;
  fastPath: string;
  zipf?: string;
  distinct?: string;
  warmup: string;
  json?: string;
  plot?: string;
  cache: boolean;
  cacheMb: string;
  cacheFastPath: boolean;
  backgroundFill: boolean;
  workers?: string;
  maxBatchTokens?: string;
  maxQueueDelayMs?: string;
  maxLength?: string;
  threshold?: string;
  headroom?: string;
  returnMarginMs?: string;
  heapHeadroomMb?: string;
  maxQueuedPairs?: string;
  capacity: string;
  fixedDeadline: boolean;
  loopWatch: boolean;
  seed: string;
  workerNice?: string;
  progress: boolean;
  url?: string;
  protocol: string;
  model?: string;
  apiKey?: string;
  /** Commander's `--no-request-start`: false when given. */
  requestStart: boolean;
  httpCompare: boolean;
}

const num = optionalNumberOption;
const positive = isPositive;
const positiveInt = isPositiveInt;

/**
 * Runs `relevance-gate serve --config <file> --port 0` in a child process (the CLI as a user runs
 * it) and resolves with its URL once it prints that it is serving.
 */
async function startServeProcess(config: Record<string, unknown>): Promise<{ url: string; stop(): Promise<void> }> {
  const [{ fork }, { writeFile }, { tmpdir }, { dirname, join, extname }, { fileURLToPath }] = await Promise.all([
    import('node:child_process'),
    import('node:fs/promises'),
    import('node:os'),
    import('node:path'),
    import('node:url'),
  ]);
  const here = fileURLToPath(import.meta.url);
  const main = join(dirname(here), '..', 'cli', `main${extname(here)}`);
  const file = join(tmpdir(), `relevance-gate-bench-server-${process.pid}.json`);
  // Model paths stay relative to where the bench runs, not to the temporary file.
  await writeFile(
    file,
    JSON.stringify({ ...config, host: '127.0.0.1', port: 0, logLevel: 'warn', baseDir: process.cwd() }),
  );
  const { childExecArgv, stopChild } = await import('./http-bench.js');
  const child = fork(main, ['serve', '--config', file], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    execArgv: childExecArgv(main),
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /serving on (http:\/\/\S+)/.exec(out);
      if (m !== null) resolve(m[1]);
    });
    child.once('exit', (code) =>
      reject(new Error(`relevance-gate serve exited with code ${String(code)} before serving`)),
    );
  });
  return { url, stop: () => stopChild(child) };
}

function optionalNumbers(values: Record<string, number | undefined>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(values)) if (value !== undefined) out[key] = value;
  return out;
}

type ReportModule = typeof import('./report.js');

/** Table, JSON and plot of an HTTP-only run (`--url`). */
async function writeHttpOutputs(
  opts: BenchCommandOptions,
  results: import('./report.js').BenchPoint[],
  collectionName: string,
  httpOptions: {
    readonly k: number;
    readonly budgetMs: number;
    readonly durationSec: number;
    readonly warmupSec: number;
  },
  formatTable: ReportModule['formatTable'],
  renderLatencyPlot: ReportModule['renderLatencyPlot'],
  writeFile: (path: string, data: string) => Promise<void>,
): Promise<void> {
  process.stdout.write(`\n${formatTable(results)}`);
  for (const r of results) if (r.lateAnswers.length > 0) process.stdout.write(`${lateAnswersLine(r)}\n`);
  if (opts.json !== undefined) {
    const os = await import('node:os');
    const report = {
      createdAt: new Date().toISOString(),
      machine: { cpus: os.availableParallelism(), loadavg: os.loadavg(), node: process.version },
      config: { url: opts.url, protocol: opts.protocol, model: opts.model ?? null, ...httpOptions, log: undefined },
      workload: { collection: collectionName },
      results,
    };
    await writeFile(opts.json, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`JSON written to ${opts.json}\n`);
  }
  if (opts.plot !== undefined) {
    const title = `${collectionName} k=${httpOptions.k}, budget ${httpOptions.budgetMs} ms, over HTTP (${opts.url})`;
    await writeFile(opts.plot, renderLatencyPlot(results, httpOptions.budgetMs, title));
    process.stdout.write(`plot written to ${opts.plot}\n`);
  }
}

/** Runs `relevance-gate bench` with the command line's options. */
export async function runBenchCommand(opts: BenchCommandOptions): Promise<void> {
  const { keepHeapHeadroom, DEFAULT_HEAP_HEADROOM_MB } = await import('../../util/heap-headroom.js');
  // The generator is a deadline-bound process too: a major collection in it sends requests late.
  const headroomMb =
    num('heap-headroom-mb', opts.heapHeadroomMb, (n) => n >= 0, 'a number of MiB ≥ 0') ?? DEFAULT_HEAP_HEADROOM_MB;
  const release = keepHeapHeadroom(headroomMb);
  try {
    await runBenchHeld(opts);
  } finally {
    release();
  }
}

async function runBenchHeld(opts: BenchCommandOptions): Promise<void> {
  const [{ runBench, routingLabel }, { formatTable, renderLatencyPlot }, { createProgress }, { writeFile }] =
    await Promise.all([
      import('./bench-runner.js'),
      import('./report.js'),
      import('../../util/progress.js'),
      import('node:fs/promises'),
    ]);
  const qps = opts.qps.split(',').map((s) => {
    const t = s.trim();
    if (/^\d+(\.\d+)?x$/i.test(t)) return { kind: 'capacity' as const, factor: Number(t.slice(0, -1)) };
    return { kind: 'absolute' as const, qps: num('qps', t, positive, 'positive numbers or Nx') as number };
  });
  const crossEncoderDir = resolveCrossEncoderDir(opts.crossEncoder);
  const fixedTier = opts.fixedTier;
  if (fixedTier !== 'cross-encoder' && fixedTier !== 'fast-path')
    throw new InvalidArgumentError(`--fixed-tier must be cross-encoder or fast-path, got "${fixedTier}"`);
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
  const protocol = opts.protocol;
  if (protocol !== 'gate' && protocol !== 'cohere' && protocol !== 'tei')
    throw new InvalidArgumentError(`--protocol must be gate, cohere or tei, got "${protocol}"`);
  if (opts.url !== undefined && opts.httpCompare)
    throw new InvalidArgumentError('--url drives an external server; --http-compare starts its own: pick one');
  const log = (line: string): void => {
    if (progress !== undefined) {
      progress.finish();
      progress = undefined;
    }
    process.stderr.write(`${line}\n`);
  };
  const onLive = (label: string, live: import('./open-loop.js').LiveFigures): void => {
    if (!progressEnabled) return;
    if (progress === undefined || progressLabel !== label) {
      progress = createProgress(label, Math.round(live.totalSec));
      progressLabel = label;
    }
    progress.update(
      Math.min(Math.round(live.totalSec), Math.floor(live.elapsedSec)),
      `sent ${live.sent} done ${live.completed} in-flight ${live.inFlight}${live.measuring ? ` p99 ${live.p99Ms.toFixed(1)}ms` : ' (warm-up)'}`,
    );
  };
  const httpOptions = {
    collection: opts.collection,
    k: num('k', opts.k, positiveInt, 'a positive integer') as number,
    qps: qps.map((q) => {
      if (q.kind === 'capacity') throw new InvalidArgumentError('over HTTP give absolute --qps values (no Nx)');
      return q.qps;
    }),
    durationSec,
    warmupSec: num('warmup', opts.warmup, (n) => n >= 0, 'a number of seconds ≥ 0') as number,
    budgetMs: num('budget-ms', opts.budgetMs, positive, 'a positive number of ms') as number,
    zipf: num('zipf', opts.zipf, (n) => n >= 0, 'a number ≥ 0'),
    distinct: num('distinct', opts.distinct, positiveInt, 'a positive integer'),
    seed: num('seed', opts.seed, (n) => Number.isInteger(n) && n >= 0, 'an integer ≥ 0') as number,
    log,
    onLive,
    onPhaseEnd: () => {
      progress?.finish();
      progress = undefined;
    },
  };
  if (opts.url !== undefined) {
    // The key from the environment keeps it out of `ps`; on the command line it works, with a warning.
    if (opts.apiKey !== undefined)
      process.stderr.write(
        'bench: --api-key is visible to every user of this machine (ps); prefer RELEVANCE_GATE_API_KEY\n',
      );
    const apiKey = opts.apiKey ?? (process.env.RELEVANCE_GATE_API_KEY || undefined);
    const { loadHttpWorkload, runHttpPoints } = await import('./http-bench.js');
    const { workload, collectionName } = loadHttpWorkload(httpOptions);
    const results = await runHttpPoints(httpOptions, workload, [
      {
        label: `http:${protocol}${opts.model === undefined ? '' : `:${opts.model}`}`,
        url: opts.url,
        protocol,
        ...(opts.model === undefined ? {} : { model: opts.model }),
        ...(apiKey === undefined ? {} : { apiKey }),
        scrapeMetrics: true,
        requestStart: opts.requestStart,
      },
    ]);
    await writeHttpOutputs(opts, results, collectionName, httpOptions, formatTable, renderLatencyPlot, writeFile);
    return;
  }
  const report = await runBench({
    collection: opts.collection,
    k: num('k', opts.k, positiveInt, 'a positive integer') as number,
    qps,
    durationSec,
    warmupSec: num('warmup', opts.warmup, (n) => n >= 0, 'a number of seconds ≥ 0') as number,
    budgetMs: num('budget-ms', opts.budgetMs, positive, 'a positive number of ms') as number,
    routings,
    crossEncoderDir,
    fastPathDir: opts.fastPath,
    zipf: num('zipf', opts.zipf, (n) => n >= 0, 'a number ≥ 0'),
    distinct: num('distinct', opts.distinct, positiveInt, 'a positive integer'),
    cache: opts.cache,
    cacheFastPath: opts.cacheFastPath,
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
    watchEventLoop: opts.loopWatch,
    workerNice: num(
      'worker-nice',
      opts.workerNice,
      (n) => Number.isInteger(n) && n >= 0 && n <= 19,
      'an integer 0..19',
    ),
    seed: num('seed', opts.seed, (n) => Number.isInteger(n) && n >= 0, 'an integer ≥ 0') as number,
    log,
    onLive,
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
  if (opts.httpCompare) {
    const { loadHttpWorkload, runHttpPoints, startFloorServer } = await import('./http-bench.js');
    const { buildCorpusStats, saveCorpusStats } = await import('../../features/corpus-stats.js');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { workload } = loadHttpWorkload(httpOptions);
    // The server reads the collection's statistics, as the in-process run does.
    const statsPath = join(tmpdir(), `relevance-gate-bench-stats-${process.pid}.msgpack`);
    await saveCorpusStats(await buildCorpusStats(join(opts.collection, 'docs.jsonl')), statsPath);
    const config = report.config as { threshold: number };
    for (const routing of routings) {
      const name = routing.mode;
      const server = await startServeProcess({
        budgetMs: httpOptions.budgetMs,
        cache: {
          enabled: opts.cache,
          l1Mb: num('cache-mb', opts.cacheMb, positive, 'a positive number') as number,
        },
        models: {
          'fast-path': { type: 'fast-path', dir: opts.fastPath, stats: statsPath },
          'cross-encoder': {
            type: 'cross-encoder',
            dir: crossEncoderDir,
            ...optionalNumbers({
              workers: num('workers', opts.workers, positiveInt, 'a positive integer'),
              maxBatchTokens: num('max-batch-tokens', opts.maxBatchTokens, positiveInt, 'a positive integer'),
              maxQueueDelayMs: num('max-queue-delay-ms', opts.maxQueueDelayMs, (n) => n >= 0, 'a number ≥ 0'),
              maxLength: num('max-length', opts.maxLength, positiveInt, 'a positive integer'),
              workerNice: num(
                'worker-nice',
                opts.workerNice,
                (n) => Number.isInteger(n) && n >= 0 && n <= 19,
                'an integer 0..19',
              ),
            }),
          },
          [name]: {
            type: 'router',
            tiers: ['fast-path', 'cross-encoder'],
            routing: routing.mode,
            ...(routing.mode === 'fixed' ? { fixedTier: routing.tier } : {}),
            threshold: config.threshold,
            backgroundFill: opts.backgroundFill,
            ...optionalNumbers({
              headroom: num('headroom', opts.headroom, (n) => n > 0 && n <= 1, 'in (0, 1]'),
              returnMarginMs: num('return-margin-ms', opts.returnMarginMs, (n) => n >= 0, 'a number ≥ 0'),
              maxQueuedPairs: num('max-queued-pairs', opts.maxQueuedPairs, positiveInt, 'a positive integer'),
            }),
          },
        },
      });
      log(`server under test: ${server.url} (child process), model ${name}`);
      try {
        report.results.push(
          ...(await runHttpPoints(httpOptions, workload, [
            {
              label: `http:${routingLabel(routing)}`,
              url: server.url,
              protocol: 'gate',
              model: name,
              scrapeMetrics: true,
            },
          ])),
        );
      } finally {
        await server.stop();
      }
    }
    const floor = await startFloorServer();
    log(`HTTP floor: ${floor.url} (child process, bare Fastify route answering a constant)`);
    try {
      report.results.push(
        ...(await runHttpPoints(httpOptions, workload, [{ label: 'http-floor', url: floor.url, protocol: 'gate' }])),
      );
    } finally {
      await floor.stop();
    }
    for (const routing of routings) {
      const label = routingLabel(routing);
      for (const q of httpOptions.qps) {
        const local = report.results.find((r) => r.routing === label && r.offeredQps === q);
        const http = report.results.find((r) => r.routing === `http:${label}` && r.offeredQps === q);
        const base = report.results.find((r) => r.routing === 'http-floor' && r.offeredQps === q);
        if (local === undefined || http === undefined) continue;
        process.stderr.write(
          `HTTP overhead ${label} @ ${q} rps: p50 +${(http.latencyMs.p50 - local.latencyMs.p50).toFixed(2)} ms, p99 +${(http.latencyMs.p99 - local.latencyMs.p99).toFixed(2)} ms, p99.9 +${(http.latencyMs.p999 - local.latencyMs.p999).toFixed(2)} ms over in-process` +
            `${base === undefined ? '' : `; floor p50 ${base.latencyMs.p50} p99 ${base.latencyMs.p99} p99.9 ${base.latencyMs.p999} ms`}\n`,
        );
      }
    }
  }
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
  for (const r of report.results) {
    if (r.hostStealMs === null) continue;
    const lateSeconds = r.timeline.filter((s) => s.late > 0);
    process.stdout.write(
      `host steal (${r.routing} @ ${r.offeredQps} rps): ${r.hostStealMs.total.toFixed(0)} ms over the window, at most ${r.hostStealMs.maxPerSecond.toFixed(0)} ms in one second` +
        (lateSeconds.length === 0
          ? '\n'
          : `; seconds with late answers: ${lateSeconds.map((s) => `${s.second} (${s.late} late${s.lateServerOnTime > 0 ? `, ${s.lateServerOnTime} on time by the server` : ''}, steal ${s.hostStealMs ?? 0} ms, send lag max ${s.maxSendLagMs.toFixed(0)} ms)`).join(', ')}\n`),
    );
  }
  for (const r of report.results) if (r.lateAnswers.length > 0) process.stdout.write(`${lateAnswersLine(r)}\n`);
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
}

/**
 * What the late answers of a point were: over budget + bound by the target's own clock (a stall of
 * the target) or within it (lateness after its answer: network, client, host), and the degrade
 * labels of their pairs (`deadline`: pairs the answer waited for until its deadline).
 */
export function lateAnswersLine(point: BenchPoint): string {
  const answers = point.lateAnswers;
  const byServer = { late: 0, onTime: 0 };
  const degraded: Record<string, number> = {};
  let withDegraded = 0;
  const statuses: Record<string, number> = {};
  for (const a of answers) {
    if (a.status !== undefined) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    if (a.serverOnTime === true) byServer.onTime++;
    else if (a.serverOnTime === false) byServer.late++;
    if (a.degraded === undefined) continue;
    withDegraded++;
    for (const [label, n] of Object.entries(a.degraded)) degraded[label] = (degraded[label] ?? 0) + n;
  }
  const labels = Object.entries(degraded)
    .map(([label, n]) => `${label} ${n}`)
    .join(', ');
  const writes = answers.flatMap((a) => (a.writeMs === undefined ? [] : [a.writeMs]));
  // Messages with their numbers blanked, so refusals by one check count as one kind.
  const reasons = new Map<string, number>();
  for (const a of answers) {
    if (a.message === undefined) continue;
    const kind = a.message.replace(/\d+(\.\d+)?/g, 'N').slice(0, 100);
    reasons.set(kind, (reasons.get(kind) ?? 0) + 1);
  }
  return (
    `late answers (${point.routing}, the first ${answers.length} of ${point.lateBeyondBound}): ` +
    Object.entries(statuses)
      .map(([status, n]) => `HTTP ${status} × ${n}; `)
      .join('') +
    `${byServer.late} late and ${byServer.onTime} on time by the target's own time; ` +
    `${withDegraded} with degraded pairs${labels === '' ? '' : ` (${labels})`}; ` +
    `send lag max ${Math.max(...answers.map((a) => a.sendLagMs)).toFixed(0)} ms` +
    (writes.length === 0 ? '' : `, write lag max ${Math.max(...writes).toFixed(0)} ms`) +
    (reasons.size === 0 ? '' : `; refused or failed: ${[...reasons].map(([text, n]) => `${n} × "${text}"`).join(', ')}`)
  );
}
