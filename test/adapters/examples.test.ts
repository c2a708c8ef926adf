import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGate, type GateResult, loadFastPathScorer } from '../../src/index.js';

const run = promisify(execFile);
const request = JSON.parse(readFileSync('examples/request.json', 'utf8')) as {
  query: string;
  passages: Array<{ id: string; title: string; text: string }>;
};

/** Runs an example as the docs tell users to (npx tsx examples/X.ts) and returns its stdout lines. */
async function runExample(file: string): Promise<string[]> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', file], { timeout: 120_000 });
  return stdout.trim().split('\n');
}

/** `id<TAB>score…` lines of an example's output. */
function rankedLines(lines: readonly string[]): Array<[string, number]> {
  return lines
    .map((l) => l.split('\t'))
    .filter((cols) => cols.length >= 2 && /^\d+$/.test(cols[0]) && /^\d\.\d{3}$/.test(cols[1]))
    .map((cols) => [cols[0], Number(cols[1])]);
}

let expected: GateResult;

beforeAll(async () => {
  const scorer = await loadFastPathScorer();
  const gate = createGate({ scorer, policy: { threshold: scorer.recommendedThreshold ?? 0.5 } });
  expected = await gate.filter(
    request.query,
    request.passages.map((p) => ({ id: p.id, text: p.text })),
  );
});

describe('examples run as written', () => {
  it('examples/langchain.ts prints the gate’s kept documents in its order, then the gated prompt', async () => {
    const lines = await runExample('examples/langchain.ts');
    expect(lines[0]).toBe(`kept ${expected.included.length} of ${request.passages.length} documents`);
    expect(rankedLines(lines)).toEqual(expected.included.map((i) => [i.id, Number(i.score?.toFixed(3))]));
    expect(lines.find((l) => l.startsWith('prompt: '))).toMatch(/^prompt: [1-9]\d* accepted, 0 conflicting/);
    expect(lines).toContain('<accepted_evidence>');
  });

  it('examples/ai-sdk.ts prints rerank()’s top 5, which are the gate’s top 5', async () => {
    const lines = await runExample('examples/ai-sdk.ts');
    expect(lines[0]).toBe(`gate kept ${expected.included.length} of ${request.passages.length}; top 5:`);
    expect(rankedLines(lines)).toEqual(
      // rerank()'s score is what the gate's order is by: the shipped model's ranking signal
      expected.included.slice(0, 5).map((i) => [i.id, Number(i.score?.toFixed(3))]),
    );
  });
});
