/**
 * `kill -9` of a cluster worker under open-loop load: `serve --processes N` driven at `qps`
 * (keep-alive connections, plus a share of requests on fresh connections so that new
 * connections keep being handed out while a worker dies and while its replacement starts), one
 * worker killed at a time, readiness probed on fresh connections throughout.
 *
 * Every request is accounted for. A request that failed at the connection level is attributed
 * with the connections the killed process held at the kill (its file descriptors, read from /proc
 * while it is stopped, between SIGSTOP and SIGKILL): those are lost with it (TCP cannot move them
 * to another process); any other connection failure, and any status other than 200 (and 429,
 * counted apart), is a failure of the surviving capacity.
 */
import { readFileSync } from 'node:fs';
import { Agent, type ClientRequest, request as httpRequest } from 'node:http';
import { mulberry32 } from '../../src/util/seeded-random.js';
import { loadCollection } from '../cross-encoder/data.js';
import {
  connectionsToPort,
  type ServeProcess,
  servingUrl,
  socketInodes,
  startServe,
  stopServe,
  workersOf,
} from './serve-process.js';

export interface ClusterKillOptions {
  readonly seed: number;
  /** Requests per second, open loop (default 400). */
  readonly qps?: number;
  /** Workers killed one after the other (default 1). */
  readonly kills?: number;
  /** Load before the first kill and after each replacement is ready before the next (default 2000 ms). */
  readonly settleMs?: number;
  readonly processes?: number;
  /** Share of requests sent on a fresh connection (`Connection: close`), default 0.25. */
  readonly freshShare?: number;
  /** Documents per request (default 20). */
  readonly documents?: number;
  /** Client timeout per request (default 10 s): an unanswered request counts as `timeout`. */
  readonly timeoutMs?: number;
  readonly serveArgs?: readonly string[];
  readonly log?: (line: string) => void;
  /** Called with the serve process once started (its output, for a report). */
  readonly onServe?: (serve: ServeProcess) => void;
}

export interface KillRecord {
  readonly pid: number;
  /** ms since the load started. */
  readonly atMs: number;
  /** Connections the killed process held at the kill (from its file descriptors). */
  readonly connections: number;
  /** Requests in flight on those connections at the kill. */
  readonly inFlight: number;
  readonly replacementPid: number | undefined;
  /** ms between SIGSTOP and SIGKILL (its connections read meanwhile). */
  readonly stoppedMs: number;
  /** ms from the kill to the primary's line saying the killed process exited (its teardown, as the primary saw it). */
  readonly exitSeenMs: number | undefined;
  /** ms from the kill to the primary's "ready" line for the replacement. */
  readonly replacementReadyMs: number | undefined;
}

export interface ClusterKillReport {
  readonly sent: number;
  readonly statuses: Record<string, number>;
  /** Connection-level failures on connections the killed process held (lost with it). */
  readonly lostWithKilled: number;
  /** ... of which requests in flight at the kill. */
  readonly lostInFlight: number;
  /** ... of which requests written on such a connection after the kill, before the client saw it close. */
  readonly lostAfterKill: number;
  /** The latest send, after its kill, of a request lost with a killed process (ms). */
  readonly lostLatestAfterKillMs: number;
  /** Connection-level failures on any other connection: the surviving capacity failed. */
  readonly failedElsewhere: number;
  /** Error codes of connection-level failures (both kinds). */
  readonly errorCodes: Record<string, number>;
  readonly failures: ReadonlyArray<string>;
  /**
   * Readiness probes (fresh connections, every 50 ms): answered other than 200, failed at the
   * connection level (errors), or lost with a killed process's connection (as requests are).
   */
  readonly readiness: {
    readonly probes: number;
    readonly notReady: number;
    readonly errors: number;
    readonly lostWithKilled: number;
  };
  readonly kills: readonly KillRecord[];
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Per 500 ms of the run (by send time): requests, 200s, 429s, other statuses, connection failures, p99 and max of the 200s. */
  readonly timeline: ReadonlyArray<{
    readonly fromMs: number;
    readonly sent: number;
    readonly ok: number;
    readonly refused: number;
    readonly other: number;
    readonly failed: number;
    readonly p99Ms: number;
    readonly maxMs: number;
  }>;
  /** The primary's connection counts at the end (`relevance_gate_cluster_connections_total`). */
  readonly connections: Record<string, number>;
  /** Exit of the primary on SIGTERM after the run. */
  readonly exit: number | string | null;
}

interface Outcome {
  readonly sentAt: number;
  readonly fresh: boolean;
  doneAt?: number;
  status?: number;
  code?: string;
  localPort?: number;
}

