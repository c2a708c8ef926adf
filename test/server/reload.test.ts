/**
 * Reloading models and policy (server.reload(), `serve` on SIGHUP): under load no request fails;
 * a request in flight at the swap finishes on the old model, which closes only after it; the new
 * policy decides the requests that arrive after the swap.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServerConfigInput } from '../../src/server/index.js';
import { signalScorer, tempDir } from '../decision-log/helpers.js';
import {
  gatedScorer,
  postJson,
  scifactRequests,
  spawnServeCli,
  start,
  TEST_ADMISSION_ARGS,
  waitForServing,
} from './helpers.js';

const work = scifactRequests(8, 8);

interface Answer {
  status: number;
  threshold: number | undefined;
}

describe('reload', () => {
  it('swaps models and policy under load without dropping a request; in-flight requests finish on the old model', async () => {
    const closed: string[] = [];
    const held = gatedScorer('held-old');
    const input = (threshold: number, generation: string, gated = held): ServerConfigInput => ({
      models: {
        m: {
          type: 'scorer',
          scorer: signalScorer(`signals-${generation}`),
          policy: { threshold },
          close: () => {
            closed.push(`m-${generation}`);
          },
        },
        gated: {
          type: 'scorer',
          scorer: gated,
          close: () => {
            closed.push(`gated-${generation}`);
          },
        },
      },
    });
    const server = await start(input(0.5, 'old'));
    const url = server.url as string;
    try {
      const heldAnswer = postJson(`${url}/v1/gate`, {
        model: 'gated',
        query: 'held across the reload',
        passages: ['a', 'b'],
        budget_ms: 20_000,
      });
      while (held.calls === 0) await new Promise((r) => setTimeout(r, 5));

      const answers: Answer[] = [];
      let stop = false;
      const loop = async (offset: number) => {
        for (let i = offset; !stop; i++) {
          const r = work[i % work.length];
          const res = await postJson(`${url}/v1/gate`, { model: 'm', query: r.query, passages: r.documents });
          answers.push({
            status: res.status,
            threshold: (res.body as { stats?: { threshold: number } }).stats?.threshold,
          });
        }
      };
      const loops = [loop(0), loop(3), loop(5)];
      await new Promise((r) => setTimeout(r, 200));
      const fresh = gatedScorer('held-new');
      fresh.release();
      const reloading = server.reload(input(0.7, 'new', fresh));
      // The swap: requests that arrive now are decided under the new policy.
      while (!answers.some((a) => a.threshold === 0.7)) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 100));
      // The held request still runs on the old model: the old registry is not closed yet.
      expect(closed).toEqual([]);
      held.release();
      const heldRes = await heldAnswer;
      expect(heldRes.status).toBe(200);
      await reloading;
      expect(closed.sort()).toEqual(['gated-old', 'm-old']);
      stop = true;
      await Promise.all(loops);

      expect(answers.length).toBeGreaterThan(20);
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      const thresholds = answers.map((a) => a.threshold);
      const firstNew = thresholds.indexOf(0.7);
      expect(thresholds.slice(0, firstNew).every((t) => t === 0.5)).toBe(true);
      // Requests already admitted on the old model when the swap happened may finish after the first new answer; none arrives later.
      expect(thresholds.slice(firstNew + 3).every((t) => t === 0.7)).toBe(true);
      expect((await postJson(`${url}/v1/gate`, { model: 'gated', query: 'q', passages: ['a'] })).status).toBe(200);
    } finally {
      held.release();
      await server.close();
    }
    expect(closed.sort()).toEqual(['gated-new', 'gated-old', 'm-new', 'm-old']);
  });

  it('keeps the serving models when the new ones fail to load', async () => {
    const server = await start({
      models: { m: { type: 'scorer', scorer: signalScorer(), policy: { threshold: 0.5 } } },
    });
    try {
      await expect(
        server.reload({
          models: {
            m: { type: 'scorer', scorer: signalScorer(), policy: { threshold: 0.5 } },
            broken: {
              type: 'scorer',
              scorer: async () => {
                throw new Error('cannot load');
              },
            },
          },
        }),
      ).rejects.toThrow(/cannot load/);
      const r = work[0];
      expect(
        (await postJson(`${server.url}/v1/gate`, { model: 'm', query: r.query, passages: r.documents })).status,
      ).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('serve reloads its config file on SIGHUP', async () => {
    const t = tempDir();
    const file = join(t.dir, 'config.json');
    const write = (threshold: number) =>
      writeFileSync(file, JSON.stringify({ models: { 'fast-path': { type: 'fast-path', policy: { threshold } } } }));
    write(0.3);
    const cli = spawnServeCli(['--config', file, ...TEST_ADMISSION_ARGS]);
    try {
      const url = await waitForServing(cli, 600);
      expect(url).toBeDefined();
      const thresholdNow = async () =>
        (
          (await postJson(`${url}/v1/gate`, { query: work[0].query, passages: work[0].documents })).body as {
            stats: { threshold: number };
          }
        ).stats.threshold;
      expect(await thresholdNow()).toBe(0.3);
      write(0.6);
      cli.child.kill('SIGHUP');
      const until = Date.now() + 30_000;
      let seen = 0.3;
      while (seen !== 0.6 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await thresholdNow();
      }
      expect(seen).toBe(0.6);
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exited;
      t.remove();
    }
  });

  it('serve --processes 2 reloads every worker on SIGHUP, one at a time, without failing a request', async () => {
    const t = tempDir();
    const file = join(t.dir, 'config.json');
    const write = (threshold: number) =>
      writeFileSync(file, JSON.stringify({ models: { 'fast-path': { type: 'fast-path', policy: { threshold } } } }));
    write(0.3);
    const cli = spawnServeCli(['--config', file, '--processes', '2', ...TEST_ADMISSION_ARGS]);
    try {
      const url = await waitForServing(cli, 600);
      expect(url).toBeDefined();
      // A new connection per request: the primary hands connections to the workers in turn.
      const answer = async (): Promise<Answer> => {
        const r = await postJson(
          `${url}/v1/gate`,
          { query: work[0].query, passages: work[0].documents },
          { connection: 'close' },
        );
        return { status: r.status, threshold: (r.body as { stats?: { threshold: number } }).stats?.threshold };
      };
      const before = await Promise.all(Array.from({ length: 8 }, answer));
      expect(before.every((a) => a.status === 200 && a.threshold === 0.3)).toBe(true);
      write(0.6);
      cli.child.kill('SIGHUP');
      const during: Answer[] = [];
      const until = Date.now() + 60_000;
      while (!/2 of 2 workers reloaded/.test(cli.stderr()) && Date.now() < until)
        during.push(...(await Promise.all(Array.from({ length: 4 }, answer))));
      expect(cli.stderr()).toMatch(/SIGHUP: 2 of 2 workers reloaded models and policy/);
      expect(during.every((a) => a.status === 200)).toBe(true);
      const after = await Promise.all(Array.from({ length: 16 }, answer));
      expect(after.map((a) => a.status)).toEqual(after.map(() => 200));
      expect(after.map((a) => a.threshold)).toEqual(after.map(() => 0.6));
      // The primary survived the hang-up signal and still serves.
      expect(cli.child.exitCode).toBeNull();
      // A worker started after the reload (one killed and replaced) serves the reloaded policy too.
      const ps = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(cli.child.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .filter((l) => l.includes('main.ts serve'))
        .map((l) => Number(l.trim().split(/\s+/)[0]));
      expect(ps).toHaveLength(2);
      process.kill(ps[0]!, 'SIGKILL');
      const replaced = Date.now() + 60_000;
      while ((cli.stderr().match(/ready: 2 of 2 processes serving/g) ?? []).length < 2 && Date.now() < replaced)
        await new Promise((r) => setTimeout(r, 50));
      const fresh = await Promise.all(Array.from({ length: 16 }, answer));
      expect(fresh.map((a) => a.threshold)).toEqual(fresh.map(() => 0.6));
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exited;
      t.remove();
    }
  });
});
