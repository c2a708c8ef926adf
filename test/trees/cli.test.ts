/**
 * The predict / convert / train commands: their run functions directly (fast), plus a few real
 * process spawns of the CLI to check wiring, exit codes and error messages.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runConvert } from '../../src/cli/commands/convert.js';
import { runPredict } from '../../src/cli/commands/predict.js';
import { loadTreeModel } from '../../src/index.js';
import { runTreeTraining } from '../../src/tooling/training/trees/train-trees.js';
import { parseFeatureCsv } from '../../src/tooling/training/trees/feature-csv.js';
import { fixturePath, readExpected, readMatrix, REPO_ROOT, withinTolerance } from './loader-fixtures.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'rg-trees-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function predictText(model: string, input: string, output: 'margin' | 'value'): Promise<string> {
  let text = '';
  await runPredict({ model, input, output }, (s) => (text += s));
  return text;
}

function cli(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return run(join(REPO_ROOT, 'node_modules/.bin/tsx'), [join(REPO_ROOT, 'src/cli/main.ts'), ...args], {
    cwd: REPO_ROOT,
    maxBuffer: 1 << 26,
  }).then(
    ({ stdout, stderr }) => ({ stdout, stderr, code: 0 }),
    (err: { stdout: string; stderr: string; code: number }) => ({
      stdout: err.stdout,
      stderr: err.stderr,
      code: err.code,
    }),
  );
}

/** A learnable synthetic table: label depends on bm25 and overlap; `len` is noise. */
function syntheticRows(
  n: number,
  seed: number,
): Array<{ bm25: number | null; overlap: number; len: number; label: number }> {
  const rand = mulberry32(seed);
  return Array.from({ length: n }, () => {
    const bm25 = rand() * 10;
    const overlap = rand();
    const label = bm25 / 10 + overlap + (rand() - 0.5) * 0.5 > 1 ? 1 : 0;
    return {
      bm25: rand() < 0.05 ? null : Math.round(bm25 * 1e4) / 1e4,
      overlap: Math.round(overlap * 1e4) / 1e4,
      len: Math.floor(rand() * 300),
      label,
    };
  });
}

function writeCsv(path: string, rows: ReturnType<typeof syntheticRows>): void {
  writeFileSync(
    path,
    ['bm25,overlap,len,label', ...rows.map((r) => `${r.bm25 ?? 'nan'},${r.overlap},${r.len},${r.label}`)].join('\n') +
      '\n',
  );
}

describe('predict', () => {
  it("prints XGBoost's margins and values for the softprob fixture, one line per row, 3 outputs", async () => {
    const name = 'softprob3_t40_d4';
    const expected = readExpected(name);
    for (const output of ['margin', 'value'] as const) {
      const lines = (await predictText(fixturePath(`${name}.ubj`), fixturePath(`${name}.X.csv`), output))
        .trimEnd()
        .split('\n');
      expect(lines.length).toBe(expected.rows);
      lines.forEach((line, r) => {
        const vals = line.split(',').map(Number);
        expect(vals.length).toBe(3);
        vals.forEach((v, g) => {
          expect(withinTolerance(v, (output === 'margin' ? expected.margin : expected.prediction)[r]![g]!)).toBe(true);
        });
      });
    }
  });

  it('prints float32 margins with enough digits to round-trip exactly', async () => {
    const name = 'logistic_t100_d6';
    const model = await loadTreeModel(fixturePath(`${name}.json`));
    const { rows, nRows } = readMatrix(name);
    const margins = model.predict(rows, nRows, { output: 'margin' });
    model.dispose();
    const printed = (await predictText(fixturePath(`${name}.json`), fixturePath(`${name}.X.csv`), 'margin'))
      .trimEnd()
      .split('\n')
      .map(Number);
    printed.forEach((v, i) => {
      expect(Math.fround(v)).toBe(margins[i]);
    });
  });

  it('treats an empty field like nan, and names the line of a wrong feature count or a bad value', async () => {
    const model = fixturePath('mlxgboost_t60_d5.bin');
    const row = readFileSync(fixturePath('mlxgboost_t60_d5.X.csv'), 'utf8').split('\n')[0]!.split(',');
    const withNan = [...row];
    withNan[3] = 'nan';
    const withEmpty = [...row];
    withEmpty[3] = '';
    writeFileSync(join(dir, 'a.csv'), `${withNan.join(',')}\n${withEmpty.join(',')}\n`);
    const [a, b] = (await predictText(model, join(dir, 'a.csv'), 'margin')).trimEnd().split('\n');
    expect(a).toBe(b);
    writeFileSync(join(dir, 'b.csv'), `${row.join(',')}\n\n${row.slice(1).join(',')}\n`);
    await expect(predictText(model, join(dir, 'b.csv'), 'value')).rejects.toThrow(
      /line 3: 11 values, the model expects 12 features/,
    );
    writeFileSync(join(dir, 'c.csv'), `${row.join(',')}\n${['abc', ...row.slice(1)].join(',')}\n`);
    await expect(predictText(model, join(dir, 'c.csv'), 'value')).rejects.toThrow(
      /line 2, column 1: "abc" is not a number/,
    );
    expect(() => parseFeatureCsv('1,inf,-inf,NaN\n', 4)).not.toThrow();
    expect(Array.from(parseFeatureCsv('1,inf,-inf,NaN\n', 4).rows)).toEqual([1, Infinity, -Infinity, NaN]);
    expect(() => parseFeatureCsv('0x10\n', 1)).toThrow(/not a number/);
  });

  it('CLI process: prints rows on stdout; exits 1 with a typed message on a bad model', async () => {
    const ok = await cli(
      'predict',
      '--model',
      fixturePath('squarederror_t60_d4.json'),
      '--input',
      fixturePath('squarederror_t60_d4.X.csv'),
      '--output',
      'margin',
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout.trimEnd().split('\n').length).toBe(600);
    writeFileSync(join(dir, 'junk.bin'), 'definitely not a model');
    const bad = await cli(
      'predict',
      '--model',
      join(dir, 'junk.bin'),
      '--input',
      fixturePath('squarederror_t60_d4.X.csv'),
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/RG_ERR_MODEL_FORMAT: .*not a recognized model/);
  });
});

