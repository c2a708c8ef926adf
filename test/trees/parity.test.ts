/**
 * Acceptance parity: every model in ../shared/fixtures/xgboost, loaded through the public
 * `loadTreeModel` (JSON and UBJSON; the ml-xgboost .bin and toJSON() file) and evaluated by the
 * native evaluator, gives XGBoost 1.7.4's margins and predictions within 1e-6 (absolute, or
 * relative for |x| > 1) for every row and output.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadTreeModel } from '../../src/index.js';
import type { TreeModel } from '../../src/tiers/fast-path/tree-model.js';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  fixtureBytes,
  fixturePath,
  manifest,
  readExpected,
  readMatrix,
  withinTolerance,
  type Expected,
} from './loader-fixtures.js';

const opened: TreeModel[] = [];
afterAll(() => {
  for (const m of opened) m.dispose();
});

function compare(model: TreeModel, name: string): void {
  const { rows, nRows, nCols } = readMatrix(name);
  const expected = readExpected(name);
  expect(model.numFeatures).toBe(nCols);
  expect(model.numOutputs).toBe(expected.outputs);
  expect(nRows).toBe(expected.rows);
  const margin = model.predict(rows, nRows, { output: 'margin' });
  const value = model.predict(rows, nRows, { output: 'value' });
  expect(margin.length).toBe(nRows * expected.outputs);
  expect(value.length).toBe(nRows * expected.outputs);
  const bad: string[] = [];
  for (let r = 0; r < nRows; r++) {
    for (let g = 0; g < expected.outputs; g++) {
      const i = r * expected.outputs + g;
      const em = expected.margin[r]![g]!;
      const ep = expected.prediction[r]![g]!;
      if (!withinTolerance(margin[i]!, em)) bad.push(`row ${r} output ${g}: margin ${margin[i]} vs ${em}`);
      if (!withinTolerance(value[i]!, ep)) bad.push(`row ${r} output ${g}: value ${value[i]} vs ${ep}`);
    }
  }
  expect(bad.slice(0, 5)).toEqual([]);
}

describe('parity with XGBoost 1.7.4 on the shared fixtures', () => {
  const models = manifest();
  it('covers multi:softprob (3 outputs) and rank:pairwise', () => {
    expect(models.map((m) => m.objective)).toEqual(
      expect.arrayContaining([
        'multi:softprob',
        'rank:pairwise',
        'binary:logistic',
        'binary:logitraw',
        'reg:squarederror',
      ]),
    );
  });

  for (const m of models) {
    for (const ext of ['json', 'ubj'] as const) {
      it(`${m.name}.${ext} (${m.objective}, ${m.trees} trees)`, async () => {
        const model = await loadTreeModel(fixturePath(`${m.name}.${ext}`));
        opened.push(model);
        expect(model.objective).toBe(m.objective);
        compare(model, m.name);
      });
    }
  }

  it('ml-xgboost legacy binary (.bin, by path) matches its expected file', async () => {
    const model = await loadTreeModel(fixturePath('mlxgboost_t60_d5.bin'));
    opened.push(model);
    compare(model, 'mlxgboost_t60_d5');
  });

  it('ml-xgboost toJSON() file (.model.json, as bytes) matches its expected file', async () => {
    const model = await loadTreeModel(fixtureBytes('mlxgboost_t60_d5.model.json'));
    opened.push(model);
    compare(model, 'mlxgboost_t60_d5');
  });
});

/**
 * Extra fixtures made by scripts/make-tree-loader-fixtures.py with XGBoost 1.7.4 (test/trees/fixtures):
 * a dart booster, multi:softmax (value = class index, one per row), reg:logistic, each also as
 * XGBoost 1.x's own legacy binary ("binf" header, base_score stored as a probability).
 */
describe('parity on the extra fixtures (dart, multi:softmax, reg:logistic, 1.x legacy binary)', () => {
  const here = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures');
  for (const name of ['dart_t30_d3', 'softmax3_t15_d3', 'reglogistic_t20_d3']) {
    const expected = JSON.parse(readFileSync(resolve(here, `${name}.expected.json`), 'utf8')) as Expected & {
      value_outputs: number;
      booster: string;
    };
    const lines = readFileSync(resolve(here, `${name}.X.csv`), 'utf8')
      .trim()
      .split('\n');
    const nCols = lines[0]!.split(',').length;
    const rows = Float32Array.from(lines.flatMap((l) => l.split(',').map((v) => (v === 'nan' ? NaN : Number(v)))));
    for (const ext of ['json', 'ubj', 'bin'] as const) {
      it(`${name}.${ext} (${expected.objective}, ${expected.booster})`, async () => {
        const model = await loadTreeModel(resolve(here, `${name}.${ext}`));
        opened.push(model);
        expect(model.objective).toBe(expected.objective);
        expect(model.numFeatures).toBe(nCols);
        const margin = model.predict(rows, lines.length, { output: 'margin' });
        const value = model.predict(rows, lines.length, { output: 'value' });
        expect(margin.length).toBe(lines.length * expected.outputs);
        expect(value.length).toBe(lines.length * expected.value_outputs);
        const bad: string[] = [];
        for (let r = 0; r < lines.length; r++) {
          for (let g = 0; g < expected.outputs; g++) {
            const m = margin[r * expected.outputs + g]!;
            if (!withinTolerance(m, expected.margin[r]![g]!))
              bad.push(`row ${r}.${g} margin ${m} vs ${expected.margin[r]![g]}`);
          }
          for (let g = 0; g < expected.value_outputs; g++) {
            const v = value[r * expected.value_outputs + g]!;
            if (!withinTolerance(v, expected.prediction[r]![g]!))
              bad.push(`row ${r}.${g} value ${v} vs ${expected.prediction[r]![g]}`);
          }
        }
        expect(bad.slice(0, 5)).toEqual([]);
      });
    }
  }
});
