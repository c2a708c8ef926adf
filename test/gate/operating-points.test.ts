import { describe, expect, it } from 'vitest';
import { createGate, InvalidPolicyError, rerouteResult, type GatePolicy } from '../../src/index.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type OperatingPoint,
  type OperatingPoints,
  modelIdOf,
  operatingPointCut,
  operatingPointThreshold,
} from '../../src/gate/policies/operating-points.js';
import { OPERATING_POINTS_FILE, parseOperatingPointsFile } from '../../src/operating-points/file.js';
import { loadFastPathScorer } from '../../src/tiers/fast-path/fast-path-scorer.js';
import { packageRoot } from '../../src/util/package-root.js';
import { ids, passages, relevanceScorer } from './helpers.js';

const point = (beta: number, shift = 0, floor = 0): OperatingPoint => ({ beta, shift, floor });

/** Brute force: the cut (1..n of the descending list) with the highest expected F_beta; ties the shortest. */
function bruteForceCut(p: OperatingPoint, relevances: readonly number[]): number {
  const sorted = [...relevances].sort((a, b) => b - a);
  const q = sorted.map((r) => {
    const c = Math.min(Math.max(r, 1e-9), 1 - 1e-9);
    return 1 / (1 + Math.exp(-(Math.log(c / (1 - c)) + p.shift)));
  });
  const total = q.reduce((a, b) => a + b, 0);
  const b2 = p.beta * p.beta;
  let best = -1;
  let bestValue = Number.NEGATIVE_INFINITY;
  for (let k = 1; k <= sorted.length; k++) {
    if (sorted[k - 1]! < p.floor) break;
    const value = ((1 + b2) * q.slice(0, k).reduce((a, b) => a + b, 0)) / (k + b2 * total);
    if (value > bestValue) {
      bestValue = value;
      best = k;
    }
  }
  return best < 0 ? Number.NaN : sorted[best - 1]!;
}

/** The shipped model's points: the operating-points file beside its files. */
const SHIPPED_FILE = parseOperatingPointsFile(
  JSON.parse(readFileSync(join(packageRoot(), 'models', 'fast-path-lexical', OPERATING_POINTS_FILE), 'utf8')),
);
const SHIPPED_MODEL_ID = SHIPPED_FILE.model;
const SHIPPED_POINTS = SHIPPED_FILE.points;
const LIST = [0.9, 0.5, 0.4, 0.2, 0.05, 0.02];

describe('operatingPointThreshold (expected-F_beta cut of the list)', () => {
  it('picks the cut by hand-computed expected F for beta 0.5, 1 and 2', () => {
    // S = 2.0; beta 1: k=3 → 2·1.8/(3+2) = 0.72 beats k=2 (0.7179) and k=4 (0.667).
    expect(operatingPointThreshold(point(1), [0.9, 0.5, 0.4, 0.2])).toBe(0.4);
    // beta 0.5: k=1 → 1.25·0.9/(1+0.5) = 0.75 beats k=2 (1.25·1.4/2.5 = 0.70).
    expect(operatingPointThreshold(point(0.5), [0.9, 0.5, 0.4, 0.2])).toBe(0.9);
    // beta 2: k=4 → 5·2.0/(4+8) = 0.833 beats k=3 (5·1.8/11 = 0.818).
    expect(operatingPointThreshold(point(2), [0.2, 0.4, 0.9, 0.5])).toBe(0.2);
  });

  it('matches a brute-force search on random lists, for every beta, shift and floor', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let t = 0; t < 300; t++) {
      const n = 1 + Math.floor(random() * 25);
      const list = Array.from({ length: n }, () => Math.round(random() * 1000) / 1000);
      const p = point([0.25, 0.5, 1, 2, 4][t % 5]!, -3 + (t % 13) * 0.5, t % 7 === 0 ? 0.5 : 0);
      const expected = bruteForceCut(p, list);
      const got = operatingPointThreshold(p, list);
      if (Number.isNaN(expected)) expect(list.every((r) => r < got)).toBe(true);
      else expect(got).toBe(expected);
    }
  });

  it('keeps the best pair at least, everything when the shift makes every pair likely, one when none is', () => {
    expect(operatingPointThreshold(point(1, -20), LIST)).toBe(0.9);
    expect(operatingPointThreshold(point(1, 20), LIST)).toBe(0.02);
    expect(operatingPointThreshold(point(1), [0.001])).toBe(0.001);
  });

  it('a higher beta never keeps fewer pairs; a floor above every relevance keeps none', () => {
    const a = operatingPointThreshold(point(0.5), LIST);
    const b = operatingPointThreshold(point(1), LIST);
    const c = operatingPointThreshold(point(2), LIST);
    expect(a).toBeGreaterThanOrEqual(b);
    expect(b).toBeGreaterThanOrEqual(c);
    const t = operatingPointThreshold(point(1, 0, 0.95), LIST);
    expect(LIST.filter((r) => r >= t)).toEqual([]);
    expect(operatingPointThreshold(point(1), [])).toBe(1);
  });

  it('depends on the list, not on its order; tied relevances are kept together', () => {
    expect(operatingPointThreshold(point(1), [...LIST].reverse())).toBe(operatingPointThreshold(point(1), LIST));
    const t = operatingPointThreshold(point(0.5), [0.8, 0.8, 0.1]);
    expect([0.8, 0.8, 0.1].filter((r) => r >= t)).toHaveLength(2);
  });
});

