import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  loadFastPathScorer,
  type Passage,
  CalibrationFormatError,
  CalibrationModelMismatchError,
  createGate,
  parseCalibratedThreshold,
} from '../../src/index.js';
import { isDetailedPairScore } from '../../src/types.js';
import {
  CALIBRATED_THRESHOLD_FORMAT,
  CALIBRATED_THRESHOLD_FORMAT_V1,
  calibrate,
  calibratedThresholdOf,
  fitCalibratedThreshold,
  fitPlatt,
  plattProbability,
  serializeCalibratedThreshold,
  thresholdForPrecision,
} from '../../src/gate/calibration.js';
import { passages, tableScorer } from './helpers.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

/** Deterministic labelled data drawn from a known sigmoid P(1|x) = 1 / (1 + exp(−(a·x + b))). */
function synthetic(n: number, a: number, b: number): { raws: number[]; labels: number[] } {
  const rand = mulberry32(12345);
  const raws: number[] = [];
  const labels: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = rand() * 8 - 4;
    raws.push(x);
    labels.push(rand() < 1 / (1 + Math.exp(-(a * x + b))) ? 1 : 0);
  }
  return { raws, labels };
}

describe('Platt scaling', () => {
  it('recovers the generating sigmoid σ(a·x + b) and reaches a stationary point of the smoothed log-loss', () => {
    const { raws, labels } = synthetic(20000, 1.5, -0.4);
    const fit = fitPlatt(raws, labels);
    expect(fit.params.type).toBe('platt');
    expect(fit.params.a).toBeCloseTo(1.5, 1);
    expect(fit.params.b).toBeCloseTo(-0.4, 1);
    // Gradient of Platt's objective with smoothed targets is ~0 at the optimum.
    const pos = labels.filter((l) => l === 1).length;
    const neg = labels.length - pos;
    let g1 = 0;
    let g2 = 0;
    raws.forEach((x, i) => {
      const t = labels[i] === 1 ? (pos + 1) / (pos + 2) : 1 / (neg + 2);
      const p = plattProbability(fit.params, x);
      g1 += x * (t - p);
      g2 += t - p;
    });
    expect(Math.abs(g1)).toBeLessThan(1e-4);
    expect(Math.abs(g2)).toBeLessThan(1e-4);
    expect(fit.info).toMatchObject({ pairs: 20000, positives: pos, negatives: neg });
  });

  it('is deterministic and monotone in the raw score', () => {
    const { raws, labels } = synthetic(500, 2, 0);
    const a = fitPlatt(raws, labels);
    const b = fitPlatt(raws, labels);
    expect(a).toEqual(b);
    let previous = -1;
    for (let x = -10; x <= 10; x += 0.5) {
      const p = plattProbability(a.params, x);
      expect(p).toBeGreaterThan(previous);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThanOrEqual(1);
      previous = p;
    }
  });

  it('separable data gives finite parameters (target smoothing) and stable extremes', () => {
    const fit = fitPlatt([-3, -2, -1, 1, 2, 3], [0, 0, 0, 1, 1, 1]);
    expect(Number.isFinite(fit.params.a) && Number.isFinite(fit.params.b)).toBe(true);
    expect(plattProbability(fit.params, 1e6)).toBe(1);
    expect(plattProbability(fit.params, -1e6)).toBe(0);
  });

  it('refuses malformed input with typed errors', () => {
    expect(() => fitPlatt([1, 2], [1])).toThrow(CalibrationFormatError);
    expect(() => fitPlatt([1, Number.NaN], [1, 0])).toThrow(/raws\[1\]/);
    expect(() => fitPlatt([1, 2], [1, 2])).toThrow(/labels\[1\]/);
    expect(() => fitPlatt([1, 2], [1, 1])).toThrow(/at least one positive and one negative/);
  });

  it('thresholdForPrecision maximises recall at the target, cutting only between distinct values', () => {
    const probs = [0.9, 0.8, 0.7, 0.7, 0.6, 0.5];
    const labels = [true, true, false, true, false, true];
    const pairs = probs.map((score, i) => ({ score, relevant: labels[i] }));
    expect(thresholdForPrecision(pairs, 1)).toMatchObject({ threshold: 0.8, precision: 1, recall: 0.5, kept: 2 });
    expect(thresholdForPrecision(pairs, 0.75)).toMatchObject({ threshold: 0.7, precision: 0.75, recall: 0.75 });
    expect(thresholdForPrecision(pairs, 0.6)).toMatchObject({ threshold: 0.5, recall: 1 });
    expect(
      thresholdForPrecision(
        [
          { score: 0.9, relevant: false },
          { score: 0.1, relevant: true },
        ],
        0.9,
      ),
    ).toBeNull();
    // fitCalibratedThreshold turns "no threshold reaches it" into a typed error.
    expect(() =>
      fitCalibratedThreshold({ model: 'm', raws: [0, 0, 1, 1], labels: [1, 0, 1, 0], targetPrecision: 1 }),
    ).toThrow(CalibrationFormatError);
  });

  it('higher raw scores of relevant pairs give a > 0: P = σ(a·raw + b), the fast-path meta.json convention', () => {
    const fit = fitPlatt([-2, -1, 0, 1, 2, 3], [0, 0, 1, 0, 1, 1]);
    expect(fit.params.a).toBeGreaterThan(0);
    expect(plattProbability(fit.params, 0.7)).toBe(1 / (1 + Math.exp(-(fit.params.a * 0.7 + fit.params.b))));
  });
});

