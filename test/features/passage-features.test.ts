import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { NUM_FEATURES } from '../../src/features/schema.js';
import { loadFastPathScorer } from '../../src/tiers/fast-path/fast-path-scorer.js';
import { isDetailedPairScore, type Passage, type ScorerPairResult } from '../../src/types.js';

const scorer = await loadFastPathScorer();
const query = 'transduction in bacillus subtilis';

function row(seed: number): number[] {
  return Array.from({ length: NUM_FEATURES }, (_, j) => ((seed * 31 + j * 7) % 13) / 4);
}

function margin(result: ScorerPairResult | undefined): number {
  if (result === undefined || result === null || !isDetailedPairScore(result)) throw new Error('no detailed score');
  return result.raw!.relevant!;
}

describe('passage.features accepted forms', () => {
  it('a dense row scores the same as an array, a Float32Array, a Float64Array or an Int32Array of its values', async () => {
    const values = row(3).map((v) => Math.round(v)); // integral, so every typed array holds the same numbers
    const forms: Passage['features'][] = [
      values,
      Float32Array.from(values),
      Float64Array.from(values),
      Int32Array.from(values) as unknown as Float64Array,
    ];
    const passages = forms.map((features, i) => ({ id: `p${i}`, text: 'unrelated text', features }));
    const results = await scorer.score(query, passages);
    const margins = results.map(margin);
    for (const m of margins) expect(m).toBe(margins[0]);
    // And the row is really used: without features the same text scores differently.
    const [plain] = await scorer.score(query, [{ id: 'x', text: 'unrelated text' }]);
    expect(margin(plain)).not.toBe(margins[0]);
  });

  it('a typed array of the wrong length is refused with a typed error, whatever its element type', () => {
    for (const features of [
      new Float64Array(NUM_FEATURES - 1),
      new Float32Array(NUM_FEATURES + 1),
      new Int32Array(3),
    ]) {
      expect(() => scorer.features(query, [{ id: 'p', text: 't', features: features as Float64Array }])).toThrow(
        InvalidArgumentError,
      );
    }
  });

  it('records may hold only the passthrough features; anything else is a typed error, not silently ignored', () => {
    const bad: unknown[] = [
      { retreival_score: 3 },
      new Map([['retrieval_score', 3]]),
      new DataView(new ArrayBuffer(8)),
      new BigInt64Array(NUM_FEATURES),
      'retrieval_score=3',
    ];
    for (const features of bad) {
      expect(() => scorer.features(query, [{ id: 'p', text: 't', features: features as Passage['features'] }])).toThrow(
        InvalidArgumentError,
      );
    }
    const ok = scorer.features(query, [{ id: 'p', text: 't', features: { retrieval_rank: 2 } }]);
    expect(ok.length).toBe(NUM_FEATURES);
  });
});
