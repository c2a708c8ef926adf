import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const FIXTURES = join(import.meta.dirname, 'fixtures');
const LLAMAINDEX = ['llamaindex', '@llamaindex/core', '@llamaindex/cohere', '@llamaindex/env'];

/** Imports `entry` in a fresh Node process in which the LlamaIndex packages are not installed. */
async function importWithoutLlamaIndex(entry: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      join(FIXTURES, 'hide-packages.mjs'),
      join(FIXTURES, 'use-llamaindex-without-packages.ts'),
      entry,
    ],
    { env: { ...process.env, RG_HIDE_PACKAGES: LLAMAINDEX.join(',') }, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

describe('the LlamaIndex packages are optional', () => {
  it('relevance-gate/llamaindex loads and gates nodes with no LlamaIndex package installed', async () => {
    const report = await importWithoutLlamaIndex('src/adapters/llamaindex/index.ts');
    expect(report.loaded).toBe(true);
    expect(report.exports).toContain('RelevanceGatePostprocessor');
    // relevant = length / 10: 'abcdefgh' passes the default threshold 0.5, 'abc' does not.
    expect(report.nodes).toEqual([
      { id: 'b', score: 0.8, decision: expect.objectContaining({ route: 'included', rule: 'threshold' }) },
    ]);
  });

  it('the package root (with buildContext) loads none of them', async () => {
    for (const entry of ['src/index.ts', 'src/context/index.ts']) {
      const report = await importWithoutLlamaIndex(entry);
      expect(report, entry).toMatchObject({ loaded: true });
    }
  });
});
