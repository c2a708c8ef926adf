/** The shared checks the gate (and eval, training, tiers) validate with: src/util. */
import { describe, expect, it } from 'vitest';
import { createGate, InvalidArgumentError, InvalidPolicyError } from '../../src/index.js';
import { isScorer } from '../../src/util/is-scorer.js';
import { sigmoid } from '../../src/util/sigmoid.js';
import {
  integerInRange,
  nonNegativeInteger,
  nonNegativeLimit,
  nonNegativeNumber,
  positiveFraction,
  positiveInteger,
  positiveLimit,
  positiveNumber,
  probability,
  finiteNumber,
} from '../../src/util/validate-options.js';
import { tableScorer } from './helpers.js';

describe('sigmoid', () => {
  it('is 1 / (1 + e^−x) bit for bit where e^−x is finite, and e^x below that', () => {
    for (const x of [-700, -37.5, -3, -0.25, 0, 1e-9, 0.75, 4, 36, 800])
      expect(sigmoid(x)).toBe(1 / (1 + Math.exp(-x)));
    expect(sigmoid(0)).toBe(0.5);
    // Where e^−x overflows, the naive form collapses to 0; σ(x) = e^x there.
    expect(1 / (1 + Math.exp(720))).toBe(0);
    expect(sigmoid(-720)).toBe(Math.exp(-720));
    expect(sigmoid(-720)).toBeGreaterThan(0);
    expect(sigmoid(-800)).toBe(0);
    expect(sigmoid(Number.NEGATIVE_INFINITY)).toBe(0);
    expect(sigmoid(Number.POSITIVE_INFINITY)).toBe(1);
    expect(Number.isNaN(sigmoid(Number.NaN))).toBe(true);
    expect(sigmoid(-30) + sigmoid(30)).toBeCloseTo(1, 15);
    let previous = -1;
    for (let x = -750; x <= 750; x += 0.5) {
      const p = sigmoid(x);
      expect(p).toBeGreaterThanOrEqual(previous);
      previous = p;
    }
  });
});

describe('isScorer', () => {
  it('needs a non-empty id and score(); signals, when given, an array of non-empty strings', () => {
    const score = async () => [];
    expect(isScorer({ id: 'm', score })).toBe(true);
    expect(isScorer({ id: 'm', score, signals: ['relevant'] })).toBe(true);
    expect(isScorer({ id: '', score })).toBe(false);
    expect(isScorer({ id: 'm' })).toBe(false);
    expect(isScorer(null)).toBe(false);
    expect(isScorer({ id: 'm', score, signals: 'relevant' })).toBe(false);
    expect(isScorer({ id: 'm', score, signals: [''] })).toBe(false);
    expect(() => createGate({ scorer: { ...tableScorer({}), signals: [3] } as never })).toThrow(/config\.scorer/);
  });
});

describe('option validators', () => {
  it('accept exactly their kind and refuse the rest with one message style', () => {
    const cases: Array<[(n: string, v: unknown) => number, unknown[], unknown[], string]> = [
      [
        positiveInteger,
        [1, 7, 2 ** 40],
        [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3', null],
        'an integer ≥ 1',
      ],
      [nonNegativeInteger, [0, 3], [-1, 0.5, Number.NaN, '0'], 'an integer ≥ 0'],
      [probability, [0, 0.5, 1], [-0.01, 1.01, Number.NaN, '0.5'], 'a number in [0, 1]'],
      [finiteNumber, [-3, 0, 1e300], [Number.NaN, Number.POSITIVE_INFINITY, '1'], 'a finite number'],
      [positiveNumber, [1e-9, 3], [0, -1, Number.POSITIVE_INFINITY, Number.NaN], 'a finite number > 0'],
      [nonNegativeNumber, [0, 2.5], [-1e-9, Number.POSITIVE_INFINITY, Number.NaN], 'a finite number ≥ 0'],
      [positiveFraction, [1e-9, 1], [0, 1.01, Number.NaN], 'a number in (0, 1]'],
      [nonNegativeLimit, [0, 5, Number.POSITIVE_INFINITY], [-1, Number.NaN], 'a number ≥ 0 (Infinity: no limit)'],
      [positiveLimit, [1, Number.POSITIVE_INFINITY], [0, -1, Number.NaN], 'a number > 0 (Infinity: never)'],
    ];
    for (const [check, good, bad, requirement] of cases) {
      for (const v of good) expect(check('opt', v)).toBe(v);
      for (const v of bad) {
        expect(() => check('opt', v)).toThrow(InvalidArgumentError);
        expect(() => check('opt', v)).toThrow(
          `opt must be ${requirement}, got ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`,
        );
      }
    }
    expect(integerInRange('k', 3, 1, 5)).toBe(3);
    expect(() => integerInRange('k', 6, 1, 5)).toThrow('k must be an integer in [1, 5], got 6');
  });

  it('policy options use the same validators, with the policy field in the message', () => {
    const scorer = tableScorer({});
    expect(() => createGate({ scorer, policy: { maxKept: 0 } })).toThrow(InvalidPolicyError);
    expect(() => createGate({ scorer, policy: { maxKept: 0 } })).toThrow(
      'policy.maxKept: must be an integer ≥ 1, got 0',
    );
    expect(() => createGate({ scorer, policy: { minKept: -1 } })).toThrow(
      'policy.minKept: must be an integer ≥ 0, got -1',
    );
    expect(() => createGate({ scorer, policy: { threshold: 1.5 } })).toThrow(
      'policy.threshold: must be a number in [0, 1], got 1.5',
    );
    expect(() => createGate({ scorer, maxPassages: 2.5 })).toThrow(
      'config.maxPassages must be an integer ≥ 1, got 2.5',
    );
  });
});
