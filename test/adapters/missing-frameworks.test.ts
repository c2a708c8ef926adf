import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { LANGCHAIN_PACKAGES, loadLangChainModule } from '../../src/adapters/langchain/load.js';
import { MissingDependencyError } from '../../src/index.js';

const run = promisify(execFile);
const FIXTURES = join(import.meta.dirname, 'fixtures');
const FRAMEWORKS = ['@langchain/core', '@langchain/classic', 'ai', '@ai-sdk/provider', '@ai-sdk/provider-utils'];

/** Imports `entry` in a fresh Node process in which `hidden` packages are not installed. */
async function importWithout(entry: string, hidden: readonly string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      join(FIXTURES, 'hide-packages.mjs'),
      join(FIXTURES, 'use-without-frameworks.ts'),
      entry,
    ],
    { env: { ...process.env, RG_HIDE_PACKAGES: hidden.join(',') }, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

describe('framework packages are optional', () => {
  it('relevance-gate/langchain without @langchain/core: MissingDependencyError naming the package', async () => {
    const report = await importWithout('src/adapters/langchain/index.ts', FRAMEWORKS);
    expect(report.loaded).toBe(false);
    expect(report.error).toMatchObject({
      name: 'MissingDependencyError',
      code: 'RG_ERR_MISSING_DEPENDENCY',
      packageName: '@langchain/core',
    });
    expect((report.error as { message: string }).message).toContain('npm install @langchain/core');
    expect((report.error as { message: string }).message).toContain('relevance-gate/langchain');
  });

  it('the same entry loads when only the other frameworks are missing', async () => {
    const report = await importWithout(
      'src/adapters/langchain/index.ts',
      FRAMEWORKS.filter((p) => p !== '@langchain/core'),
    );
    expect(report).toMatchObject({ loaded: true });
    expect(report.exports).toContain('RelevanceGateCompressor');
  });

  it('relevance-gate/ai-sdk loads and reranks with neither ai nor @ai-sdk/provider installed', async () => {
    const report = await importWithout('src/adapters/ai-sdk/index.ts', FRAMEWORKS);
    expect(report.loaded).toBe(true);
    // relevant = length / 10: 'abcdefgh' passes the default threshold 0.5, 'abc' does not.
    expect(report.rerank).toMatchObject({
      ranking: [{ index: 1, relevanceScore: 0.8 }],
      providerMetadata: { 'relevance-gate': { documents: [{ index: 0, route: 'excluded' }, { index: 1 }] } },
    });
  });

  it('the package root (with buildContext) loads none of them', async () => {
    for (const entry of ['src/index.ts', 'src/context/index.ts']) {
      const report = await importWithout(entry, FRAMEWORKS);
      expect(report, entry).toMatchObject({ loaded: true });
    }
  });

  it('the loader turns only a missing @langchain/core into MissingDependencyError', async () => {
    expect(LANGCHAIN_PACKAGES).toEqual(['@langchain/core']);
    const missing = Object.assign(new Error("Cannot find package '@langchain/core' imported from /app/x.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const error = await loadLangChainModule(() => Promise.reject(missing)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingDependencyError);
    expect(error).toMatchObject({ packageName: '@langchain/core', cause: missing });
    const other = Object.assign(new Error("Cannot find package 'left-pad' imported from /app/x.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    await expect(loadLangChainModule(() => Promise.reject(other))).rejects.toBe(other);
    const broken = new SyntaxError('Unexpected token');
    await expect(loadLangChainModule(() => Promise.reject(broken))).rejects.toBe(broken);
    await expect(loadLangChainModule(async () => 42)).resolves.toBe(42);
  });
});