describe('CalibratedThreshold', () => {
  const { raws, labels } = synthetic(2000, 1.2, -0.3);

  it('serialises and parses back exactly (float64), refusing foreign or corrupt JSON', () => {
    const ct = fitCalibratedThreshold({
      model: 'fast-path@abc',
      raws,
      labels,
      targetPrecision: 0.8,
      fittedAt: '2026-01-01T00:00:00Z',
      dataset: 'synthetic',
    });
    expect(ct.precisionAtThreshold).toBeGreaterThanOrEqual(0.8);
    const json = serializeCalibratedThreshold(ct);
    expect(JSON.parse(json).format).toBe('relevance-gate/calibrated-threshold@2');
    const round = parseCalibratedThreshold(json);
    expect(round).toEqual(ct);
    expect(calibrate(round, 1.234567)).toBe(calibrate(ct, 1.234567));
    expect(() => parseCalibratedThreshold('{')).toThrow(CalibrationFormatError);
    expect(() => parseCalibratedThreshold({ ...ct, format: 'other' })).toThrow(/not a calibrated threshold/);
    expect(() => parseCalibratedThreshold({ ...ct, threshold: 2 })).toThrow(/threshold/);
    expect(() => parseCalibratedThreshold({ ...ct, calibration: { type: 'platt', a: 'x', b: 0 } })).toThrow(
      /calibration\.a/,
    );
    // An @2 file with the @1 key is refused, not silently read under the other sign.
    expect(() => parseCalibratedThreshold({ ...ct, calibration: { method: 'platt', a: 1, b: 0 } })).toThrow(
      /calibration\.type/,
    );
    expect(() => fitCalibratedThreshold({ model: 'm', raws, labels })).toThrow(/exactly one/);
  });

  it('the gate uses calibrate(raw) as relevance and the stored threshold', async () => {
    const ct = fitCalibratedThreshold({ model: 'fast-path@abc', raws, labels, threshold: 0.6, fittedAt: 'x' });
    const logit = (p: number) => Math.log(p / (1 - p));
    const rawPass = (logit(0.61) - ct.calibration.b) / ct.calibration.a; // calibrates to 0.61
    const rawFail = (logit(0.59) - ct.calibration.b) / ct.calibration.a; // calibrates to 0.59
    const scorer = tableScorer(
      {
        p0: { probabilities: { relevant: 0.1 }, raw: { relevant: rawPass } },
        p1: { probabilities: { relevant: 0.99 }, raw: { relevant: rawFail } },
        p2: { relevant: 0.99 },
      },
      'fast-path@abc',
    );
    const r = await createGate({ scorer, policy: { calibrated: ct } }).filter('q', passages(3));
    expect(r.included.map((i) => i.id)).toEqual(['p0']);
    expect(r.included[0].relevance).toBeCloseTo(0.61, 12);
    expect(r.stats.threshold).toBe(0.6);
    expect(r.excluded.map((i) => [i.id, i.rule, i.reason])).toEqual([
      ['p1', 'below-threshold', undefined],
      ['p2', 'fail-closed', 'missing-signal'],
    ]);
  });

  it('a threshold fitted for another model is refused with a typed error', () => {
    const ct = fitCalibratedThreshold({ model: 'fast-path@abc', raws, labels, threshold: 0.5, fittedAt: 'x' });
    const other = tableScorer({}, 'fast-path@def');
    expect(() => createGate({ scorer: other, policy: { calibrated: ct } })).toThrow(CalibrationModelMismatchError);
    const gate = createGate({ scorer: other });
    return expect(gate.filter('q', passages(1), { policy: { calibrated: ct } })).rejects.toMatchObject({
      code: 'RG_ERR_CALIBRATION_MODEL_MISMATCH',
      expectedModel: 'fast-path@abc',
      actualModel: 'fast-path@def',
    });
  });

  it('calibrated and threshold together are refused', () => {
    const ct = fitCalibratedThreshold({ model: 'm', raws, labels, threshold: 0.5, fittedAt: 'x' });
    expect(() => createGate({ scorer: tableScorer({}, 'm'), policy: { calibrated: ct, threshold: 0.4 } })).toThrow(
      /policy\.threshold/,
    );
  });
});

