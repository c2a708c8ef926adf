import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { boundText, DEFAULT_FEATURE_PASSAGE_CHARS } from '../../src/features/featurizer.js';
import { loadFastPathScorer } from '../../src/tiers/fast-path/fast-path-scorer.js';

const scorer = await loadFastPathScorer(undefined, { maxPassageChars: 1000, maxRequestChars: 50_000 });
const query = 'boundary layer transition on a swept wing';
const sentence = 'the boundary layer on a swept wing becomes turbulent near the leading edge at high speed. ';

describe('bounded passage text', () => {
  it('leaves text within the limit untouched and cuts longer text at the last space before it', () => {
    expect(boundText('short text', 100)).toBe('short text');
    const long = sentence.repeat(50);
    const cut = boundText(long, 1000);
    expect(cut.length).toBeLessThanOrEqual(1000);
    expect(cut).toBe(long.slice(0, long.lastIndexOf(' ', 1000)));
    // No space within reach: a hard cut at the limit.
    expect(boundText('x'.repeat(5000), 1000)).toBe('x'.repeat(1000));
  });

  it('never splits a surrogate pair', () => {
    const emoji = '😀'.repeat(1000); // 2000 UTF-16 units, no spaces
    const cut = boundText(emoji, 999);
    expect(cut.length).toBe(998);
    expect(cut).toBe('😀'.repeat(499));
  });

  it('a passage longer than the limit scores exactly like its cut prefix; shorter ones are unchanged', () => {
    const long = sentence.repeat(40); // 3,640 characters
    const prefix = long.slice(0, long.lastIndexOf(' ', 1000));
    const rows = scorer.features(query, [
      { id: 'long', text: long },
      { id: 'prefix', text: prefix },
      { id: 'short', text: sentence },
    ]);
    const width = rows.length / 3;
    expect(Array.from(rows.subarray(0, width))).toEqual(Array.from(rows.subarray(width, 2 * width)));
    const unbounded = scorer.features(query, [{ id: 'short', text: sentence }]);
    expect(Array.from(rows.subarray(2 * width))).toEqual(Array.from(unbounded));
  });

  it('huge passages cost only what the cut keeps', async () => {
    const scorerDefault = await loadFastPathScorer();
    const huge = sentence.repeat(Math.ceil((40 * 1024 * 1024) / sentence.length)); // 40 MB of text
    const results = await scorerDefault.score(query, [
      { id: 'huge', text: huge },
      { id: 'normal', text: sentence },
    ]);
    expect(results).toHaveLength(2);
    // Uncut, 40 MB took tens of seconds of extraction; cut to 64 Ki characters it is a normal pair:
    // the features are those of the cut text.
    const [cutRow] = [
      scorerDefault.features(query, [{ id: 'c', text: boundText(huge, DEFAULT_FEATURE_PASSAGE_CHARS) }]),
    ];
    expect(Array.from(scorerDefault.features(query, [{ id: 'huge', text: huge }]))).toEqual(Array.from(cutRow));
  });

  it('a request over maxRequestChars after cutting is a typed error', () => {
    const passages = Array.from({ length: 60 }, (_, i) => ({ id: `p${i}`, text: sentence.repeat(12) }));
    expect(() => scorer.features(query, passages)).toThrow(InvalidArgumentError);
  });
});
