/**
 * `relevance-gate bench --url` / `--http-compare`: the same open-loop load (workload, Poisson
 * schedule, latency from the scheduled send time, HDR histograms) driven over HTTP from this
 * process against a server in another process. With `--http-compare` the bench also starts, in
 * child processes, the relevance-gate server configured like the in-process run, and a bare
 * Fastify route answering a constant (the HTTP floor), so one report holds in-process, HTTP and
 * floor side by side (the CLI starts the server; this module, tooling, never imports it).
 * Degraded / shed / batch figures come from the server's /metrics.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCollection } from '../eval/collection.js';
import { createHttpTarget, type HttpProtocol } from './http-target.js';
import { runOpenLoopPhase, type PhaseResult } from './open-loop.js';
import {
  type BenchPoint,
  type BenchProgress,
  formatPointHead,
  formatRequestOutcomes,
  phaseGeneratorFields,
  phaseLoadFields,
  share,
} from './report.js';
import { buildBenchWorkload, type Workload } from './workload.js';

export interface HttpBenchTarget {
  /** Row label in the table, e.g. 'http:cascade' or 'http-floor'. */
  readonly label: string;
  readonly url: string;
  readonly protocol: HttpProtocol;
  readonly model?: string;
  readonly apiKey?: string;
  /** Read degraded / batch / CPU counters from `${url}/metrics` before the warm-up and after the window. */
  readonly scrapeMetrics?: boolean;
  /** Send each request's send time in `x-request-start` (default true). */
  readonly requestStart?: boolean;
}

export interface HttpBenchOptions extends BenchProgress {
  readonly collection: string;
  readonly k: number;
  readonly qps: readonly number[];
  readonly durationSec: number;
  readonly warmupSec: number;
  readonly budgetMs: number;
  readonly zipf?: number;
  readonly distinct?: number;
  readonly seed: number;
}

export interface HttpWorkloadInfo {
  readonly workload: Workload;
  readonly collectionName: string;
}

export function loadHttpWorkload(options: HttpBenchOptions): HttpWorkloadInfo {
  const collection = loadCollection(options.collection);
  const workload = buildBenchWorkload(collection, options);
  return { workload, collectionName: collection.name };
}

/** Sums of the server counters the table reports (by metric name and one label, e.g. reason). */
type Counters = Map<string, number>;

async function scrape(url: string, apiKey: string | undefined): Promise<Counters | undefined> {
  try {
    const res = await fetch(
      `${url}/metrics`,
      apiKey === undefined ? {} : { headers: { authorization: `Bearer ${apiKey}` } },
    );
    if (!res.ok) return undefined;
    const out: Counters = new Map();
    for (const line of (await res.text()).split('\n')) {
      if (line.startsWith('#') || line.length === 0) continue;
      const m = /^(relevance_gate_[a-z_]+)(\{[^}]*\})? ([0-9.eE+-]+|NaN)$/.exec(line);
      if (m === null) continue;
      const [, name, labels = '', value] = m;
      const reason = /reason="([^"]+)"/.exec(labels)?.[1];
      const tier = /tier="([^"]+)"/.exec(labels)?.[1];
      const key = reason !== undefined ? `${name}:${reason}` : tier !== undefined ? `${name}@${tier}` : name;
      out.set(key, (out.get(key) ?? 0) + Number(value));
      out.set(`${name}:*`, (out.get(`${name}:*`) ?? 0) + Number(value));
    }
    return out;
  } catch {
    return undefined;
  }
}

function delta(after: Counters | undefined, before: Counters | undefined, key: string): number {
  if (after === undefined || before === undefined) return 0;
  return (after.get(key) ?? 0) - (before.get(key) ?? 0);
}

