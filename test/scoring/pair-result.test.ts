import { describe, expect, it } from 'vitest';
import { isUsablePairResult, pairResultProblem } from '../../src/scoring/pair-result.js';
import type { ScorerPairResult } from '../../src/types.js';

const ROWS: Array<[string, unknown, ReturnType<typeof pairResultProblem>]> = [
  ['plain probabilities', { relevant: 0.4 }, undefined],
  ['several signals at the bounds', { relevant: 0, evidence: 1 }, undefined],
  ['an empty record', {}, undefined],
  ['detailed with raw and tier', { probabilities: { relevant: 0.7 }, raw: { relevant: 1.2 }, tier: 'x' }, undefined],
  ['detailed without raw', { probabilities: { relevant: 0.7 } }, undefined],
  ['null', null, 'scorer-null'],
  ['undefined', undefined, 'scorer-null'],
  ['a number', 0.5, 'invalid-signal'],
  ['a string', 'relevant', 'invalid-signal'],
  ['probability above 1', { relevant: 1.01 }, 'invalid-signal'],
  ['negative probability', { relevant: -0.01 }, 'invalid-signal'],
  ['NaN probability', { relevant: Number.NaN }, 'invalid-signal'],
  ['string probability', { relevant: '0.5' }, 'invalid-signal'],
  ['detailed with a bad probability', { probabilities: { relevant: 2 } }, 'invalid-signal'],
  ['detailed with infinite raw', { probabilities: { relevant: 0.5 }, raw: { relevant: Infinity } }, 'invalid-signal'],
  ['detailed with raw not a record', { probabilities: { relevant: 0.5 }, raw: 3 }, 'invalid-signal'],
  ['detailed with a numeric tier', { probabilities: { relevant: 0.5 }, tier: 2 }, 'invalid-signal'],
];

describe('pairResultProblem', () => {
  it.each(ROWS)('%s', (_name, value, expected) => {
    expect(pairResultProblem(value as ScorerPairResult | undefined)).toBe(expected);
    expect(isUsablePairResult(value as ScorerPairResult | undefined)).toBe(expected === undefined);
  });
});