describe('convert', () => {
  it('writes every input format as XGBoost JSON that loads with identical predictions', async () => {
    for (const [file, name] of [
      ['mlxgboost_t60_d5.model.json', 'mlxgboost_t60_d5'],
      ['mlxgboost_t60_d5.bin', 'mlxgboost_t60_d5'],
      ['softprob3_t40_d4.ubj', 'softprob3_t40_d4'],
      ['rank_pairwise_t100_d6.ubj', 'rank_pairwise_t100_d6'],
      ['logitraw_t80_d5.json', 'logitraw_t80_d5'],
    ] as const) {
      const out = join(dir, `${file}.converted.json`);
      expect(await runConvert({ model: fixturePath(file), out })).toMatch(/XGBoost JSON/);
      const { rows, nRows } = readMatrix(name);
      const [a, b] = await Promise.all([loadTreeModel(fixturePath(file)), loadTreeModel(out)]);
      for (const output of ['margin', 'value'] as const) {
        expect(Array.from(b.predict(rows, nRows, { output }))).toEqual(Array.from(a.predict(rows, nRows, { output })));
      }
      a.dispose();
      b.dispose();
    }
  });

  const python = '/usr/bin/python3';
  const hasXGBoost = (() => {
    try {
      return readFileSync('/usr/lib/python3/dist-packages/xgboost/VERSION', 'utf8').trim().length > 0;
    } catch {
      return false;
    }
  })();

  it.skipIf(!hasXGBoost)(
    'XGBoost 1.7.4 (Debian python3-xgboost, reference only) loads converted ml-xgboost and dart models and predicts the same',
    async () => {
      const extra = new URL('./fixtures/', import.meta.url).pathname;
      const cases = [
        {
          model: fixturePath('mlxgboost_t60_d5.bin'),
          x: fixturePath('mlxgboost_t60_d5.X.csv'),
          expected: readExpected('mlxgboost_t60_d5'),
        },
        {
          model: `${extra}dart_t30_d3.bin`,
          x: `${extra}dart_t30_d3.X.csv`,
          expected: JSON.parse(readFileSync(`${extra}dart_t30_d3.expected.json`, 'utf8')) as ReturnType<
            typeof readExpected
          >,
        },
      ];
      const script = [
        'import sys, json, numpy as np, xgboost as xgb',
        'b = xgb.Booster(); b.load_model(sys.argv[1])',
        'X = np.genfromtxt(sys.argv[2], delimiter=",", dtype=np.float32)',
        'print(json.dumps(b.predict(xgb.DMatrix(X), output_margin=True).astype(float).tolist()))',
      ].join('\n');
      for (const [i, c] of cases.entries()) {
        const out = join(dir, `for-xgboost-${i}.json`);
        await runConvert({ model: c.model, out });
        const { stdout } = await run(python, ['-c', script, out, c.x]);
        const margins = JSON.parse(stdout) as number[];
        expect(margins.length).toBe(c.expected.rows);
        margins.forEach((m, r) => {
          expect(m).toBe(c.expected.margin[r]![0]);
        });
      }
    },
  );
});

