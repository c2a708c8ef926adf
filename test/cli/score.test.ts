import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tokenizerFolder } from '../cross-encoder/family-models.js';

const run = promisify(execFile);
const cli = ['--import', 'tsx', 'src/cli/main.ts'];

interface ScoreJson {
  mode: string;
  threshold: number;
  included: Array<{ id: string; relevance: number; rule: string; signals: Record<string, number> }>;
  excluded: Array<{ id: string; relevance: number | null; signals: Record<string, number> | null }>;
  stats: { retrieved: number; returned: number; scored: number; threshold: number; rankingCut: number | null };
}

async function scoreJson(...args: string[]): Promise<ScoreJson> {
  const { stdout } = await run('node', [...cli, 'score', '--json', ...args], { maxBuffer: 1 << 24 });
  return JSON.parse(stdout) as ScoreJson;
}

describe('relevance-gate score', () => {
  it("gates the embedded example by the shipped model's default operating point (balanced, the ranked cut)", async () => {
    const out = await scoreJson();
    expect(out.mode).toBe('balanced');
    expect(out.stats.retrieved).toBe(20);
    expect(out.stats.scored).toBe(20);
    expect(out.stats.returned).toBe(out.included.length);
    expect(out.included.length).toBeGreaterThan(0);
    expect(out.included.length).toBeLessThan(20);
    // as many as reach the relevance cut, taken from the head of the ranking order
    const all = [...out.included, ...out.excluded];
    expect(out.included).toHaveLength(all.filter((i) => (i.relevance ?? 0) >= out.threshold).length);
    expect(out.stats.rankingCut).not.toBeNull();
    const lowestKept = Math.min(...out.included.map((i) => i.signals.ranking!));
    for (const item of out.excluded) expect(item.signals!.ranking!).toBeLessThan(lowestKept);
    expect(out.included.every((i) => i.rule === 'ranked-cut')).toBe(true);
    // Included passages come in the gate's returned order: by the shipped model's ranking signal.
    const ranking = out.included.map((i) => i.signals.ranking!);
    expect([...ranking].sort((a, b) => b - a)).toEqual(ranking);
  });

  it("--mode threshold decides on the model's recommended threshold; --mode precise keeps fewer", async () => {
    const threshold = await scoreJson('--mode', 'threshold');
    expect(threshold.mode).toBe('threshold');
    expect(threshold.threshold).toBeCloseTo(0.271, 3);
    for (const item of threshold.included) expect(item.relevance).toBeGreaterThanOrEqual(threshold.threshold);
    for (const item of threshold.excluded) expect(item.relevance ?? 0).toBeLessThan(threshold.threshold);
    const precise = await scoreJson('--mode', 'precise');
    const balanced = await scoreJson();
    expect(precise.included.length).toBeLessThan(balanced.included.length);
  });

  it('prints a readable table by default and honours --threshold', async () => {
    const { stdout } = await run('node', [...cli, 'score'], { maxBuffer: 1 << 24 });
    expect(stdout).toMatch(/decision: operating point balanced \(beta 3, shift -0\.75\)/);
    const high = await run('node', [...cli, 'score', '--threshold', '0.99'], { maxBuffer: 1 << 24 });
    expect(high.stdout).toMatch(/decision: threshold 0\.99/);
    expect(high.stdout).toMatch(/kept 0 of 20/);
  });

  it('refuses an unknown --mode, and --threshold with an operating point', async () => {
    await expect(run('node', [...cli, 'score', '--mode', 'loose'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(
        /RG_ERR_INVALID_ARGUMENT: --mode must be one of precise, balanced, related, threshold/,
      ),
    });
    await expect(run('node', [...cli, 'score', '--mode', 'precise', '--threshold', '0.5'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/cannot be combined with --mode precise/),
    });
  });

  it('--operating-points decides by a fit-points file, and refuses one fitted for another model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rg-score-points-'));
    const shipped = await scoreJson();
    const { stdout } = await run('node', [
      ...cli,
      'fit-points',
      '--collection',
      join('..', 'shared', 'data', 'med'),
      '--collection',
      join('..', 'shared', 'data', 'cisi'),
      '--queries',
      'all',
      '--no-progress',
      '--out',
      join(dir, 'points.json'),
    ]);
    expect(stdout).toMatch(/\| cisi \| balanced \|/);
    const points = JSON.parse(readFileSync(join(dir, 'points.json'), 'utf8')) as {
      points: { balanced: { beta: number; shift: number } };
    };
    const fitted = await scoreJson('--operating-points', join(dir, 'points.json'));
    expect(fitted.mode).toBe('balanced');
    const table = await run('node', [...cli, 'score', '--operating-points', join(dir, 'points.json')]);
    expect(table.stdout).toContain(
      `operating point balanced (beta ${points.points.balanced.beta}, shift ${points.points.balanced.shift})`,
    );
    expect(fitted.stats.retrieved).toBe(shipped.stats.retrieved);
    writeFileSync(
      join(dir, 'other.json'),
      readFileSync(join(dir, 'points.json'), 'utf8').replace(/"model": "[^"]+"/, '"model": "fastpath/other"'),
    );
    await expect(run('node', [...cli, 'score', '--operating-points', join(dir, 'other.json')])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(
        /RG_ERR_OPERATING_POINTS_MODEL_MISMATCH: operating points were fitted for model "fastpath\/other"/,
      ),
    });
  }, 60_000);

  it('--cross-encoder gates with a cross-encoder folder, by its operating points when it has them', async () => {
    const { writeCrossEncoderModelDir } = await import('../../src/tooling/model-gen/index.js');
    const dir = mkdtempSync(join(tmpdir(), 'rg-score-ce-'));
    const model = await writeCrossEncoderModelDir(join(dir, 'ce'), 'minilm-l6', {
      seed: 3,
      layers: 2,
      hidden: 64,
      tokenizerDir: tokenizerFolder('ms-marco-MiniLM-L-6-v2'),
    });
    const plain = await scoreJson('--cross-encoder', model.dir);
    expect(plain.mode).toBe('threshold');
    expect(plain.stats.retrieved).toBe(20);
    expect(plain.stats.scored).toBe(20);
    expect(plain.included.every((i) => i.relevance >= 0.5)).toBe(true);
    expect(plain.excluded.every((i) => (i.relevance ?? 0) < 0.5)).toBe(true);
    await expect(run('node', [...cli, 'score', '--cross-encoder', model.dir, '--model', 'x'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/--model and --stats are fast-path options/),
    });
  });

  it('refuses a malformed request file with a typed error and exit code 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rg-score-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ query: 42, passages: [] }));
    await expect(run('node', [...cli, 'score', '--request', file])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/RG_ERR_INVALID_ARGUMENT: .*"query" must be a string/),
    });
  });
});
