/**
 * Tree evaluator speed, side by side in one run, on the same rows:
 *   ours       : createTreeModel / loadTreeModel, predict(rows, n, { output: 'value' }) (native addon)
 *   xgboost-c  : XGBoost 1.7.4's C predictor, XGBoosterPredictFromDense, nthread 1, 'value' output
 *                (bench/xgboost-c/predict_bench.cc, run as a child process; build with
 *                bench/xgboost-c/build.sh, needs Debian's libxgboost-dev)
 *   ml-xgboost : the npm package's WASM predict (number[][] in, -1 = missing), on the same model
 *                converted to the pre-1.0 legacy binary format it loads (see toMlXgboostLegacy)
 *
 * Before timing, every evaluator's outputs are compared with the C predictor's on every row:
 * ours must match within 1e-6 (margins and values) or the bench fails, so a fast-but-wrong
 * evaluator cannot report a win. ml-xgboost's differences are reported (it treats a genuine -1.0
 * feature value as missing, so rows containing -1 are excluded from its check and counted).
 *
 * Rounds alternate the three evaluators so machine noise hits them alike; the table shows each
 * round's median per call and the median over rounds.
 *
 *   npx tsx bench/trees-predict.ts [--model logistic_t500_d6] [--sizes 1,20,1000] [--seconds 1] [--rounds 3]
 *                                  [--no-ml] [--kernel auto|scalar|avx2|avx512] [--json out.json]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTreeModel } from '../src/tiers/fast-path/load-tree-model.js';
import { treeKernelName, type TreeModel } from '../src/tiers/fast-path/tree-model.js';
import type { NativeKernel } from '../src/tiers/fast-path/native-trees.js';
import { packageRoot } from '../src/util/package-root.js';

interface Args {
  model: string;
  sizes: number[];
  seconds: number;
  rounds: number;
  ml: boolean;
  kernel: NativeKernel;
  json: string | undefined;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    model: 'logistic_t500_d6',
    sizes: [1, 20, 1000],
    seconds: 1,
    rounds: 3,
    ml: true,
    kernel: 0,
    json: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--model') args.model = next();
    else if (a === '--sizes') args.sizes = next().split(',').map(Number);
    else if (a === '--seconds') args.seconds = Number(next());
    else if (a === '--rounds') args.rounds = Number(next());
    else if (a === '--no-ml') args.ml = false;
    else if (a === '--json') args.json = next();
    else if (a === '--kernel') {
      const k = next();
      const map: Record<string, NativeKernel> = { auto: 0, scalar: 1, avx2: 2, avx512: 3 };
      if (!(k in map)) throw new Error(`unknown kernel ${k}`);
      args.kernel = map[k]!;
    } else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

interface Timing {
  medianUs: number;
  p99Us: number;
  calls: number;
}

function summarize(samples: number[]): Timing {
  samples.sort((a, b) => a - b);
  return {
    medianUs: samples[Math.floor(samples.length / 2)]!,
    p99Us: samples[Math.min(samples.length - 1, Math.floor(samples.length * 0.99))]!,
    calls: samples.length,
  };
}

/** Calls fn repeatedly for `seconds` (at least 50 calls), timing each call with hrtime. */
function timeCalls(fn: () => unknown, seconds: number): Timing {
  for (let i = 0; i < 20; i++) fn();
  const samples: number[] = [];
  const start = process.hrtime.bigint();
  const budget = BigInt(Math.round(seconds * 1e9));
  for (;;) {
    const t0 = process.hrtime.bigint();
    fn();
    const t1 = process.hrtime.bigint();
    samples.push(Number(t1 - t0) / 1000);
    if (samples.length >= 50 && t1 - start > budget) break;
  }
  return summarize(samples);
}

function readCsvRows(path: string, numFeatures: number): Float32Array[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const cells = line.split(',');
      if (cells.length !== numFeatures) throw new Error(`${path}: expected ${numFeatures} columns`);
      return Float32Array.from(cells, (c) => (c.trim().toLowerCase() === 'nan' ? Number.NaN : Number(c)));
    });
}

/**
 * XGBoost 1.7 can still write the deprecated binary format, but pre-1.0 XGBoost (ml-xgboost's
 * WASM build) misreads it: 1.7 prefixes "binf", stores its version in the learner header's
 * reserved words, writes 0 in GBTreeModelParam's num_feature and num_output_group, and keeps
 * base_score as a probability where pre-1.0 kept the margin. This rewrites exactly those fields
 * (no tree bytes change); the bench then checks ml-xgboost's
 * predictions against XGBoost's own, so a wrong conversion shows up as a parity failure.
 */
