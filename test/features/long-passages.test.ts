import { describe, expect, it } from 'vitest';
import { FEATURE_NAMES, NUM_FEATURES } from '../../src/features/schema.js';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { extractFeatures, extractFeaturesAsync, featureRow } from '../../src/features/extract.js';
import { tokenize } from '../../src/features/tokenize.js';
import { text } from './long-text.js';

describe('very long passages', () => {
  // How the cost scales with length (linear, not quadratic) is measured by bench/long-passages.ts.
  it('extracts a 1 MB passage: every feature finite, the terms counted', async () => {
    const stats = await buildCorpusStats([{ text: text(10_000, 1) }]);
    const query = 'supersonic flow over a plate boundary layer with shock wave heat';
    const row = featureRow(extractFeatures(stats, query, [{ text: text(1 << 20, 7) }]), 0, FEATURE_NAMES);
    expect(row.body_length).toBeGreaterThan(100_000);
    expect(row.query_coverage).toBe(1);
    for (const name of FEATURE_NAMES.slice(0, -3)) expect(Number.isFinite(row[name]), name).toBe(true);
  });

  it('handles a 1 MB single token, 1 MB of emoji and 1 MB of CJK', async () => {
    const stats = await buildCorpusStats([{ text: 'a b c' }]);
    const giant = 'y'.repeat(1 << 20);
    expect(tokenize(giant)).toEqual([giant]);
    const emoji = '🚀'.repeat(1 << 18);
    const cjk = '東京'.repeat(1 << 18);
    const f = extractFeatures(stats, '東京 rocket', [{ text: giant }, { text: emoji }, { text: cjk }]);
    expect(f.length).toBe(3 * NUM_FEATURES);
    const rCjk = featureRow(f, 2, FEATURE_NAMES);
    expect(rCjk.body_length).toBe(1 << 19);
    expect(rCjk.longest_span).toBe(2);
    expect(featureRow(f, 1, FEATURE_NAMES).body_length).toBe(0);
  });

  it('runs large batches asynchronously with the same result', async () => {
    const stats = await buildCorpusStats([{ text: text(5_000, 3) }]);
    const passages = Array.from({ length: 200 }, (_, i) => ({ text: text(2_000, i + 1) }));
    const q = 'shock wave boundary layer';
    const a = await extractFeaturesAsync(stats, q, passages);
    expect(Array.from(a)).toEqual(Array.from(extractFeatures(stats, q, passages)));
  });
});
