/**
 * `serve --cross-encoder` without a folder serves the default cascade over the package's trained
 * cross-encoder; with a folder (or `shipped`) it serves that one. Checked on the resolved
 * configuration (`--print-config`), which is what the server starts from.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SHIPPED_CROSS_ENCODER_MODEL_DIR } from '../../src/tiers/cross-encoder/shipped-model.js';
import { packageRoot } from '../../src/util/package-root.js';

const run = promisify(execFile);

async function printConfig(args: readonly string[]): Promise<{ models: Record<string, Record<string, unknown>> }> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', join(packageRoot(), 'src', 'cli', 'main.ts'), 'serve', '--print-config', ...args],
    { cwd: packageRoot() },
  );
  return JSON.parse(stdout) as { models: Record<string, Record<string, unknown>> };
}

describe('serve --cross-encoder', () => {
  it('without a folder: the shipped model, and the cascade router over the fast path and it', async () => {
    const { models } = await printConfig(['--cross-encoder']);
    expect(models['cross-encoder']).toEqual({ type: 'cross-encoder', dir: SHIPPED_CROSS_ENCODER_MODEL_DIR });
    expect(models.cascade).toEqual({ type: 'router', tiers: ['fast-path', 'cross-encoder'], routing: 'cascade' });
  });

  it('without a folder before another flag, with `shipped`, and with a folder', async () => {
    const before = await printConfig(['--cross-encoder', '--routing', 'budget']);
    expect(before.models['cross-encoder']?.dir).toBe(SHIPPED_CROSS_ENCODER_MODEL_DIR);
    expect(before.models.budget).toEqual({ type: 'router', tiers: ['fast-path', 'cross-encoder'], routing: 'budget' });
    const named = await printConfig(['--cross-encoder', 'shipped']);
    expect(named.models['cross-encoder']?.dir).toBe(SHIPPED_CROSS_ENCODER_MODEL_DIR);
    const folder = await printConfig(['--cross-encoder', 'models/fast-path-lexical']);
    expect(folder.models['cross-encoder']?.dir).toBe(join(packageRoot(), 'models', 'fast-path-lexical'));
  });

  it('is absent unless asked for: the default server is the fast path alone', async () => {
    const { models } = await printConfig([]);
    expect(Object.keys(models)).toEqual(['fast-path']);
  });
}, 60_000);