function requestBodies(count: number, documents: number, seed: number): Buffer[] {
  const data = loadCollection('cranfield');
  const queries = [...data.queries.values()];
  const docs = [...data.docs.values()];
  const rand = mulberry32(seed);
  return Array.from({ length: count }, () => {
    const query = queries[Math.floor(rand() * queries.length)];
    const start = Math.floor(rand() * docs.length);
    const texts = Array.from({ length: documents }, (_, i) => docs[(start + i * 11) % docs.length]);
    return Buffer.from(JSON.stringify({ query, documents: texts }));
  });
}

/** Spins until the process is stopped (state T in /proc/<pid>/stat) or 1 s passed. */
function waitStopped(pid: number): void {
  const deadline = performance.now() + 1000;
  while (performance.now() < deadline) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (/^\d+ \(.*\) [Tt] /.test(stat)) return;
    } catch {
      return;
    }
  }
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Starts the cluster, drives the load with the kills, stops the cluster (SIGTERM) and reports. */
export async function runClusterKill(options: ClusterKillOptions): Promise<ClusterKillReport> {
  const qps = options.qps ?? 400;
  const kills = options.kills ?? 1;
  const settleMs = options.settleMs ?? 2000;
  const processes = options.processes ?? 2;
  const freshShare = options.freshShare ?? 0.25;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const log = options.log ?? (() => undefined);
  const rand = mulberry32(options.seed ^ 0x5eed);
  const serve = startServe(['--processes', String(processes), ...(options.serveArgs ?? [])]);
  options.onServe?.(serve);
  let exit: number | string | null = null;
  try {
    const url = await servingUrl(serve);
    const port = Number(new URL(url).port);
    const bodies = requestBodies(64, options.documents ?? 20, options.seed);
    const agent = new Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 64 });
    const outcomes: Outcome[] = [];
    const open = new Set<ClientRequest>();
    const t0 = performance.now();
    const send = (fresh: boolean): void => {
      const body = bodies[outcomes.length % bodies.length];
      const outcome: Outcome = { sentAt: performance.now() - t0, fresh };
      outcomes.push(outcome);
      const req = httpRequest(`${url}/v1/rerank`, {
        method: 'POST',
        agent: fresh ? false : agent,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          ...(fresh ? { connection: 'close' } : {}),
        },
        timeout: timeoutMs,
      });
      open.add(req);
      const finish = (status: number | undefined, code: string | undefined): void => {
        if (outcome.doneAt !== undefined) return;
        outcome.doneAt = performance.now() - t0;
        outcome.status = status;
        outcome.code = code;
        outcome.localPort ??= req.socket?.localPort;
        open.delete(req);
      };
      req.on('socket', (socket) => {
        const note = (): void => {
          outcome.localPort = socket.localPort;
        };
        if (socket.localPort !== undefined) note();
        else socket.once('connect', note);
      });
      req.on('response', (res) => {
        res.on('data', () => undefined);
        res.on('end', () => finish(res.statusCode, undefined));
        res.on('error', (e: NodeJS.ErrnoException) => finish(undefined, e.code ?? e.message));
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error('client timeout'), { code: 'TIMEOUT' })));
      req.on('error', (e: NodeJS.ErrnoException) => finish(undefined, e.code ?? e.message));
      req.end(body);
    };

    // Open loop: request i is due at i / qps, whatever the answers do.
    let stopped = false;
    let due = 0;
    const pump = (): void => {
      if (stopped) return;
      const now = performance.now() - t0;
      while (due * (1000 / qps) <= now) {
        send(rand() < freshShare);
        due++;
      }
      setTimeout(pump, 1);
    };
    pump();

    // Readiness on fresh connections (each one handed to the next worker in turn).
    // A probe failing at the connection level is attributed like a request (below).
    const readiness = { probes: 0, notReady: 0 };
    const probeFailures: Array<{
      readonly sentAt: number;
      readonly localPort: number | undefined;
      readonly code: string;
    }> = [];
    const probe = setInterval(() => {
      readiness.probes++;
      const sentAt = performance.now() - t0;
      let localPort: number | undefined;
      const req = httpRequest(`${url}/health/ready`, { agent: false, timeout: timeoutMs }, (res) => {
        res.resume();
        if (res.statusCode !== 200) readiness.notReady++;
      });
      // The port is read once connected: a socket destroyed by a reset no longer tells it.
      req.on('socket', (socket) => socket.once('connect', () => (localPort = socket.localPort)));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e: NodeJS.ErrnoException) =>
        probeFailures.push({ sentAt, localPort: localPort ?? req.socket?.localPort, code: e.code ?? e.message }),
      );
      req.end();
    }, 50);

    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    const readyLines = (): number => serve.lines.filter((l) => /^worker \d+ ready/.test(l.line)).length;
    const killRecords: KillRecord[] = [];
    const victimPorts = new Map<number, number>(); // client port → kill index
    const killAt: number[] = [];
    for (let k = 0; k < kills; k++) {
      await sleep(settleMs);
      const workers = workersOf(serve.pid);
      if (workers.length !== processes) throw new Error(`expected ${processes} workers, found ${workers.length}`);
      const victim = workers[Math.floor(rand() * workers.length)];
      const readyBefore = readyLines();
      // Stopped first, so that the connections it holds can be read exactly (a running process
      // keeps taking connections while /proc is read), then killed: to everyone else a kill at
      // the stop. Requests sent from the stop on count as sent after the kill.
      // The connection table takes milliseconds to read: read before the stop, and again only if
      // the process took a socket since (rare), so that it stays stopped for well under 1 ms.
      const before = socketInodes(victim);
      let table = connectionsToPort(port);
      process.kill(victim, 'SIGSTOP');
      const at = performance.now() - t0;
      killAt.push(at);
      waitStopped(victim);
      const inodes = socketInodes(victim);
      if ([...inodes].some((inode) => !before.has(inode))) table = connectionsToPort(port);
      process.kill(victim, 'SIGKILL');
      const stoppedMs = Math.round((performance.now() - t0 - at) * 10) / 10;
      const mine = [...inodes].flatMap((inode) => {
        const clientPort = table.get(inode);
        return clientPort === undefined ? [] : [clientPort];
      });
      for (const p of mine) victimPorts.set(p, k);
      const inFlight = outcomes.filter(
        (o) => o.doneAt === undefined && o.localPort !== undefined && mine.includes(o.localPort),
      ).length;
      // The replacement: a new worker, ready once the primary logs it.
      let replacementPid: number | undefined;
      let replacementReadyMs: number | undefined;
      const deadline = performance.now() + 120_000;
      while (performance.now() < deadline) {
        await sleep(50);
        replacementPid ??= workersOf(serve.pid).find((p) => !workers.includes(p));
        if (readyLines() > readyBefore) {
          replacementReadyMs = Math.round(performance.now() - t0 - at);
          break;
        }
      }
      const exited = serve.lines.find((l) => l.line.startsWith(`worker ${victim} exited`));
      killRecords.push({
        pid: victim,
        atMs: Math.round(at),
        stoppedMs,
        exitSeenMs: exited === undefined ? undefined : Math.round(exited.at - t0 - at),
        connections: mine.length,
        inFlight,
        replacementPid,
        replacementReadyMs,
      });
      log(
        `kill ${k + 1}: pid ${victim} with ${mine.length} connections, ${inFlight} requests in flight; replacement ${replacementPid} ready after ${replacementReadyMs} ms`,
      );
      if (replacementReadyMs === undefined) throw new Error('the replacement worker never became ready');
    }
    await sleep(settleMs);
    stopped = true;
    clearInterval(probe);
    // Let the last requests finish (or time out).
    const drainDeadline = performance.now() + timeoutMs + 2000;
    while (open.size > 0 && performance.now() < drainDeadline) await sleep(50);
    agent.destroy();

    const statuses: Record<string, number> = {};
    const errorCodes: Record<string, number> = {};
    const failures: string[] = [];
    let lostInFlight = 0;
    let lostAfterKill = 0;
    let lostLatestAfterKillMs = 0;
    let failedElsewhere = 0;
    const latencies: number[] = [];
    for (const o of outcomes) {
      if (o.status !== undefined) {
        statuses[o.status] = (statuses[o.status] ?? 0) + 1;
        if (o.status === 200 && o.doneAt !== undefined) latencies.push(o.doneAt - o.sentAt);
        continue;
      }
      const code = o.code ?? 'unfinished';
      errorCodes[code] = (errorCodes[code] ?? 0) + 1;
      const k = o.localPort === undefined ? undefined : victimPorts.get(o.localPort);
      if (k !== undefined && o.sentAt <= killAt[k]) lostInFlight++;
      else if (k !== undefined) {
        lostAfterKill++;
        lostLatestAfterKillMs = Math.max(lostLatestAfterKillMs, Math.round(o.sentAt - killAt[k]));
      } else {
        failedElsewhere++;
        if (failures.length < 20)
          failures.push(
            `${code} ${o.fresh ? 'fresh' : 'keep-alive'} sent at ${Math.round(o.sentAt)} ms, done at ${Math.round(o.doneAt ?? -1)}, port ${o.localPort}, kills at ${killAt.map(Math.round).join(',')}`,
          );
      }
    }
    // What the primary did with the connections (rerouted: a killed worker had not taken them).
    const connections: Record<string, number> = {};
    try {
      const metrics = await (await fetch(`${url}/metrics`)).text();
      for (const m of metrics.matchAll(/^relevance_gate_cluster_connections_total\{outcome="(\w+)"\} (\d+)$/gm))
        connections[m[1]] = Number(m[2]);
    } catch {
      // reported empty
    }
    latencies.sort((a, b) => a - b);
    const r = (x: number): number => Math.round(x * 10) / 10;
    let probeErrors = 0;
    let probesLostWithKilled = 0;
    for (const f of probeFailures) {
      if (f.localPort !== undefined && victimPorts.has(f.localPort)) probesLostWithKilled++;
      else {
        probeErrors++;
        if (failures.length < 20)
          failures.push(
            `readiness probe ${f.code} sent at ${Math.round(f.sentAt)} ms, port ${f.localPort}, kills at ${killAt.map(Math.round).join(',')}`,
          );
      }
    }
    const buckets = new Map<number, Outcome[]>();
    for (const o of outcomes) {
      const b = Math.floor(o.sentAt / 500) * 500;
      const list = buckets.get(b) ?? [];
      list.push(o);
      buckets.set(b, list);
    }
    const timeline = [...buckets].map(([fromMs, list]) => {
      const ms = list
        .filter((o) => o.status === 200 && o.doneAt !== undefined)
        .map((o) => (o.doneAt as number) - o.sentAt)
        .sort((a, b) => a - b);
      return {
        fromMs,
        sent: list.length,
        ok: ms.length,
        refused: list.filter((o) => o.status === 429).length,
        other: list.filter((o) => o.status !== undefined && o.status !== 200 && o.status !== 429).length,
        failed: list.filter((o) => o.status === undefined).length,
        p99Ms: r(quantile(ms, 0.99)),
        maxMs: r(ms.at(-1) ?? 0),
      };
    });
    exit = await stopServe(serve);
    return {
      sent: outcomes.length,
      statuses,
      lostWithKilled: lostInFlight + lostAfterKill,
      lostInFlight,
      lostAfterKill,
      lostLatestAfterKillMs,
      failedElsewhere,
      errorCodes,
      failures,
      readiness: { ...readiness, errors: probeErrors, lostWithKilled: probesLostWithKilled },
      kills: killRecords,
      latencyMs: { p50: r(quantile(latencies, 0.5)), p99: r(quantile(latencies, 0.99)), max: r(latencies.at(-1) ?? 0) },
      timeline,
      connections,
      exit,
    };
  } finally {
    if (serve.child.exitCode === null && serve.child.signalCode === null) {
      for (const pid of workersOf(serve.pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      serve.child.kill('SIGKILL');
    }
  }
}

/**
 * Long form, by hand (docs/server.md, Several cores):
 *   npx tsx test/faults/cluster-kill.ts [--kills 10] [--settle-ms 14000] [--fresh 0.25] [--qps 400] [--seed 7]
 * (FAULT_SERVE_CLI=dist/cli/main.js to serve from the build). Prints the report, the five worst
 * 500 ms windows by p99, and the primary's log.
 */
async function main(): Promise<void> {
  const { parseArgs } = await import('node:util');
  const { values } = parseArgs({
    options: {
      kills: { type: 'string', default: '10' },
      'settle-ms': { type: 'string', default: '14000' },
      fresh: { type: 'string', default: '0.25' },
      qps: { type: 'string', default: '400' },
      seed: { type: 'string', default: '7' },
    },
  });
  let serve: ServeProcess | undefined;
  const report = await runClusterKill({
    seed: Number(values.seed),
    qps: Number(values.qps),
    kills: Number(values.kills),
    settleMs: Number(values['settle-ms']),
    freshShare: Number(values.fresh),
    log: (line) => console.log(line),
    onServe: (s) => {
      serve = s;
    },
  });
  const { timeline, ...rest } = report;
  console.log(JSON.stringify(rest, null, 2));
  const worst = [...timeline].sort((a, b) => b.p99Ms - a.p99Ms).slice(0, 5);
  console.log(`worst 500 ms windows by p99 of the 200s: ${JSON.stringify(worst)}`);
  console.log(serve?.stderr() ?? '');
}

if (process.argv[1] !== undefined && /cluster-kill\.ts$/.test(process.argv[1])) await main();