function toMlXgboostLegacy(bytes: Uint8Array, numFeatures: number, numGroups: number): Uint8Array {
  let b = bytes;
  if (b[0] === 0x62 && b[1] === 0x69 && b[2] === 0x6e && b[3] === 0x66) b = b.subarray(4); // "binf"
  const out = new Uint8Array(b);
  const view = new DataView(out.buffer);
  out.fill(0, 20, 28); // LearnerModelParam major/minor version -> reserved (0) as pre-1.0 wrote it
  let off = 136; // sizeof(LearnerModelParam)
  const objLen = Number(view.getBigUint64(off, true));
  const objective = new TextDecoder().decode(out.subarray(off + 8, off + 8 + objLen));
  // Pre-1.0 stored base_score already mapped to margin space; 1.7 stores the probability.
  if (objective === 'binary:logistic' || objective === 'reg:logistic') {
    const p = view.getFloat32(0, true);
    view.setFloat32(0, Math.fround(-Math.log(1 / p - 1)), true);
  }
  for (let s = 0; s < 2; s++) off += 8 + Number(view.getBigUint64(off, true)); // objective, booster names
  view.setInt32(off + 8, numFeatures, true); // GBTreeModelParam.num_feature
  view.setInt32(off + 24, numGroups, true); // GBTreeModelParam.num_output_group
  return out;
}

interface CResult {
  rows: number;
  calls: number;
  medianUs: number;
  p99Us: number;
  margin: number[];
  value: number[];
}

function runCPredictor(
  helper: string,
  model: string,
  rowsFile: string,
  nf: number,
  sizes: number[],
  seconds: number,
  saveLegacy?: string,
): CResult[] {
  const argv = [model, rowsFile, String(nf), sizes.join(','), String(seconds)];
  if (saveLegacy) argv.push('--save-legacy', saveLegacy);
  const out = execFileSync(helper, argv, { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  return (JSON.parse(out) as { results: CResult[] }).results;
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>, skipRow?: (r: number) => boolean, perRow = 1): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    if (skipRow?.(Math.floor(i / perRow))) continue;
    const x = a[i]!;
    const y = b[i]!;
    const d = Math.abs(x - y) / Math.max(1, Math.abs(y));
    if (!(d <= worst)) worst = Number.isNaN(d) ? Number.POSITIVE_INFINITY : d;
  }
  return worst;
}

