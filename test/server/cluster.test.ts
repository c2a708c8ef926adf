/**
 * `serve --processes 2`: two worker processes share one port, /metrics aggregates both, and
 * SIGTERM to the primary drains the workers and exits 0.
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/util/package-root.js';
import { postJson } from './helpers.js';

describe('relevance-gate serve --processes 2', () => {
  it('serves from two worker processes, aggregates metrics, exits 0 on SIGTERM', async () => {
    const root = packageRoot();
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'src', 'cli', 'main.ts'),
        'serve',
        '--port',
        '0',
        '--processes',
        '2',
        '--log-level',
        'warn',
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 400 && !/serving on http:\/\/\S+/.test(stdout); i++)
        await new Promise((r) => setTimeout(r, 100));
      const url = /serving on (http:\/\/\S+)/.exec(stdout)?.[1];
      expect(url, `no listening line; stderr: ${stderr}`).toBeDefined();
      expect(stdout).toContain('(2 processes)');
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
