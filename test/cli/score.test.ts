import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const cli = ['--import', 'tsx', 'src/cli/main.ts'];

interface ScoreJson {
  threshold: number;
  included: Array<{ id: string; relevance: number; signals: Record<string, number> }>;
  excluded: Array<{ id: string; relevance: number | null }>;
  stats: { retrieved: number; returned: number; scored: number };
}

describe('relevance-gate score', () => {
  it('gates the embedded example with the shipped model: keeps the relevant, drops the rest', async () => {
    const { stdout } = await run('node', [...cli, 'score', '--json'], { maxBuffer: 1 << 24 });
    const out = JSON.parse(stdout) as ScoreJson;
    expect(out.stats.retrieved).toBe(20);
    expect(out.stats.scored).toBe(20);
    expect(out.stats.returned).toBe(out.included.length);
    expect(out.included.length).toBeGreaterThan(0);
    expect(out.included.length).toBeLessThan(20);
    for (const item of out.included) expect(item.relevance).toBeGreaterThanOrEqual(out.threshold);
    for (const item of out.excluded) expect(item.relevance ?? 0).toBeLessThan(out.threshold);
    // Included passages come in the gate's returned order: by the shipped model's ranking signal.
    const ranking = out.included.map((i) => i.signals.ranking!);
    for (const r of ranking) expect(r).toBeGreaterThanOrEqual(0);
    expect([...ranking].sort((a, b) => b - a)).toEqual(ranking);
  });

  it('prints a readable table by default and honours --threshold', async () => {
    const { stdout } = await run('node', [...cli, 'score', '--threshold', '0.99'], { maxBuffer: 1 << 24 });
    expect(stdout).toMatch(/kept 0 of 20/);
  });

  it('refuses a malformed request file with a typed error and exit code 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rg-score-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ query: 42, passages: [] }));
    await expect(run('node', [...cli, 'score', '--request', file])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/ERR_INVALID_ARGUMENT: .*"query" must be a string/),
    });
  });
});
