/**
 * A replica lost and restarted under steady load: the long form of the replica-kill check of
 * test/server/replicas-nginx.test.ts. One redis-server, two `relevance-gate serve` replicas sharing
 * it (the cascade router over models/generated/tinybert-l2, or the fast path alone with
 * --fast-path-only) and Debian's nginx in front, configured by deploy/nginx.conf, all on loopback
 * (the helpers of test/server/replicas.ts and test/cache/redis-server.ts).
 *
 *   npx tsx bench/replicas-failover.ts [--seconds 180] [--kill-at 60] [--restart-at 120 (0 = never)]
 *       [--qps 200] [--budget-ms 100] [--fast-path-only] [--collection DIR] [--seed 1] [--json out.json]
 *
 * The load is the `relevance-gate bench` generator (open loop, Poisson arrivals at --qps, latency
 * from the scheduled send) over the seed scenario's workload (SciFact BM25 top-20, Zipf 1.0 over
 * 5,000 distinct queries) as Cohere `POST /v1/rerank` through nginx with `x-budget-ms`. At
 * --kill-at seconds one replica gets SIGKILL; at --restart-at it is started again on the same port
 * and nginx takes it back (after its fail_timeout). Per phase (by scheduled send time) and in
 * total: requests, answers by status, requests lost (no answer: transport error or never finished),
 * requests nginx resent (`X-Upstream-Addr` lists two replicas), p50 / p99 / max of the 200s.
 * Exit code 1 when any request is lost or answered 5xx. The replicas run with the server's defaults
 * (predictive admission: a 429 is an answer, counted apart) and `redisTimeoutMs` 50, as
 * scripts/replicas.sh runs them.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCollection } from '../src/tooling/eval/collection.js';
import { createHttpTarget } from '../src/tooling/loadgen/http-target.js';
import { type LoadTarget, runOpenLoopPhase } from '../src/tooling/loadgen/open-loop.js';
import { formatRequestOutcomes } from '../src/tooling/loadgen/report.js';
import { buildBenchWorkload } from '../src/tooling/loadgen/workload.js';
import { freePort, RedisServer } from '../test/cache/redis-server.js';
import { type Nginx, startNginx } from '../test/server/replicas.js';
import { type ServeChild, startServeChild } from './serve-child.js';

const root = resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '180' },
    'kill-at': { type: 'string', default: '60' },
    'restart-at': { type: 'string', default: '120' },
    qps: { type: 'string', default: '200' },
    'budget-ms': { type: 'string', default: '100' },
    'fast-path-only': { type: 'boolean', default: false },
    collection: { type: 'string', default: join(root, '..', 'shared', 'data', 'scifact') },
    'cross-encoder': { type: 'string', default: join(root, 'models', 'generated', 'tinybert-l2') },
    seed: { type: 'string', default: '1' },
    json: { type: 'string' },
  },
});
const seconds = Number(args.seconds);
const killAt = Number(args['kill-at']);
const restartAt = Number(args['restart-at']);
const qps = Number(args.qps);
const budgetMs = Number(args['budget-ms']);
const fastPathOnly = args['fast-path-only'] === true;
if (!(seconds > 0 && killAt > 0 && killAt < seconds)) throw new Error('need 0 < --kill-at < --seconds');
if (restartAt !== 0 && !(restartAt > killAt && restartAt < seconds))
  throw new Error('need --kill-at < --restart-at < --seconds, or --restart-at 0');
if (!(qps > 0 && budgetMs > 0)) throw new Error('--qps and --budget-ms must be positive');

/** What became of one request of the stream. */
interface Outcome {
  /** The deadline the generator gave it (Date.now() clock: scheduled send + budget). */
  readonly deadline: number;
  /** When the target was called and when the answer came (performance.now() clock). */
  readonly sentAt: number;
  doneAt?: number;
  /** Scheduled send, ms from the stream's start, and the latency from it (placeOnSchedule). */
  scheduledMs: number;
  latencyMs?: number;
  /** HTTP status; 0: no answer (transport error); undefined: not finished. */
  status?: number;
  /** nginx's `X-Upstream-Addr`: the replica(s) it tried, in order. */
  upstreams: string[];
  /** nginx's `X-Upstream-Status` (e.g. "502, 200" after a resend). */
  upstreamStatus: string;
}

