import { describe, expect, it } from 'vitest';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import { tokenize } from '../../src/features/tokenize.js';

// Features must be a pure function of (stats, query, passage): the extractor's per-thread term
// cache must never make a pair's features depend on what was featurized before it.
describe('feature extraction is independent of call history', () => {
  it('a possessive form seen first does not change how the plain word is matched later', async () => {
    const stats = await buildCorpusStats([{ text: 'university catalog' }, { text: 'other words' }]);
    const fresh = new LexicalFeaturizer(stats).featurize('university', [{ id: 'a', text: 'the university catalog' }]);
    const f = new LexicalFeaturizer(stats);
    f.featurize('university', [{ id: 'b', text: "the university's catalog" }]);
    const after = f.featurize('university', [{ id: 'a', text: 'the university catalog' }]);
    expect(Array.from(after)).toEqual(Array.from(fresh));
    expect(after[3]).toBe(1); // query_coverage: the query term is present
  });

  it("stems a possessive word like the plain word (john's == john, university's == university)", () => {
    expect(tokenize("the university's catalog")).toEqual(tokenize('the university catalog'));
    expect(tokenize("Florida's universities")).toEqual(tokenize('florida universities'));
  });

  it('gives identical features for a batch regardless of what ran before, on shuffled inputs', async () => {
    const texts = [
      "the cell's membrane",
      'cell membranes',
      "membrane's cells",
      'cells',
      'membrane protein',
      "protein's fold",
    ];
    const stats = await buildCorpusStats(texts.map((text) => ({ text })));
    const passages = texts.map((text, i) => ({ id: String(i), text }));
    const reference = new LexicalFeaturizer(stats).featurize('cell membrane protein', passages);
    const f = new LexicalFeaturizer(stats);
    for (let round = 0; round < 5; round++) {
      const order = passages.map((_, i) => (i * (round + 2)) % passages.length);
      f.featurize(
        'membrane',
        order.map((i) => passages[i]!),
      );
    }
    expect(Array.from(f.featurize('cell membrane protein', passages))).toEqual(Array.from(reference));
  });
});
