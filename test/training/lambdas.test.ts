import { describe, expect, it } from 'vitest';
import { computeLambdas, idealDcg } from '../../src/tooling/training/lambdas.js';

const log2 = Math.log2;

describe('LambdaMART gradients', () => {
  it('match a hand computation on a three-candidate query with tied scores', () => {
    // grades 2, 0, 1; equal scores keep row order, so positions are 0, 1, 2; ρ = 1/2 for every pair.
    const grades = Int32Array.from([2, 0, 1]);
    const lambdas = new Float64Array(3);
    const weights = new Float64Array(3);
    computeLambdas(
      [0, 0, 0],
      grades,
      [{ offset: 0, count: 3, weight: 1 }],
      { sigma: 1, truncation: Infinity },
      lambdas,
      weights,
    );
    const idcg = 2 / log2(2) + 1 / log2(3); // ideal order 2, 1, 0
    const d01 = (2 * (1 - 1 / log2(3))) / idcg; // swap rows 0 and 1
    const d02 = (1 * (1 - 1 / log2(4))) / idcg; // swap rows 0 and 2: gain difference 2 - 1
    const d12 = (1 * (1 / log2(3) - 1 / log2(4))) / idcg; // swap rows 1 and 2: row 2 is the more relevant
    expect(lambdas[0]).toBeCloseTo(0.5 * d01 + 0.5 * d02, 12);
    expect(lambdas[1]).toBeCloseTo(-0.5 * d01 - 0.5 * d12, 12);
    expect(lambdas[2]).toBeCloseTo(-0.5 * d02 + 0.5 * d12, 12);
    expect(weights[0]).toBeCloseTo(0.25 * (d01 + d02), 12);
    expect(weights[1]).toBeCloseTo(0.25 * (d01 + d12), 12);
    expect(weights[2]).toBeCloseTo(0.25 * (d02 + d12), 12);
    expect(idealDcg(grades, 0, 3)).toBeCloseTo(idcg, 12);
  });

  it('use the current ranking, σ and the RankNet probability', () => {
    // Scores put the irrelevant row first: ranking = row 1 (grade 0), row 0 (grade 1).
    const lambdas = new Float64Array(2);
    const weights = new Float64Array(2);
    computeLambdas(
      [0.5, 1.5],
      Int32Array.from([1, 0]),
      [{ offset: 0, count: 2, weight: 1 }],
      { sigma: 2, truncation: Infinity },
      lambdas,
      weights,
    );
    const deltaZ = 1 * (1 - 1 / log2(3)); // idcg = 1
    const rho = 1 / (1 + Math.exp(2 * (0.5 - 1.5)));
    expect(lambdas[0]).toBeCloseTo(2 * deltaZ * rho, 12);
    expect(lambdas[1]).toBeCloseTo(-2 * deltaZ * rho, 12);
    expect(weights[0]).toBeCloseTo(4 * deltaZ * rho * (1 - rho), 12);
    expect(weights[1]).toBeCloseTo(weights[0]!, 15);
  });

  it('sum to zero per query, scale with the query weight, skip queries without relevant rows and respect truncation', () => {
    const grades = Int32Array.from([0, 0, 0, 1, 0, 3, 0, 2]);
    const scores = [0.1, -0.2, 0.3, 0.2, 0.9, -0.4, 0.05, 0.3];
    const queries = [
      { offset: 0, count: 3, weight: 1 }, // nothing relevant
      { offset: 3, count: 5, weight: 2 },
    ];
    const lambdas = new Float64Array(8);
    const weights = new Float64Array(8);
    computeLambdas(scores, grades, queries, { sigma: 1, truncation: Infinity }, lambdas, weights);
    expect([...lambdas.subarray(0, 3)]).toEqual([0, 0, 0]);
    expect(lambdas.subarray(3).reduce((a, b) => a + b, 0)).toBeCloseTo(0, 12);
    expect(lambdas[5]).toBeGreaterThan(0); // grade 3 ranked last should move up
    expect(lambdas[4]).toBeLessThan(0); // irrelevant row ranked first should move down

    const single = new Float64Array(8);
    computeLambdas(
      scores,
      grades,
      [{ ...queries[1]!, weight: 1 }],
      { sigma: 1, truncation: Infinity },
      single,
      new Float64Array(8),
    );
    for (let i = 3; i < 8; i++) expect(lambdas[i]).toBeCloseTo(2 * single[i]!, 12);

    // truncation 1: only pairs involving the top-ranked row (row 4, score 0.9) count.
    const top = new Float64Array(8);
    computeLambdas(scores, grades, queries, { sigma: 1, truncation: 1 }, top, new Float64Array(8));
    expect(top[4]).toBeLessThan(0);
    expect(top[6]).toBe(0); // grade 0 below the top: its only pair with the top row is grade 0 vs grade 0
    expect(top[3]! + top[5]! + top[7]!).toBeCloseTo(-top[4]!, 12);
  });

  it('refuses bad options and rows outside the arrays', () => {
    const l = new Float64Array(2);
    const w = new Float64Array(2);
    expect(() =>
      computeLambdas([0, 0], [1, 0], [{ offset: 0, count: 2, weight: 1 }], { sigma: 0, truncation: Infinity }, l, w),
    ).toThrow(/sigma/);
    expect(() =>
      computeLambdas([0, 0], [1, 0], [{ offset: 1, count: 2, weight: 1 }], { sigma: 1, truncation: Infinity }, l, w),
    ).toThrow(/outside/);
  });
});