describe('operating points in the gate', () => {
  /** A scorer declaring the shipped points, as the loaded fast path does. */
  const shippedScorer = (values: readonly number[]) => ({
    ...relevanceScorer(values, `${SHIPPED_MODEL_ID}@stats/abc`),
    decisions: { operatingPoints: SHIPPED_POINTS },
  });

  it('the shipped model declares the points of the file beside it, whatever the statistics', async () => {
    expect(modelIdOf(`${SHIPPED_MODEL_ID}@stats/0123`)).toBe(SHIPPED_MODEL_ID);
    const scorer = await loadFastPathScorer();
    try {
      expect(modelIdOf(scorer.id)).toBe(SHIPPED_MODEL_ID);
      expect(scorer.decisions?.operatingPoints).toEqual(SHIPPED_POINTS);
      expect(scorer.decisions?.scoreCalibration).toEqual(SHIPPED_FILE.scoreCalibration);
      expect(createGate({ scorer }).mode).toBe('balanced');
    } finally {
      scorer.model.dispose();
    }
    // An id alone declares nothing: a scorer without `decisions` decides by the absolute threshold.
    expect(createGate({ scorer: relevanceScorer(LIST, `${SHIPPED_MODEL_ID}@stats/0123`) }).mode).toBe('threshold');
  });

  it('createGate({ scorer }) of a model with operating points decides by `balanced` on the scored list', async () => {
    const gate = createGate({ scorer: shippedScorer(LIST) });
    const r = await gate.filter('q', passages(LIST.length));
    const t = operatingPointThreshold(SHIPPED_POINTS.balanced, LIST);
    expect(r.stats.threshold).toBe(t);
    expect(ids(r.included)).toEqual(
      LIST.map((v, i) => [v, `p${i}`] as const)
        .filter(([v]) => v >= t)
        .map(([, id]) => id),
    );
    expect(r.included.every((i) => i.rule === 'threshold')).toBe(true);
    expect(r.stats.returned).toBeGreaterThan(0);
  });

  it('the same relevances at another scale give the same kept set (a relative decision)', async () => {
    const mine: OperatingPoints = {
      precise: point(0.5),
      balanced: point(1),
      related: point(2),
    };
    const low = LIST.map((v) => v / 3);
    const a = await createGate({ scorer: relevanceScorer(LIST), policy: { operatingPoints: mine } }).filter(
      'q',
      passages(LIST.length),
    );
    const b = await createGate({ scorer: relevanceScorer(low), policy: { operatingPoints: mine } }).filter(
      'q',
      passages(LIST.length),
    );
    // An absolute threshold would keep nothing of the low list; the relative cut still keeps its best.
    expect(b.stats.returned).toBeGreaterThan(0);
    expect(ids(b.included).slice(0, 1)).toEqual(ids(a.included).slice(0, 1));
  });

  it('each mode selects its operating point; reroute and rerouteResult re-decide without rescoring', async () => {
    const scorer = shippedScorer(LIST);
    const gate = createGate({ scorer });
    const r = await gate.filter('q', passages(LIST.length));
    for (const mode of ['precise', 'balanced', 'related'] as const) {
      const t = operatingPointThreshold(SHIPPED_POINTS[mode], LIST);
      const direct = await gate.filter('q', passages(LIST.length), { policy: { mode } });
      expect(direct.stats.threshold).toBe(t);
      const rerouted = gate.reroute(r, { mode });
      expect(ids(rerouted.included)).toEqual(ids(direct.included));
      // The standalone reroute knows only the result: the points come with the policy.
      expect(ids(rerouteResult(r, { mode, operatingPoints: SHIPPED_POINTS }).included)).toEqual(ids(direct.included));
    }
    expect(scorer.calls).toHaveLength(4);
    const precise = gate.reroute(r, { mode: 'precise' }).stats.returned;
    const related = gate.reroute(r, { mode: 'related' }).stats.returned;
    expect(precise).toBeLessThanOrEqual(related);
  });

  it('threshold options mean the absolute threshold; mode threshold says so explicitly', async () => {
    const gate = createGate({ scorer: shippedScorer(LIST), policy: { threshold: 0.45 } });
    const r = await gate.filter('q', passages(LIST.length));
    expect(r.stats.threshold).toBe(0.45);
    expect(ids(r.included)).toEqual(['p0', 'p1']);
    const explicit = await createGate({ scorer: shippedScorer(LIST), policy: { mode: 'threshold' } }).filter(
      'q',
      passages(LIST.length),
    );
    expect(explicit.stats.threshold).toBe(0.5);
    // An operating point asked for explicitly wins over the threshold options (as 'related' always did).
    const balanced = await gate.filter('q', passages(LIST.length), { policy: { mode: 'balanced' } });
    expect(balanced.stats.threshold).toBe(operatingPointThreshold(SHIPPED_POINTS.balanced, LIST));
  });

  it('scorers without operating points keep the absolute meaning of precise and related; balanced is refused', async () => {
    const scorer = relevanceScorer(LIST);
    const plain = await createGate({ scorer }).filter('q', passages(LIST.length));
    expect(plain.stats.threshold).toBe(0.5);
    const precise = await createGate({ scorer, policy: { mode: 'precise', threshold: 0.3 } }).filter(
      'q',
      passages(LIST.length),
    );
    expect(precise.stats.threshold).toBe(0.3);
    const related = await createGate({ scorer, policy: { mode: 'related' } }).filter('q', passages(LIST.length));
    expect(related.stats.threshold).toBe(0.25);
    expect(() => createGate({ scorer, policy: { mode: 'balanced' } })).toThrow(InvalidPolicyError);
    expect(() => createGate({ scorer, policy: { mode: 'balanced' } })).toThrow(/policy\.mode.*operating points/);
    // An explicit relatedThreshold keeps 'related' absolute for a model with operating points too.
    const legacy = await createGate({
      scorer: shippedScorer(LIST),
      policy: { mode: 'related', relatedThreshold: 0.3 },
    }).filter('q', passages(LIST.length));
    expect(legacy.stats.threshold).toBe(0.3);
  });

  it('nothing passing is explicit: the fallback promotes the best pairs and says so, or insufficientContext', async () => {
    const floors: OperatingPoints = { precise: point(0.5, 0, 0.95), balanced: point(1), related: point(2) };
    const scorer = relevanceScorer(LIST);
    const top = await createGate({
      scorer,
      policy: { operatingPoints: floors, mode: 'precise', minKept: 1 },
    }).filter('q', passages(LIST.length));
    expect(top.stats.passed).toBe(0);
    expect(top.stats.fallbackTriggered).toBe(true);
    expect(top.included.map((i) => [i.id, i.rule])).toEqual([['p0', 'fallback-top']]);
    const none = await createGate({ scorer, policy: { operatingPoints: floors, mode: 'precise' } }).filter(
      'q',
      passages(LIST.length),
    );
    expect(none.stats.returned).toBe(0);
    expect(none.stats.insufficientContext).toBe(true);
  });

  it('gamma moves the shift with the list top: the cut of shift + gamma · logit(top), a weak list read more sceptically', () => {
    const logit = (p: number) => Math.log(p / (1 - p));
    for (const list of [LIST, [0.3, 0.25, 0.2, 0.1, 0.05], [0.99, 0.98, 0.6, 0.5]]) {
      const withGamma = operatingPointCut({ beta: 1, shift: 0.5, floor: 0, gamma: 0.75 }, list);
      const fixed = operatingPointCut({ beta: 1, shift: 0.5 + 0.75 * logit(Math.max(...list)), floor: 0 }, list);
      expect(withGamma).toEqual(fixed);
    }
    // Same ratios between candidates, a weaker top: gamma > 0 keeps fewer of the weak list.
    const strong = [0.95, 0.9, 0.6, 0.3, 0.1];
    const weak = [0.1, 0.09, 0.08, 0.05, 0.02];
    const kept = (p: OperatingPoint, l: number[]) => l.filter((r) => r >= operatingPointThreshold(p, l)).length;
    const g = { beta: 1, shift: 1, floor: 0, gamma: 1 };
    expect([kept(g, strong), kept(point(1, 1), strong)]).toEqual([5, 4]);
    expect([kept(g, weak), kept(point(1, 1), weak)]).toEqual([1, 3]);
  });

  it('emptyBelow keeps nothing when the cut expects too little: insufficientContext, its margin in stats', async () => {
    const weak = [0.08, 0.05, 0.04, 0.03, 0.02];
    const expected = operatingPointCut(point(1), weak).expectedF;
    expect(expected).toBeGreaterThan(0);
    const points = (emptyBelow: number): OperatingPoints => ({
      precise: point(1),
      balanced: { beta: 1, shift: 0, floor: 0, emptyBelow },
      related: point(1),
    });
    const refused = await createGate({
      scorer: relevanceScorer(weak),
      policy: { operatingPoints: points(0.5) },
    }).filter('q', passages(weak.length));
    expect(refused.included).toEqual([]);
    expect(refused.stats.insufficientContext).toBe(true);
    expect(refused.excluded.every((i) => i.rule === 'insufficient-context')).toBe(true);
    expect(refused.stats.sufficiency).toBeCloseTo(expected - 0.5, 12);
    const kept = await createGate({
      scorer: relevanceScorer(weak),
      policy: { operatingPoints: points(expected / 2) },
    }).filter('q', passages(weak.length));
    expect(kept.included.length).toBeGreaterThan(0);
    expect(kept.stats.insufficientContext).toBe(false);
    expect(kept.stats.sufficiency).toBeCloseTo(expected / 2, 12);
    // The rerouted decision reads the same margin from the stored signals.
    expect(rerouteResult(refused, { operatingPoints: points(expected / 2) }).included.map((i) => i.id)).toEqual(
      kept.included.map((i) => i.id),
    );
    // A strong list passes the same rule.
    const strong = await createGate({ scorer: relevanceScorer(LIST), policy: { operatingPoints: points(0.5) } }).filter(
      'q',
      passages(LIST.length),
    );
    expect(strong.included.length).toBeGreaterThan(0);
  });

  it('leaves unscored pairs out of the list statistics and keeps maxKept', async () => {
    const scorer = relevanceScorer([0.9, 0.5, 0.4]); // p3, p4 have no score → fail closed
    const policy: GatePolicy = { operatingPoints: SHIPPED_POINTS, mode: 'related', maxKept: 2 };
    const r = await createGate({ scorer, policy }).filter('q', passages(5));
    expect(r.stats.threshold).toBe(operatingPointThreshold(SHIPPED_POINTS.related, [0.9, 0.5, 0.4]));
    expect(r.stats.unscored).toBe(2);
    expect(r.stats.returned).toBeLessThanOrEqual(2);
  });

  it('refuses bad operating-point options naming the field', () => {
    const scorer = relevanceScorer(LIST);
    const bad = (operatingPoints: unknown) =>
      createGate({ scorer, policy: { operatingPoints: operatingPoints as OperatingPoints } });
    expect(() => bad({ precise: point(0.5), balanced: point(1) })).toThrow(/operatingPoints\.related/);
    expect(() => bad({ ...SHIPPED_POINTS, strict: point(1) })).toThrow(/operatingPoints\.strict/);
    expect(() => bad({ ...SHIPPED_POINTS, balanced: { beta: 0, shift: 0, floor: 0 } })).toThrow(
      /operatingPoints\.balanced\.beta/,
    );
    expect(() => bad({ ...SHIPPED_POINTS, balanced: { beta: 1, shift: Number.NaN, floor: 0 } })).toThrow(
      /operatingPoints\.balanced\.shift/,
    );
    expect(() => bad({ ...SHIPPED_POINTS, balanced: { beta: 1, shift: 0, floor: 2 } })).toThrow(
      /operatingPoints\.balanced\.floor/,
    );
    expect(() =>
      bad({ ...SHIPPED_POINTS, balanced: { beta: 1, shift: 0, floor: 0, gamma: Number.POSITIVE_INFINITY } }),
    ).toThrow(/operatingPoints\.balanced\.gamma/);
    expect(() => bad({ ...SHIPPED_POINTS, balanced: { beta: 1, shift: 0, floor: 0, emptyBelow: 1.5 } })).toThrow(
      /operatingPoints\.balanced\.emptyBelow/,
    );
    expect(() => createGate({ scorer, policy: { mode: 'loose' as never } })).toThrow(/policy\.mode/);
    expect(() =>
      createGate({
        scorer: shippedScorer(LIST),
        policy: { mode: 'balanced', earlyStop: { window: 2, minRate: 0.5, chunk: 2 } },
      }),
    ).toThrow(/policy\.earlyStop/);
    // earlyStop alone means the absolute threshold (rank-order stopping needs a per-pair decision).
    expect(() =>
      createGate({
        scorer: relevanceScorer(LIST, `${SHIPPED_MODEL_ID}@s`),
        policy: { earlyStop: { window: 2, minRate: 0.5, chunk: 2 } },
      }),
    ).not.toThrow();
  });
});
