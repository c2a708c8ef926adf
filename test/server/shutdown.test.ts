/**
 * Graceful shutdown: readiness turns 503, requests already accepted all finish with their answers,
 * then the process exits 0 — in-process (server.close()) and for the real CLI on SIGTERM.
 */
import { Agent, request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Passage, Scorer } from '../../src/index.js';
import { postJson, scifactRequests, spawnServeCli, start, waitForServing } from './helpers.js';

function countingSlowScorer(ms: number): Scorer & { started: number } {
  const s = {
    id: 'slow-counting',
    started: 0,
    async score(_q: string, passages: readonly Passage[]) {
      s.started++;
      await new Promise((r) => setTimeout(r, ms));
      return passages.map(() => ({ relevant: 0.7 }));
    },
  };
  return s;
}

describe('server.close()', () => {
  it('drains: readiness 503, every accepted request answered, connections closed, then exits', async () => {
    const scorer = countingSlowScorer(250);
    const server = await start({
      drainDelayMs: 200,
      // Far beyond the test's timeout: if close() waited for the force-close, the test would fail.
      shutdownTimeoutMs: 600_000,
      models: { slow: { type: 'scorer', scorer, budgetMs: 5000 } },
    });
    const url = server.url as string;
    const inFlight = Array.from({ length: 12 }, (_, i) =>
      postJson(`${url}/v1/rerank`, { model: 'slow', query: `q${i}`, documents: ['a', 'b'] }),
    );
    for (let i = 0; i < 200 && scorer.started < 12; i++) await new Promise((r) => setTimeout(r, 5));
    expect(scorer.started).toBe(12);
    const closing = server.close();
    const ready = await fetch(`${url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'draining' });
    expect((await fetch(`${url}/health`)).status).toBe(503);
    // Still listening during the drain delay: a late request is served, and told to go elsewhere next.
    const late = await postJson(`${url}/v1/rerank`, { model: 'slow', query: 'late', documents: ['a'] });
    expect(late.status).toBe(200);
    expect(late.headers.get('connection')).toBe('close');
    const answers = await Promise.all(inFlight);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect((a.body as { results: unknown[] }).results).toHaveLength(2);
    }
    // No waiting for the force-close: answered connections close themselves.
    await closing;
    await expect(fetch(`${url}/health/live`)).rejects.toThrow();
  });
});

describe('relevance-gate serve (CLI) on SIGTERM', () => {
  it('finishes the accepted requests and exits 0', async () => {
    const cli = spawnServeCli();
    const { child, exited } = cli;
    try {
      const url = await waitForServing(cli, 300);
      expect(url, `no listening line; stderr: ${cli.stderr()}`).toBeDefined();
      expect(cli.stdout()).toContain('fast-path (default)');
      const { hostname, port } = new URL(url as string);

      // Establish the connections first, so every request below is accepted before SIGTERM.
      const agent = new Agent({ keepAlive: true, maxSockets: 6 });
      const get = () =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest({ hostname, port, path: '/health/live', agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', reject);
          req.end();
        });
      await Promise.all(Array.from({ length: 6 }, get));
      const heavy = scifactRequests(6, 400);
      let written = 0;
      const posts = heavy.map(
        (r) =>
          new Promise<{ status: number; results: number }>((resolve, reject) => {
            const body = JSON.stringify({ query: r.query, documents: r.documents.map((d) => d.slice(0, 2000)) });
            const req = httpRequest(
              {
                hostname,
                port,
                path: '/v1/rerank',
                method: 'POST',
                agent,
                headers: { 'content-type': 'application/json', 'x-budget-ms': '20000' },
              },
              (res) => {
                let text = '';
                res.on('data', (c: Buffer) => {
                  text += c.toString();
                });
                res.on('end', () =>
                  resolve({
                    status: res.statusCode ?? 0,
                    results: (JSON.parse(text) as { results?: unknown[] }).results?.length ?? -1,
                  }),
                );
              },
            );
            req.on('error', reject);
            req.on('finish', () => {
              written++;
            });
            req.end(body);
          }),
      );
      for (let i = 0; i < 200 && written < posts.length; i++) await new Promise((r) => setTimeout(r, 5));
      child.kill('SIGTERM');
      const answers = await Promise.all(posts);
      for (const a of answers) expect(a).toEqual({ status: 200, results: 400 });
      expect(await exited).toBe(0);
      agent.destroy();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});
