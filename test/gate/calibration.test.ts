import { describe, expect, it } from 'vitest';
import {
  CalibrationFormatError,
  CalibrationModelMismatchError,
  createGate,
  parseCalibratedThreshold,
} from '../../src/index.js';
import {
  calibrate,
  fitCalibratedThreshold,
  fitPlatt,
  plattProbability,
  serializeCalibratedThreshold,
  thresholdForPrecision,
} from '../../src/gate/calibration.js';
import { passages, tableScorer } from './helpers.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

/** Deterministic labelled data drawn from a known sigmoid P(1|x) = 1 / (1 + exp(a·x + b)). */
function synthetic(n: number, a: number, b: number): { raws: number[]; labels: number[] } {
  const rand = mulberry32(12345);
  const raws: number[] = [];
  const labels: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = rand() * 8 - 4;
    raws.push(x);
    labels.push(rand() < 1 / (1 + Math.exp(a * x + b)) ? 1 : 0);
  }
  return { raws, labels };
}

describe('Platt scaling', () => {
  it('recovers the generating sigmoid and reaches a stationary point of the smoothed log-loss', () => {
    const { raws, labels } = synthetic(20000, -1.5, 0.4);
    const fit = fitPlatt(raws, labels);
    expect(fit.params.a).toBeCloseTo(-1.5, 1);
    expect(fit.params.b).toBeCloseTo(0.4, 1);
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
    const { raws, labels } = synthetic(500, -2, 0);
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

  it('thresholdForPrecision picks the lowest threshold reaching the target, cutting only between distinct values', () => {
    const probs = [0.9, 0.8, 0.7, 0.7, 0.6, 0.5];
    const labels = [1, 1, 0, 1, 0, 1];
    expect(thresholdForPrecision(probs, labels, 1)).toEqual({ threshold: 0.8, precision: 1, recall: 0.5 });
    expect(thresholdForPrecision(probs, labels, 0.75)).toEqual({ threshold: 0.7, precision: 0.75, recall: 0.75 });
    expect(thresholdForPrecision(probs, labels, 0.6)).toMatchObject({ threshold: 0.5, recall: 1 });
    expect(() => thresholdForPrecision([0.9, 0.1], [0, 1], 0.9)).toThrow(CalibrationFormatError);
  });
});

describe('CalibratedThreshold', () => {
  const { raws, labels } = synthetic(2000, -1.2, 0.3);

  it('serialises and parses back exactly (float64), refusing foreign or corrupt JSON', () => {
    const ct = fitCalibratedThreshold({
      model: 'trees@abc',
      raws,
      labels,
      targetPrecision: 0.8,
      fittedAt: '2026-01-01T00:00:00Z',
      dataset: 'synthetic',
    });
    expect(ct.precisionAtThreshold).toBeGreaterThanOrEqual(0.8);
    const round = parseCalibratedThreshold(serializeCalibratedThreshold(ct));
    expect(round).toEqual(ct);
    expect(calibrate(round, 1.234567)).toBe(calibrate(ct, 1.234567));
    expect(() => parseCalibratedThreshold('{')).toThrow(CalibrationFormatError);
    expect(() => parseCalibratedThreshold({ ...ct, format: 'other' })).toThrow(/not a calibrated threshold/);
    expect(() => parseCalibratedThreshold({ ...ct, threshold: 2 })).toThrow(/threshold/);
    expect(() => parseCalibratedThreshold({ ...ct, calibration: { method: 'platt', a: 'x', b: 0 } })).toThrow(
      /calibration\.a/,
    );
    expect(() => fitCalibratedThreshold({ model: 'm', raws, labels })).toThrow(/exactly one/);
  });

  it('the gate uses calibrate(raw) as relevance and the stored threshold', async () => {
    const ct = fitCalibratedThreshold({ model: 'trees@abc', raws, labels, threshold: 0.6, fittedAt: 'x' });
    const rawPass = (Math.log(1 / 0.61 - 1) - ct.calibration.b) / ct.calibration.a; // calibrates to 0.61
    const rawFail = (Math.log(1 / 0.59 - 1) - ct.calibration.b) / ct.calibration.a; // calibrates to 0.59
    const scorer = tableScorer(
      {
        p0: { probabilities: { relevant: 0.1 }, raw: { relevant: rawPass } },
        p1: { probabilities: { relevant: 0.99 }, raw: { relevant: rawFail } },
        p2: { relevant: 0.99 },
      },
      'trees@abc',
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
    const ct = fitCalibratedThreshold({ model: 'trees@abc', raws, labels, threshold: 0.5, fittedAt: 'x' });
    const other = tableScorer({}, 'trees@def');
    expect(() => createGate({ scorer: other, policy: { calibrated: ct } })).toThrow(CalibrationModelMismatchError);
    const gate = createGate({ scorer: other });
    return expect(gate.filter('q', passages(1), { policy: { calibrated: ct } })).rejects.toMatchObject({
      code: 'ERR_CALIBRATION_MODEL_MISMATCH',
      expectedModel: 'trees@abc',
      actualModel: 'trees@def',
    });
  });

  it('calibrated and threshold together are refused', () => {
    const ct = fitCalibratedThreshold({ model: 'm', raws, labels, threshold: 0.5, fittedAt: 'x' });
    expect(() => createGate({ scorer: tableScorer({}, 'm'), policy: { calibrated: ct, threshold: 0.4 } })).toThrow(
      /policy\.threshold/,
    );
  });
});