describe('calibrated-threshold@1 files', () => {
  it('are read by converting 1 / (1 + e^{a·raw + b}) to σ(−a·raw − b): the same probabilities', async () => {
    const v1 = {
      format: CALIBRATED_THRESHOLD_FORMAT_V1,
      model: 'fast-path@abc',
      threshold: 0.6,
      calibration: { method: 'platt', a: -1.7, b: 0.25 },
      fittedOn: { pairs: 10, positives: 4, negatives: 6, iterations: 7, fittedAt: 'x' },
    };
    const ct = parseCalibratedThreshold(JSON.stringify(v1));
    expect(ct.format).toBe(CALIBRATED_THRESHOLD_FORMAT);
    expect(ct.calibration).toEqual({ type: 'platt', a: 1.7, b: -0.25 });
    expect(ct.fittedOn).toEqual(v1.fittedOn);
    for (const raw of [-3, -0.5, 0, 0.4, 2.5]) {
      expect(calibrate(ct, raw)).toBeCloseTo(1 / (1 + Math.exp(-1.7 * raw + 0.25)), 15);
    }
    // Written back in the current format, which reads back unchanged.
    const rewritten = JSON.parse(serializeCalibratedThreshold(ct));
    expect(rewritten.format).toBe(CALIBRATED_THRESHOLD_FORMAT);
    expect(parseCalibratedThreshold(rewritten)).toEqual(ct);
    // An @1 file keeps its own key: `type` instead of `method` is corrupt, not a silent sign flip.
    expect(() => parseCalibratedThreshold({ ...v1, calibration: { type: 'platt', a: 1, b: 0 } })).toThrow(
      /calibration\.method/,
    );
    // And the gate decides with the converted parameters.
    const rawPass = (Math.log(0.62 / 0.38) + 0.25) / 1.7;
    const scorer = tableScorer(
      { p0: { probabilities: { relevant: 0.01 }, raw: { relevant: rawPass } } },
      'fast-path@abc',
    );
    const r = await createGate({ scorer, policy: { calibrated: v1 as never } }).filter('q', passages(1));
    expect(r.included.map((i) => i.id)).toEqual(['p0']);
    expect(r.included[0].relevance).toBeCloseTo(0.62, 12);
  });
});

describe("a model's own calibration handed to the gate", () => {
  const request = JSON.parse(readFileSync(new URL('../../examples/request.json', import.meta.url), 'utf8')) as {
    query: string;
    passages: Passage[];
  };

  it('gives exactly the fast-path scorer’s own probabilities as relevance, and its threshold', async () => {
    const scorer = await loadFastPathScorer();
    expect(scorer.meta.calibration?.type).toBe('platt');
    const own = await scorer.score(request.query, request.passages);
    const ownById = new Map(
      own.map((r, i) => {
        if (r === null || !isDetailedPairScore(r)) throw new Error('expected a detailed score');
        return [request.passages[i].id, r.probabilities.relevant] as const;
      }),
    );

    const viaHelper = calibratedThresholdOf(scorer);
    expect(viaHelper).toMatchObject({
      model: scorer.id,
      threshold: scorer.recommendedThreshold,
      calibration: scorer.meta.calibration,
    });
    // Assembled by hand from meta.json: the same object, no sign to flip.
    const byHand = parseCalibratedThreshold({
      format: CALIBRATED_THRESHOLD_FORMAT,
      model: scorer.id,
      threshold: scorer.recommendedThreshold,
      calibration: scorer.meta.calibration,
    });
    for (const calibrated of [viaHelper, byHand]) {
      const r = await createGate({ scorer, policy: { calibrated } }).filter(request.query, request.passages);
      const items = [...r.included, ...r.conflicting, ...r.excluded];
      expect(items).toHaveLength(request.passages.length);
      for (const item of items) {
        expect(item.reason).toBeUndefined();
        expect(item.relevance).toBe(ownById.get(item.id));
      }
      // The same decisions as gating the uncalibrated probabilities at the recommended threshold.
      const plain = await createGate({ scorer, policy: { threshold: scorer.recommendedThreshold } }).filter(
        request.query,
        request.passages,
      );
      expect(r.included.map((i) => i.id)).toEqual(plain.included.map((i) => i.id));
      expect(r.included.length).toBeGreaterThan(0);
      expect(r.excluded.length).toBeGreaterThan(0);
    }
  });

  it('without a calibration in meta.json, the helper uses σ(margin) and needs a threshold when none is recommended', () => {
    const bare = { id: 'm', meta: {}, recommendedThreshold: undefined };
    expect(() => calibratedThresholdOf(bare)).toThrow(CalibrationFormatError);
    const ct = calibratedThresholdOf(bare, { threshold: 0.4 });
    expect(ct.calibration).toEqual({ type: 'platt', a: 1, b: 0 });
    expect(calibrate(ct, 0.3)).toBe(1 / (1 + Math.exp(-0.3)));
    expect(ct.threshold).toBe(0.4);
  });
});