const fmt = (v: number): string => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const root = packageRoot();
  const fixtures = join(root, '..', 'shared', 'fixtures', 'xgboost');
  const modelPath = join(fixtures, `${args.model}.json`);
  const model = (await loadTreeModel(modelPath)) as TreeModel & {
    predictWithKernel(
      r: Float32Array,
      n: number,
      o: { output: 'margin' | 'value' },
      k: NativeKernel,
    ): Float32Array | Float64Array;
    layout: string;
  };
  const nf = model.numFeatures;
  const ng = model.numOutputs;
  const base = readCsvRows(join(fixtures, `${args.model}.X.csv`), nf);
  const maxRows = Math.max(...args.sizes);
  const matrix = new Float32Array(maxRows * nf);
  for (let r = 0; r < maxRows; r++) matrix.set(base[r % base.length]!, r * nf);

  const tmp = mkdtempSync(join(tmpdir(), 'rg-trees-bench-'));
  try {
    const rowsFile = join(tmp, 'rows.f32');
    writeFileSync(rowsFile, new Uint8Array(matrix.buffer));

    // --- XGBoost C helper
    const helper = join(root, 'build', 'xgboost-c', 'predict_bench');
    if (!existsSync(helper)) {
      const built = spawnSync(join(root, 'bench', 'xgboost-c', 'build.sh'), { stdio: 'inherit' });
      if (built.status !== 0) throw new Error('cannot build the XGBoost C helper (apt-get install -y libxgboost-dev)');
    }
    const legacyPath = join(tmp, 'model.legacy.bin');
    const cCheck = runCPredictor(helper, modelPath, rowsFile, nf, args.sizes, 0.05, legacyPath);

    // --- correctness: ours vs the C predictor, every size, margins and values
    const tolerance = 1e-6;
    for (const c of cCheck) {
      const rows = matrix.subarray(0, c.rows * nf);
      const m = model.predictWithKernel(rows, c.rows, { output: 'margin' }, args.kernel);
      const v = model.predictWithKernel(rows, c.rows, { output: 'value' }, args.kernel);
      const dm = maxDiff(m, c.margin);
      const dv = maxDiff(v, c.value);
      console.log(
        `check ours vs xgboost-c @${c.rows} rows: max |diff| margin ${dm.toExponential(2)}, value ${dv.toExponential(2)}`,
      );
      if (!(dm <= tolerance && dv <= tolerance)) {
        throw new Error(`ours differs from XGBoost's C predictor by more than ${tolerance} at ${c.rows} rows`);
      }
    }

    // --- ml-xgboost on the same model (converted), number[][] input with -1 as missing
    let mlPredict: ((n: number) => unknown) | undefined;
    let mlNote = 'ml-xgboost skipped (--no-ml)';
    if (args.ml) {
      const require = createRequire(import.meta.url);
      const silence = console.warn;
      console.warn = () => {};
      const XGBoost = (await (require('ml-xgboost') as Promise<unknown>)) as {
        load(m: { name: string; model: number[]; options: Record<string, string> }): {
          predict(x: number[][]): number[];
          free(): void;
        };
      };
      console.warn = silence;
      const legacy = toMlXgboostLegacy(new Uint8Array(readFileSync(legacyPath)), nf, ng);
      const ml = XGBoost.load({ name: 'ml-xgboost', model: Array.from(legacy), options: {} });
      const asArrays = Array.from({ length: maxRows }, (_, r) =>
        Array.from(matrix.subarray(r * nf, (r + 1) * nf), (x) => (Number.isNaN(x) ? -1 : x)),
      );
      const hasMinusOne = (r: number): boolean => matrix.subarray(r * nf, (r + 1) * nf).includes(-1);
      const biggest = cCheck[cCheck.length - 1]!;
      const mlOut = ml.predict(asArrays.slice(0, biggest.rows)).flat();
      let excluded = 0;
      for (let r = 0; r < biggest.rows; r++) if (hasMinusOne(r)) excluded++;
      const dml = maxDiff(mlOut, biggest.value, hasMinusOne, ng);
      mlNote =
        `ml-xgboost ran ${args.model} converted to the pre-1.0 binary format; vs xgboost-c on ${biggest.rows - excluded}/${biggest.rows} rows ` +
        `(rows with a genuine -1.0 excluded: ml-xgboost reads -1 as missing): max |diff| ${dml.toExponential(2)}`;
      console.log(mlNote);
      if (!(dml <= 1e-5)) {
        console.log(
          'ml-xgboost outputs do not match XGBoost; its timings are still shown but it computes something else',
        );
      }
      mlPredict = (n: number) => ml.predict(asArrays.slice(0, n));
    }

    // --- timing rounds
    type Row = { ours: Timing[]; c: Timing[]; ml: Timing[] };
    const table = new Map<number, Row>(args.sizes.map((n) => [n, { ours: [], c: [], ml: [] }]));
    for (let round = 0; round < args.rounds; round++) {
      const cRes = runCPredictor(helper, modelPath, rowsFile, nf, args.sizes, args.seconds);
      for (const c of cRes) table.get(c.rows)!.c.push(c);
      for (const n of args.sizes) {
        const rows = matrix.subarray(0, n * nf);
        table
          .get(n)!
          .ours.push(timeCalls(() => model.predictWithKernel(rows, n, { output: 'value' }, args.kernel), args.seconds));
        if (mlPredict) table.get(n)!.ml.push(timeCalls(() => mlPredict!(n), args.seconds));
      }
      process.stderr.write(`round ${round + 1}/${args.rounds} done\n`);
    }

    console.log(
      `\nmodel ${args.model}: ${model.numTrees} trees, ${nf} features, layout ${model.layout}, kernel ${args.kernel === 0 ? treeKernelName() : ['auto', 'scalar', 'avx2', 'avx512'][args.kernel]}; ` +
        `${args.rounds} rounds x ${args.seconds}s per size per evaluator; µs per call (median of round medians; p99 median of round p99s)`,
    );
    console.log(
      'rows | ours med | ours p99 | xgb-c med | xgb-c p99 | ml-xgb med | ml-xgb p99 | xgb-c/ours | ml-xgb/ours | per-round xgb-c/ours',
    );
    const summary: unknown[] = [];
    for (const [n, row] of table) {
      const om = median(row.ours.map((t) => t.medianUs));
      const op = median(row.ours.map((t) => t.p99Us));
      const cm = median(row.c.map((t) => t.medianUs));
      const cp = median(row.c.map((t) => t.p99Us));
      const mm = row.ml.length ? median(row.ml.map((t) => t.medianUs)) : Number.NaN;
      const mp = row.ml.length ? median(row.ml.map((t) => t.p99Us)) : Number.NaN;
      const perRound = row.ours.map((t, i) => (row.c[i]!.medianUs / t.medianUs).toFixed(1)).join(' ');
      console.log(
        `${n} | ${fmt(om)} | ${fmt(op)} | ${fmt(cm)} | ${fmt(cp)} | ${row.ml.length ? fmt(mm) : '-'} | ${row.ml.length ? fmt(mp) : '-'} | ` +
          `${(cm / om).toFixed(1)}x | ${row.ml.length ? `${(mm / om).toFixed(0)}x` : '-'} | ${perRound}`,
      );
      summary.push({
        rows: n,
        ours: { medianUs: om, p99Us: op },
        xgboostC: { medianUs: cm, p99Us: cp },
        mlXgboost: { medianUs: mm, p99Us: mp },
        speedupVsC: cm / om,
      });
    }
    console.log(mlNote);
    if (args.json)
      writeFileSync(args.json, JSON.stringify({ model: args.model, kernel: treeKernelName(), summary }, null, 2));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    model.dispose();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
