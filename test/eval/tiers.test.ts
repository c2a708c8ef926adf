import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EVAL_TIERS, isRelevanceCrossEncoder, loadEvalTier } from '../../src/tooling/eval/tiers.js';
import { loadCollection } from '../../src/tooling/eval/collection.js';
import { InvalidArgumentError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-eval-tiers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('eval tiers', () => {
  it('offers fast-path, cross-encoder and embedding and refuses others', async () => {
    expect(EVAL_TIERS).toEqual(['fast-path', 'cross-encoder', 'embedding']);
    const collection = loadCollection(join(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'med'));
    await expect(loadEvalTier({ tier: 'bm25', model: dir, collection })).rejects.toThrow(InvalidArgumentError);
  });

  it('labels speed/shape cross-encoders (random weights) as not relevance models', () => {
    const speed = join(dir, 'speed');
    const real = join(dir, 'real');
    for (const d of [speed, real]) mkdirSync(d);
    writeFileSync(
      join(speed, 'config.json'),
      JSON.stringify({ relevance_gate: { kind: 'speed/shape model, random weights, NOT a relevance model' } }),
    );
    writeFileSync(join(real, 'config.json'), JSON.stringify({ architectures: ['BertForSequenceClassification'] }));
    expect(isRelevanceCrossEncoder(speed)).toBe(false);
    expect(isRelevanceCrossEncoder(real)).toBe(true);
  });
});