/**
 * The generator schedules on performance.now()'s clock and hands each request the deadline
 * scheduled send + budget on Date.now()'s. No request is sent before its scheduled time, so the
 * offset between the clocks is at least deadline − budget − sentAt for every request, and is the
 * largest of these but for the stream's smallest send lag (under a microsecond with thousands of
 * requests on millisecond timers): latencies taken so are short by at most that lag.
 */
function placeOnSchedule(outcomes: readonly Outcome[], origin: number): void {
  let offset = Number.NEGATIVE_INFINITY;
  for (const o of outcomes) offset = Math.max(offset, o.deadline - budgetMs - o.sentAt);
  for (const o of outcomes) {
    const scheduled = o.deadline - budgetMs - offset;
    o.scheduledMs = scheduled - origin;
    if (o.doneAt !== undefined) o.latencyMs = o.doneAt - scheduled;
  }
}

/**
 * The generator's HTTP target does not return headers: each request it makes is tied to its
 * outcome record through the async context of the `filter` call, and its response headers are read
 * from Node's `http.client.request.start` diagnostics channel (published synchronously as the
 * request is created, inside that context).
 */
const requestOutcome = new AsyncLocalStorage<Outcome>();
subscribe('http.client.request.start', (message) => {
  const outcome = requestOutcome.getStore();
  if (outcome === undefined) return;
  (message as { request: ClientRequest }).request.once('response', (res: IncomingMessage) => {
    const addr = res.headers['x-upstream-addr'];
    outcome.upstreams = (typeof addr === 'string' ? addr : '').split(', ').filter((s) => s.length > 0);
    const status = res.headers['x-upstream-status'];
    outcome.upstreamStatus = typeof status === 'string' ? status : '';
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `serve` on a given loopback port (the same one after a restart: nginx's upstream list is fixed), once ready. */
function launchReplica(port: number, config: string): Promise<ServeChild> {
  const model = fastPathOnly ? [] : ['--cross-encoder', args['cross-encoder'] as string];
  return startServeChild(['--port', String(port), '--config', config, ...model]);
}

/** The q-quantile of ascending values (nearest rank), 0 when empty. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

interface PhaseFigures {
  readonly phase: string;
  readonly fromSec: number;
  readonly toSec: number;
  readonly requests: number;
  readonly ok: number;
  readonly refused: number;
  readonly serverErrors: number;
  readonly otherStatus: number;
  readonly lost: number;
  readonly retried: number;
  /** Of the 200s. */
  readonly latencyMs: Latency;
  /** Of every answer, whatever its status (comparable with the generator's own figures). */
  readonly answeredLatencyMs: Latency;
}

interface Latency {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

const round = (x: number): number => Math.round(x * 100) / 100;

function latencyOf(outcomes: readonly Outcome[]): Latency {
  const sorted = outcomes.map((o) => o.latencyMs as number).sort((a, b) => a - b);
  return { p50: round(quantile(sorted, 0.5)), p99: round(quantile(sorted, 0.99)), max: round(sorted.at(-1) ?? 0) };
}

function figures(phase: string, fromMs: number, toMs: number, outcomes: readonly Outcome[]): PhaseFigures {
  const within = outcomes.filter((o) => o.scheduledMs >= fromMs && o.scheduledMs < toMs);
  const ok = within.filter((o) => o.status === 200);
  return {
    phase,
    fromSec: round(fromMs / 1000),
    toSec: round(Math.min(toMs, seconds * 1000) / 1000),
    requests: within.length,
    ok: ok.length,
    refused: within.filter((o) => o.status === 429).length,
    serverErrors: within.filter((o) => (o.status ?? 0) >= 500).length,
    otherStatus: within.filter(
      (o) => o.status !== undefined && o.status !== 0 && o.status !== 200 && o.status !== 429 && o.status < 500,
    ).length,
    lost: within.filter((o) => o.status === undefined || o.status === 0).length,
    retried: within.filter((o) => o.upstreams.length > 1).length,
    latencyMs: latencyOf(ok),
    answeredLatencyMs: latencyOf(within.filter((o) => (o.status ?? 0) > 0)),
  };
}

function formatPhases(rows: readonly PhaseFigures[]): string {
  const header = [
    'phase',
    'from–to s',
    'requests',
    '200',
    '429',
    '5xx',
    'other',
    'lost',
    'resent',
    'p50',
    'p99',
    'max',
  ];
  const cells = rows.map((r) => [
    r.phase,
    `${r.fromSec.toFixed(1)}–${r.toSec.toFixed(1)}`,
    ...[r.requests, r.ok, r.refused, r.serverErrors, r.otherStatus, r.lost, r.retried].map(String),
    ...[r.latencyMs.p50, r.latencyMs.p99, r.latencyMs.max].map((x) => x.toFixed(1)),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]): string =>
    c.map((s, i) => (i === 0 ? s.padEnd(widths[i]) : s.padStart(widths[i]))).join('  ');
  return `${[line(header), ...cells.map(line)].join('\n')}\n(latencies of the 200s in ms from the scheduled send; lost = no answer; resent = nginx tried two replicas)\n`;
}

async function main(): Promise<void> {
  const collection = loadCollection(args.collection as string);
  const workload = buildBenchWorkload(collection, { k: 20, distinct: 5000, zipf: 1.0, seed: Number(args.seed) });
  const work = mkdtempSync(join(tmpdir(), 'rg-failover-'));
  const redis = new RedisServer(await freePort());
  const replicas: ServeChild[] = [];
  let nginx: Nginx | undefined;
  const cleanup = async (): Promise<void> => {
    await nginx?.stop();
    await Promise.all(replicas.map((replica) => replica.stop()));
    await redis.kill();
    rmSync(work, { recursive: true, force: true });
  };
  const interrupted = (): void => {
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    await redis.start();
    const config = join(work, 'serve.json');
    writeFileSync(config, JSON.stringify({ cache: { redisUrl: redis.url, redisTimeoutMs: 50 } }));
    const ports = [await freePort(), await freePort()];
    replicas.push(...(await Promise.all(ports.map((port) => launchReplica(port, config)))));
    const addrs = ports.map((port) => `127.0.0.1:${port}`);
    nginx = await startNginx(addrs[0], addrs[1]);
    const mode = fastPathOnly ? 'fast path alone' : 'cascade (fast path → tinybert-l2 cross-encoder)';
    console.log(
      `redis ${redis.url}, replicas ${addrs.join(', ')} (${mode}), nginx ${nginx.url}; ${qps} req/s for ${seconds} s, ` +
        `${collection.name} k=20 Zipf 1.0 over 5000 queries, x-budget-ms ${budgetMs}; SIGKILL ${addrs[0]} at ${killAt} s` +
        (restartAt === 0 ? ', no restart' : `, restart at ${restartAt} s`),
    );

    const http = createHttpTarget({
      url: nginx.url,
      protocol: 'cohere',
      ...(fastPathOnly ? {} : { model: 'cascade' }),
    });
    const outcomes: Outcome[] = [];
    const before = performance.now();
    const target: LoadTarget = {
      filter(query, passages, options) {
        const outcome: Outcome = {
          deadline: options?.deadline as number,
          sentAt: performance.now(),
          scheduledMs: 0,
          upstreams: [],
          upstreamStatus: '',
        };
        outcomes.push(outcome);
        const done = (status: number): void => {
          outcome.doneAt = performance.now();
          outcome.status = status;
        };
        return requestOutcome
          .run(outcome, () => http.filter(query, passages, options))
          .then(
            (result) => {
              done(result.status ?? 200);
              return result;
            },
            (error: unknown) => {
              const status = (error as { status?: unknown }).status;
              done(typeof status === 'number' ? status : 0);
              throw error;
            },
          );
      },
    };
    const stream = runOpenLoopPhase({
      gate: target,
      workload,
      qps,
      durationSec: seconds,
      warmupSec: 0,
      budgetMs,
      seed: Number(args.seed) + 1,
    });

    const events: Record<string, number | null> = { killSec: null, restartSec: null, readySec: null, rejoinSec: null };
    const at = (): number => (performance.now() - before) / 1000;
    const victim = replicas[0];
    const faults = (async () => {
      await sleep(killAt * 1000 - (performance.now() - before));
      events.killSec = at();
      await victim.stop('SIGKILL');
      if (restartAt === 0) return;
      await sleep(restartAt * 1000 - (performance.now() - before));
      events.restartSec = at();
      replicas[0] = await launchReplica(ports[0], config);
      events.readySec = at();
    })();
    // Awaited after the stream; a failure meanwhile must not count as unhandled.
    faults.catch(() => {});
    const generator = await stream;
    await faults;
    http.close();
    placeOnSchedule(outcomes, before);

    const killMs = (events.killSec as number) * 1000;
    const restartMs = events.restartSec === null ? Number.POSITIVE_INFINITY : events.restartSec * 1000;
    const rejoin = outcomes.find((o) => o.scheduledMs >= restartMs && o.upstreams.at(-1) === addrs[0]);
    events.rejoinSec = rejoin === undefined ? null : rejoin.scheduledMs / 1000;
    const phases = [
      figures('before kill', 0, killMs, outcomes),
      figures('one replica', killMs, restartMs, outcomes),
      ...(restartAt === 0 ? [] : [figures('after restart', restartMs, Number.POSITIVE_INFINITY, outcomes)]),
    ];
    const total = figures('total', 0, Number.POSITIVE_INFINITY, outcomes);
    const resentStatuses: Record<string, number> = {};
    for (const o of outcomes)
      if (o.upstreams.length > 1) resentStatuses[o.upstreamStatus] = (resentStatuses[o.upstreamStatus] ?? 0) + 1;
    const resentInLog = nginx.accessLog().filter((line) => /upstream=\[[^\]]*, /.test(line)).length;

    console.log(`\n${formatPhases([...phases, total])}`);
    const sec = (x: number | null): string => (x === null ? '—' : `${x.toFixed(2)} s`);
    console.log(
      `events: SIGKILL ${sec(events.killSec)}, restart ${sec(events.restartSec)}, ready ${sec(events.readySec)}, first request answered by it again (scheduled) ${sec(events.rejoinSec)}`,
    );
    console.log(
      `resent by nginx, by upstream status: ${JSON.stringify(resentStatuses)} (access log: ${resentInLog} resent)`,
    );
    console.log(
      `generator: ${formatRequestOutcomes(generator)}; p50 ${generator.latencyMs.p50} p99 ${generator.latencyMs.p99} max ${generator.latencyMs.max} ms (all answers); ` +
        `late > budget + ${generator.lateBoundMs} ms: ${generator.lateBeyondBound}; schedule lag p99 ${generator.scheduleLagMs.p99} ms` +
        ` (this script's timing of every answer: p50 ${total.answeredLatencyMs.p50} p99 ${total.answeredLatencyMs.p99} max ${total.answeredLatencyMs.max} ms)`,
    );
    if (args.json !== undefined) {
      const report = {
        createdAt: new Date().toISOString(),
        machine: { cpus: availableParallelism(), loadavg: loadavg(), node: process.version },
        config: {
          seconds,
          killAt,
          restartAt,
          qps,
          budgetMs,
          mode: fastPathOnly ? 'fast-path' : 'cascade',
          collection: collection.name,
          k: 20,
          zipf: 1.0,
          distinct: 5000,
          seed: Number(args.seed),
        },
        events,
        phases,
        total,
        resentStatuses,
        generator,
      };
      writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
      console.log(`JSON written to ${args.json}`);
    }
    if (total.lost > 0 || total.serverErrors > 0) {
      console.log(`FAIL: ${total.lost} lost, ${total.serverErrors} answered 5xx`);
      process.exitCode = 1;
    }
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await cleanup();
  }
}

await main();