describe('train', () => {
  const csv = join(dir, 'train.csv');
  writeCsv(csv, syntheticRows(2000, 3));

  it('trains from CSV with a seeded validation split, reports logloss/AUC, saves a loadable legacy binary', async () => {
    const out = join(dir, 'model.bin');
    const progress: number[] = [];
    const report = await runTreeTraining({
      data: csv,
      label: 'label',
      out,
      validFraction: 0.25,
      params: { objective: 'binary:logistic', rounds: 30, maxDepth: 4, eta: 0.3, seed: 1 },
      onProgress: (d) => progress.push(d),
    });
    expect(report.format).toBe('legacy-binary');
    expect(report.featureNames).toEqual(['bm25', 'overlap', 'len']);
    expect(report.trainRows).toBe(1500);
    expect(report.validRows).toBe(500);
    expect(report.train.auc).toBeGreaterThan(0.9);
    expect(report.valid!.auc).toBeGreaterThan(0.85);
    expect(report.valid!.logloss).toBeLessThan(0.5);
    expect(progress.at(-1)).toBe(30);
    const model = await loadTreeModel(out);
    expect(model.numFeatures).toBe(3);
    model.dispose();
  });

  it('trains from JSONL with --features and --valid, regression metrics, JSON output with feature names', async () => {
    const rows = syntheticRows(1200, 9);
    const jsonl = join(dir, 'train.jsonl');
    const valid = join(dir, 'valid.jsonl');
    writeFileSync(
      jsonl,
      `${rows
        .slice(0, 1000)
        .map((r) => JSON.stringify(r))
        .join('\n')}\n`,
    );
    writeFileSync(
      valid,
      `${rows
        .slice(1000)
        .map((r) => JSON.stringify(r))
        .join('\n')}\n`,
    );
    const out = join(dir, 'reg.json');
    const report = await runTreeTraining({
      data: jsonl,
      valid,
      label: 'label',
      features: ['overlap', 'bm25'],
      out,
      params: { objective: 'reg:squarederror', rounds: 20, maxDepth: 3 },
    });
    expect(report.format).toBe('xgboost-json');
    expect(report.validRows).toBe(200);
    expect(report.train.rmse).toBeLessThan(0.4);
    const doc = JSON.parse(readFileSync(out, 'utf8')) as {
      learner: { feature_names: string[]; objective: { name: string } };
    };
    expect(doc.learner.feature_names).toEqual(['overlap', 'bm25']);
    expect(doc.learner.objective.name).toBe('reg:squarederror');
  });

  it('names bad input: missing label column, non-numeric value, both validation options', async () => {
    const base = { out: join(dir, 'x.bin'), params: { objective: 'binary:logistic' as const, rounds: 2 } };
    await expect(runTreeTraining({ ...base, data: csv, label: 'nope' })).rejects.toThrow(
      /label column "nope" not found/,
    );
    writeFileSync(join(dir, 'bad.csv'), 'a,label\n1,0\nx,1\n');
    await expect(runTreeTraining({ ...base, data: join(dir, 'bad.csv'), label: 'label' })).rejects.toThrow(
      /line 3, column "a": "x" is not a number/,
    );
    await expect(
      runTreeTraining({ ...base, data: csv, label: 'label', valid: csv, validFraction: 0.1 }),
    ).rejects.toThrow(/either --valid/);
  });

  it('CLI process: train prints metrics and a progress display, then predict uses the saved model', async () => {
    const out = join(dir, 'cli-model.json');
    const res = await cli(
      'train',
      '--data',
      csv,
      '--label',
      'label',
      '--rounds',
      '10',
      '--max-depth',
      '3',
      '--out',
      out,
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/train \(1600 rows\): logloss=\d\.\d+ auc=\d\.\d+/);
    expect(res.stdout).toMatch(/valid \(400 rows\): logloss=/);
    expect(res.stderr).toMatch(/train \[#+\] 10\/10 100%/);
    writeFileSync(join(dir, 'x.csv'), '5,0.5,10\nnan,0.9,3\n');
    const pred = await cli('predict', '--model', out, '--input', join(dir, 'x.csv'));
    expect(pred.code).toBe(0);
    const vals = pred.stdout.trimEnd().split('\n').map(Number);
    expect(vals.length).toBe(2);
    vals.forEach((v) => {
      expect(v > 0 && v < 1).toBe(true);
    });
  });
});
