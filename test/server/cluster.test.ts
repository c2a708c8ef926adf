/**
 * `serve --processes 2`: two worker processes share one port, /metrics aggregates both, and
 * SIGTERM to the primary drains the workers and exits 0.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { postJson, spawnServeCli, waitForServing } from './helpers.js';

describe('relevance-gate serve --processes 2', () => {
  it('serves from two worker processes, aggregates metrics, exits 0 on SIGTERM', async () => {
    const cli = spawnServeCli(['--processes', '2']);
    const { child, exited } = cli;
    try {
      const url = await waitForServing(cli, 400);
      expect(url, `no listening line; stderr: ${cli.stderr()}`).toBeDefined();
      expect(cli.stdout()).toContain('(2 processes)');
      // Children of the primary that run the server (tsx also keeps an esbuild service process).
      const workers = execFileSync('ps', ['-o', 'args=', '--ppid', String(child.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .filter((l) => l.includes('main.ts serve'));
      expect(workers).toHaveLength(2);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          postJson(`${url}/v1/rerank`, { query: `query ${i}`, documents: ['a b', 'c d'] }),
        ),
      );
      expect(answers.every((a) => a.status === 200)).toBe(true);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      const pairs = [
        ...metrics.matchAll(/^relevance_gate_pairs_total\{model="fastpath",tier="[^"]+"\} (\d+)/gm),
      ].reduce((sum, m) => sum + Number(m[1]), 0);
      expect(pairs).toBe(40);
      expect(metrics).toMatch(/relevance_gate_model_ready\{model="fastpath"\} 1\b/);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 90_000);
});