/** One open-loop point per (target, QPS) over HTTP. */
export async function runHttpPoints(
  options: HttpBenchOptions,
  workload: Workload,
  targets: readonly HttpBenchTarget[],
): Promise<BenchPoint[]> {
  const points: BenchPoint[] = [];
  for (const target of targets) {
    for (const qps of options.qps) {
      const label = `${target.label} @ ${qps.toFixed(1)} rps`;
      const client = createHttpTarget({
        url: target.url,
        protocol: target.protocol,
        ...(target.model === undefined ? {} : { model: target.model }),
        ...(target.apiKey === undefined ? {} : { apiKey: target.apiKey }),
        ...(target.requestStart === undefined ? {} : { requestStart: target.requestStart }),
      });
      // Snapshot before the warm-up: a scrape at the start of the measured window would be
      // answered late by a server with a backlog, and undercount. Server counters therefore cover
      // warm-up + measured window; CPU is divided by the requests the server counted over it.
      const b = target.scrapeMetrics === true ? await scrape(target.url, target.apiKey) : undefined;
      workload.restart(options.seed);
      let phase: PhaseResult;
      try {
        phase = await runOpenLoopPhase({
          gate: client,
          workload,
          qps,
          durationSec: options.durationSec,
          warmupSec: options.warmupSec,
          budgetMs: options.budgetMs,
          seed: options.seed + 1,
          onTick: (live) => options.onLive?.(label, live),
        });
      } finally {
        client.close();
      }
      options.onPhaseEnd?.(label);
      const after = target.scrapeMetrics === true ? await scrape(target.url, target.apiKey) : undefined;
      const total = phase.pairs;
      const byTier = phase.pairsByTier;
      const batches = delta(after, b, 'relevance_gate_batches_total:*');
      const batchPairs = delta(after, b, 'relevance_gate_batch_pairs_total:*');
      const point: BenchPoint = {
        routing: target.label,
        ...phaseLoadFields(phase, qps),
        // Over HTTP the source tier of cache hits is not reported: fresh cross-encoder pairs only.
        modelShare: {
          'cross-encoder': share(byTier['cross-encoder'], total),
          'fast-path': share(byTier['fast-path'], total),
        },
        degradedPairs: delta(after, b, 'relevance_gate_degraded_pairs_total:*'),
        shedPairs: delta(after, b, 'relevance_gate_degraded_pairs_total:shed'),
        deadlinePairs: delta(after, b, 'relevance_gate_degraded_pairs_total:deadline'),
        errorPairs: delta(after, b, 'relevance_gate_degraded_pairs_total:error'),
        cancelledPairs: delta(after, b, 'relevance_gate_batch_dropped_pairs_total:*'),
        lateCalls: 0,
        backgroundPairs: 0,
        ...phaseGeneratorFields(phase),
        cache: null,
        'cross-encoder': {
          pairsRun: batchPairs,
          pairsDropped: delta(after, b, 'relevance_gate_batch_dropped_pairs_total:*'),
          meanBatchSize: batches === 0 ? 0 : batchPairs / batches,
          pairsPerSec: batchPairs / phase.wallSec,
        },
        routerTiers: [],
        timeline: phase.timeline,
        lateAnswers: phase.lateAnswers,
        firstErrors: phase.firstErrors,
        ...(after === undefined || b === undefined
          ? {}
          : {
              serverCpuMsPerRequest:
                (1000 *
                  (delta(after, b, 'relevance_gate_process_cpu_user_seconds_total') +
                    delta(after, b, 'relevance_gate_process_cpu_system_seconds_total'))) /
                Math.max(1, delta(after, b, 'relevance_gate_http_request_duration_seconds_count')),
            }),
      };
      points.push(point);
      // Measured requests only (warm-up excluded), so refusals and errors are disjoint and add up.
      options.log(
        formatPointHead(label, point) +
          `${formatRequestOutcomes(phase)}, degraded ${point.degradedPairs}` +
          `${point.serverCpuMsPerRequest === undefined ? '' : `, server CPU ${point.serverCpuMsPerRequest.toFixed(3)} ms/request`}`,
      );
      if (phase.firstErrors.length > 0) options.log(`  first errors: ${phase.firstErrors.join(' | ')}`);
    }
  }
  return points;
}

export interface ChildServer {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Node flags of a forked child: this process's own (so a run under tsx starts the child under tsx
 * too), plus the tsx loader when the child is TypeScript and this process got it otherwise (vitest).
 */
export function childExecArgv(entry: string): string[] {
  const own = process.execArgv;
  return entry.endsWith('.ts') && !own.some((a) => a.includes('tsx')) ? [...own, '--import', 'tsx'] : own;
}

/** Sends SIGTERM to a forked child and resolves once it has exited (at once when it already has). */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Starts the HTTP floor (http-floor.ts) in a child process. */
export async function startFloorServer(): Promise<ChildServer> {
  const here = fileURLToPath(import.meta.url);
  const entry = join(here, '..', `http-floor${here.endsWith('.ts') ? '.ts' : '.js'}`);
  const child: ChildProcess = fork(entry, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: childExecArgv(entry),
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { type?: string; url?: string; error?: string }) => {
      if (m.type === 'listening' && typeof m.url === 'string') resolve(m.url);
      else reject(new Error(`HTTP floor failed to start: ${m.error ?? 'unknown error'}`));
    });
    child.once('exit', (code) => reject(new Error(`HTTP floor exited with code ${String(code)} before listening`)));
  });
  return { url, stop: () => stopChild(child) };
}
