/**
 * `serve --processes 2`: two worker processes behind the primary's listener, /metrics aggregates
 * both (plus the primary's own cluster figures), a worker killed with SIGKILL is replaced and gets
 * connections only once ready (readiness answers 200 throughout, no request fails), with every
 * worker down the connections wait for a replacement instead of failing, a port in use stops the
 * start at once, and SIGTERM to the primary drains the workers and exits 0.
 * (Under load: the fault suite's cluster-worker-kill scenario, docs/faults.md.)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { postJson, type ServeCliProcess, spawnServeCli, TEST_ADMISSION_ARGS, waitForServing } from './helpers.js';

/**
 * A fresh connection per request (a kept-alive one held by a worker this test kills would fail
 * at the TCP level, the one loss no server can prevent: docs/server.md, Several cores), and a
 * budget no queueing on a busy test host reaches (no 429).
 */
const FRESH_LONG_BUDGET = { connection: 'close', 'x-budget-ms': '10000' };

/** The worker processes of the primary (tsx also keeps an esbuild service process). */
function workers(primary: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(primary)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter((l) => l.includes('main.ts serve'))
      .map((l) => Number(l.trim().split(/\s+/)[0]));
  } catch {
    return [];
  }
}

/** A GET on a fresh connection (the primary hands each to the next ready worker): status or error code. */
async function freshGet(url: string): Promise<string> {
  try {
    const res = await fetch(url, { headers: { connection: 'close' }, signal: AbortSignal.timeout(20_000) });
    await res.arrayBuffer();
    return String(res.status);
  } catch (error) {
    return `error ${String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name)}`;
  }
}

function metric(text: string, series: string): number {
  const escaped = series.replace(/[{}"=]/g, (c) => `\\${c}`);
  const m = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
  return m === null ? Number.NaN : Number(m[1]);
}

/** Waits until the primary logged `count` lines matching `pattern`. */
async function logged(cli: ServeCliProcess, pattern: RegExp, count: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((cli.stderr().match(new RegExp(pattern, 'gm')) ?? []).length < count) {
    if (Date.now() > deadline) throw new Error(`no ${count} × ${pattern} in ${timeoutMs} ms; stderr: ${cli.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('relevance-gate serve --processes 2', () => {
  it('serves from both workers, aggregates metrics, replaces a killed worker without a failed request, exits 0 on SIGTERM', {
    timeout: 180_000,
  }, async () => {
    const cli = spawnServeCli(['--processes', '2', ...TEST_ADMISSION_ARGS]);
    const { child, exited } = cli;
    try {
      const url = await waitForServing(cli, 600);
      expect(url, `no listening line; stderr: ${cli.stderr()}`).toBeDefined();
      const base = url as string;
      expect(cli.stdout()).toContain('(2 worker processes with --no-memory-reducer)');
      const first = workers(child.pid as number);
      expect(first).toHaveLength(2);
      // Each worker runs with the node flags serving needs (src/server/node-flags.ts).
      for (const pid of first)
        expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain('--no-memory-reducer');
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          postJson(`${base}/v1/rerank`, { query: `query ${i}`, documents: ['a b', 'c d'] }, FRESH_LONG_BUDGET),
        ),
      );
      expect(answers.every((a) => a.status === 200)).toBe(true);
      let metrics = await (await fetch(`${base}/metrics`, { headers: { connection: 'close' } })).text();
      // Every worker keeps the heap headroom (the smallest of the two is reported).
      expect(metrics).toMatch(/^relevance_gate_heap_headroom_bytes 201326592$/m);
      const pairs = [
        ...metrics.matchAll(/^relevance_gate_pairs_total\{model="fast-path",tier="[^"]+"\} (\d+)/gm),
      ].reduce((sum, m) => sum + Number(m[1]), 0);
      expect(pairs).toBe(40);
      expect(metrics).toMatch(/relevance_gate_model_ready\{model="fast-path"\} 1\b/);
      expect(metric(metrics, 'relevance_gate_cluster_processes{state="ready"}')).toBe(2);
      expect(metric(metrics, 'relevance_gate_cluster_processes_configured')).toBe(2);
      expect(metric(metrics, 'relevance_gate_cluster_connections_total{outcome="handed_over"}')).toBeGreaterThan(20);

      // One worker killed: while its replacement loads, every request and readiness probe on a
      // fresh connection is answered by the other one (200), never by the one still loading (503).
      process.kill(first[0], 'SIGKILL');
      const during: string[] = [];
      const probing = (async () => {
        while ((cli.stderr().match(/^worker \d+ ready/gm) ?? []).length < 3) {
          during.push(await freshGet(`${base}/health/ready`));
          try {
            const rerank = await postJson(
              `${base}/v1/rerank`,
              { query: 'q', documents: ['a b', 'c'] },
              FRESH_LONG_BUDGET,
            );
            during.push(String(rerank.status));
          } catch (error) {
            during.push(`error ${String((error as { cause?: { code?: string } }).cause?.code ?? error)}`);
          }
        }
      })();
      await logged(cli, /^worker \d+ ready/, 3);
      await probing;
      expect(during.length).toBeGreaterThan(0);
      expect(during.filter((s) => s !== '200')).toEqual([]);
      const second = workers(child.pid as number);
      expect(second).toHaveLength(2);
      expect(second).toContain(first[1]);
      // The replacement serves too: fresh connections alternate between the ready workers.
      const after = await Promise.all(Array.from({ length: 6 }, () => freshGet(`${base}/health/ready`)));
      expect(after).toEqual(after.map(() => '200'));
      metrics = await (await fetch(`${base}/metrics`, { headers: { connection: 'close' } })).text();
      expect(metric(metrics, 'relevance_gate_cluster_restarts_total')).toBe(1);
      expect(metric(metrics, 'relevance_gate_cluster_processes{state="ready"}')).toBe(2);

      // One worker stopped with SIGTERM (a rolling restart): it finishes what it has, the other
      // one takes the new connections, and it is replaced.
      process.kill(second[0], 'SIGTERM');
      const rolling: string[] = [];
      while ((cli.stderr().match(/^worker \d+ ready/gm) ?? []).length < 4) {
        rolling.push(await freshGet(`${base}/health/ready`));
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(rolling.filter((s) => s !== '200')).toEqual([]);
      expect(cli.stderr()).toMatch(new RegExp(`^worker ${second[0]} exited \\(code 0\\)`, 'm'));
      const third = workers(child.pid as number);
      expect(third).toHaveLength(2);

      // Every worker killed: connections wait in the primary for a replacement (answered 503
      // "loading" or 200 once one is up), never refused or reset.
      for (const pid of third) process.kill(pid, 'SIGKILL');
      const outage = await Promise.all(Array.from({ length: 4 }, () => freshGet(`${base}/health/live`)));
      expect(outage).toEqual(outage.map(() => '200'));
      await logged(cli, /^worker \d+ ready/, 6);
      expect(await freshGet(`${base}/health/ready`)).toBe('200');

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const pid of workers(child.pid as number)) process.kill(pid, 'SIGKILL');
    }
  });

  it('a port in use stops the start at once, before any worker loads', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const cli = spawnServeCli(['--processes', '2', '--port', String(port), ...TEST_ADMISSION_ARGS]);
      expect(await cli.exited).toBe(1);
      expect(cli.stderr()).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is in use`));
      expect(cli.stderr()).not.toMatch(/worker \d+ ready/);
    } finally {
      taken.close();
    }
  }, 60_000);
});
