import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { specificationVersionAt } from '../../src/adapters/ai-sdk/detect-version.js';

function appWithAi(version: string | undefined): string {
  const app = mkdtempSync(join(tmpdir(), 'rg-ai-version-'));
  if (version !== undefined) {
    const pkg = join(app, 'node_modules', 'ai');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'ai', version, exports: { './package.json': './package.json', '.': './index.js' } }),
    );
  }
  return app;
}

describe('the reranking specification follows the application’s ai package', () => {
  it('ai 6 gets V3, ai 7 (and no ai at all) V4', () => {
    expect(specificationVersionAt(appWithAi('6.0.326'))).toBe('v3');
    expect(specificationVersionAt(appWithAi('7.0.173'))).toBe('v4');
    expect(specificationVersionAt(appWithAi(undefined))).toBe('v4');
  });
});
