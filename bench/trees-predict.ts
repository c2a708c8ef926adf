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
 *
 * --peers DIR: the peer comparison of issue 39 (docs/bench.md, "Tree tier against its peers") on
 * the LightGBM model and rows python/bench_trees_peers.py make DIR wrote (one model, one row file,
 * every engine), 1 thread each:
 *   ours          : loadTreeModel(DIR/model.txt), predict(..., { output: 'value' })
 *   lightgbm-c    : LGBM_BoosterPredictForMat (PyPI wheel's lib_lightgbm.so; the parity reference)
 *   lightgbm-c-1r : LGBM_BoosterPredictForMatSingleRowFast, one call per row
 *   xgboost-c     : XGBoost 3.x XGBoosterPredictFromDense (PyPI wheel's libxgboost.so) on
 *                   DIR/model.xgb.json, the same trees converted
 *   tl2cgen-c     : Treelite/TL2cgen generated C (DIR/tl2cgen.so), its predict() called from C
 *   xgboost-py, lightgbm-py, lleaves, tl2cgen-py : python/bench_trees_peers.py time (inplace_predict,
 *                   Booster.predict, lleaves.Model.predict, tl2cgen.Predictor.predict)
 * Helpers: bench/tree-peers-c/build.sh and bench/xgboost-c/build.sh --xgboost-lib WHEEL_LIB_DIR
 * (built on first use). Ours must match LightGBM's C API within 1e-6 (margins and values) at every
 * batch size or the bench fails; every peer's difference is printed. Rounds rotate the engines.
 *   npx tsx bench/trees-predict.ts --peers /tmp/rg-trees-peers [--sizes 1,20,100,1000] [--seconds 1]
 *                                  [--rounds 5] [--json out.json] [--plot out.svg]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
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
  peers: string | undefined;
  plot: string | undefined;
  sizesGiven: boolean;
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
    peers: undefined,
    plot: undefined,
    sizesGiven: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--model') args.model = next();
    else if (a === '--sizes') {
      args.sizes = next().split(',').map(Number);
      args.sizesGiven = true;
    } else if (a === '--seconds') args.seconds = Number(next());
    else if (a === '--rounds') args.rounds = Number(next());
    else if (a === '--no-ml') args.ml = false;
    else if (a === '--json') args.json = next();
    else if (a === '--peers') args.peers = next();
    else if (a === '--plot') args.plot = next();
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
  extra: string[] = [],
): CResult[] {
  const argv = [model, rowsFile, String(nf), sizes.join(','), String(seconds), ...extra];
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
  if (args.peers !== undefined) {
    await runPeers(args, args.peers);
    return;
  }
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
    const cCheck = runCPredictor(helper, modelPath, rowsFile, nf, args.sizes, 0.05, ['--save-legacy', legacyPath]);

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

// ---------------------------------------------------------------------------------------------
// --peers DIR: ours vs LightGBM / XGBoost 3.x / TL2cgen / lleaves on one LightGBM model

interface PeerTiming extends Timing {
  rows: number;
}

interface PythonPeers {
  versions: Record<string, string>;
  checkRows: number;
  maxAbsDiffVsLightgbm: Record<string, number>;
  results: Record<string, PeerTiming[]>;
}

interface PeerMeta {
  trees: number;
  features: number;
  rows: number;
  depth: number;
  leaves_total: number;
  versions: Record<string, string>;
  [key: string]: unknown;
}

function buildIfMissing(outputs: string[], script: string, scriptArgs: string[]): void {
  if (outputs.every((o) => existsSync(o))) return;
  const built = spawnSync('bash', [script, ...scriptArgs], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`${script} failed (see its message; bash python/setup-venv.sh --with-trees)`);
}

function sitePackages(root: string): string {
  const lib = join(root, 'python', '.venv', 'lib');
  const py = existsSync(lib) ? readdirSync(lib).find((d) => d.startsWith('python3')) : undefined;
  if (py === undefined) throw new Error('python/.venv missing: bash python/setup-venv.sh --with-trees');
  return join(lib, py, 'site-packages');
}

function runPythonPeers(python: string, script: string, dir: string, sizes: number[], seconds: number): PythonPeers {
  const out = execFileSync(python, [script, 'time', dir, '--sizes', sizes.join(','), '--seconds', String(seconds)], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out) as PythonPeers;
}

const loadAvg = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/** µs per row against batch size, log-log, one line per engine (ours drawn thick). */
function peersSvg(title: string, sizes: number[], series: { name: string; perRowUs: number[] }[]): string {
  const W = 760;
  const H = 440;
  const L = 70;
  const R = 190;
  const T = 40;
  const B = 50;
  const all = series.flatMap((s) => s.perRowUs).filter((v) => v > 0 && Number.isFinite(v));
  const yLo = Math.floor(Math.log10(Math.min(...all)));
  const yHi = Math.ceil(Math.log10(Math.max(...all)));
  const xLo = Math.log10(Math.min(...sizes));
  const xHi = Math.log10(Math.max(...sizes));
  const x = (n: number): number => L + ((Math.log10(n) - xLo) / (xHi - xLo || 1)) * (W - L - R);
  const y = (v: number): number => T + (1 - (Math.log10(v) - yLo) / (yHi - yLo || 1)) * (H - T - B);
  const colors = ['#d62728', '#1f77b4', '#aec7e8', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="22" font-size="14">${title}</text>`,
  ];
  for (let e = yLo; e <= yHi; e++) {
    const v = 10 ** e;
    parts.push(
      `<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${L - 8}" y="${y(v) + 4}" text-anchor="end">${v >= 1 ? v.toFixed(0) : v.toPrecision(1)}</text>`,
    );
  }
  for (const n of sizes) {
    parts.push(
      `<line x1="${x(n)}" x2="${x(n)}" y1="${T}" y2="${H - B}" stroke="#eee"/>`,
      `<text x="${x(n)}" y="${H - B + 18}" text-anchor="middle">${n}</text>`,
    );
  }
  parts.push(
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">rows per call (batch size)</text>`,
    `<text transform="translate(18 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">µs per row (log)</text>`,
  );
  series.forEach((s, i) => {
    const color = colors[i % colors.length]!;
    const width = i === 0 ? 3 : 1.5;
    const pts = sizes.map((n, k) => `${x(n).toFixed(1)},${y(s.perRowUs[k]!).toFixed(1)}`).join(' ');
    parts.push(`<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="${width}"/>`);
    for (const [k, n] of sizes.entries()) {
      parts.push(`<circle cx="${x(n).toFixed(1)}" cy="${y(s.perRowUs[k]!).toFixed(1)}" r="3" fill="${color}"/>`);
    }
    const ly = T + 10 + i * 20;
    parts.push(
      `<line x1="${W - R + 15}" x2="${W - R + 40}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="${width}"/>`,
      `<text x="${W - R + 46}" y="${ly + 4}">${s.name}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

async function runPeers(args: Args, dir: string): Promise<void> {
  const root = packageRoot();
  const sizes = args.sizesGiven ? args.sizes : [1, 20, 100, 1000];
  const python = join(root, 'python', '.venv', 'bin', 'python');
  const pyScript = join(root, 'python', 'bench_trees_peers.py');
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as PeerMeta;
  const loadStart = loadAvg();
  console.log(`load average at start: ${loadStart}`);

  const model = (await loadTreeModel(join(dir, 'model.txt'))) as TreeModel & {
    predictWithKernel(
      r: Float32Array,
      n: number,
      o: { output: 'margin' | 'value' },
      k: NativeKernel,
    ): Float32Array | Float64Array;
    layout: string;
  };
  try {
    const nf = model.numFeatures;
    if (nf !== meta.features) throw new Error(`model has ${nf} features, meta.json says ${meta.features}`);
    const rowsFile = join(dir, 'rows.f32');
    const raw = readFileSync(rowsFile);
    const matrix = new Float32Array(raw.byteLength / 4);
    new Uint8Array(matrix.buffer).set(raw);
    const maxRows = Math.max(...sizes);
    if (matrix.length < maxRows * nf) throw new Error(`${rowsFile} holds fewer than ${maxRows} rows`);

    // --- C helpers (built on first use)
    const wheelXgb = join(sitePackages(root), 'xgboost', 'lib');
    const xgbHelper = join(root, 'build', 'xgboost-c', 'predict_bench_pypi');
    buildIfMissing([xgbHelper], join(root, 'bench', 'xgboost-c', 'build.sh'), ['--xgboost-lib', wheelXgb]);
    const lgbHelper = join(root, 'build', 'tree-peers-c', 'lightgbm_bench');
    const tlHelper = join(root, 'build', 'tree-peers-c', 'tl2cgen_bench');
    buildIfMissing([lgbHelper, tlHelper], join(root, 'bench', 'tree-peers-c', 'build.sh'), []);
    const cEngines = [
      { name: 'lightgbm-c', helper: lgbHelper, model: join(dir, 'model.txt'), extra: [] as string[] },
      { name: 'lightgbm-c-1r', helper: lgbHelper, model: join(dir, 'model.txt'), extra: ['--single-row-fast'] },
      { name: 'xgboost-c', helper: xgbHelper, model: join(dir, 'model.xgb.json'), extra: [] as string[] },
      { name: 'tl2cgen-c', helper: tlHelper, model: join(dir, 'tl2cgen.so'), extra: [] as string[] },
    ];

    // --- correctness, every batch size: LightGBM's C API is the reference
    const checks: Record<string, { margin: number; value: number }> = {};
    const cCheck = new Map(
      cEngines.map((e) => [e.name, runCPredictor(e.helper, e.model, rowsFile, nf, sizes, 0.05, e.extra)]),
    );
    const reference = cCheck.get('lightgbm-c')!;
    const worst = (name: string, dm: number, dv: number): void => {
      const c = checks[name] ?? { margin: 0, value: 0 };
      checks[name] = { margin: Math.max(c.margin, dm), value: Math.max(c.value, dv) };
    };
    for (const [k, ref] of reference.entries()) {
      const rows = matrix.subarray(0, ref.rows * nf);
      const m = model.predictWithKernel(rows, ref.rows, { output: 'margin' }, args.kernel);
      const v = model.predictWithKernel(rows, ref.rows, { output: 'value' }, args.kernel);
      worst('ours', maxDiff(m, ref.margin), maxDiff(v, ref.value));
      for (const e of cEngines) {
        if (e.name === 'lightgbm-c') continue;
        const c = cCheck.get(e.name)![k]!;
        worst(e.name, maxDiff(c.margin, ref.margin), maxDiff(c.value, ref.value));
      }
    }
    const py = runPythonPeers(python, pyScript, dir, sizes, 0.05);
    for (const [name, d] of Object.entries(py.maxAbsDiffVsLightgbm)) checks[name] = { margin: Number.NaN, value: d };
    for (const [name, c] of Object.entries(checks)) {
      console.log(
        `check ${name} vs lightgbm: max |diff| margin ${Number.isNaN(c.margin) ? '-' : c.margin.toExponential(2)}, value ${c.value.toExponential(2)}`,
      );
    }
    const tolerance = 1e-6;
    if (!(checks.ours!.margin <= tolerance && checks.ours!.value <= tolerance)) {
      throw new Error(`ours differs from LightGBM's C API by more than ${tolerance}`);
    }
    for (const [name, c] of Object.entries(checks)) {
      if (!(c.value <= 1e-5)) console.log(`WARNING: ${name} does not match LightGBM within 1e-5; it is still timed`);
    }

    // --- timing rounds, engines rotated each round
    const engines = ['ours', ...cEngines.map((e) => e.name), ...Object.keys(py.results)];
    const times = new Map<string, Map<number, Timing[]>>(
      engines.map((e) => [e, new Map(sizes.map((n) => [n, [] as Timing[]]))]),
    );
    type Group = () => void;
    const groups: Group[] = [
      () => {
        for (const n of sizes) {
          const rows = matrix.subarray(0, n * nf);
          times
            .get('ours')!
            .get(n)!
            .push(timeCalls(() => model.predictWithKernel(rows, n, { output: 'value' }, args.kernel), args.seconds));
        }
      },
      ...cEngines.map((e) => () => {
        for (const r of runCPredictor(e.helper, e.model, rowsFile, nf, sizes, args.seconds, e.extra)) {
          times.get(e.name)!.get(r.rows)!.push(r);
        }
      }),
      () => {
        const res = runPythonPeers(python, pyScript, dir, sizes, args.seconds);
        for (const [name, list] of Object.entries(res.results)) {
          for (const r of list) times.get(name)!.get(r.rows)!.push(r);
        }
      },
    ];
    for (let round = 0; round < args.rounds; round++) {
      for (let g = 0; g < groups.length; g++) groups[(g + round) % groups.length]!();
      process.stderr.write(`round ${round + 1}/${args.rounds} done (load ${loadAvg()})\n`);
    }
    const loadEnd = loadAvg();

    // --- report
    const med = (e: string, n: number): number =>
      median(
        times
          .get(e)!
          .get(n)!
          .map((t) => t.medianUs),
      );
    const peerNames = engines.filter((e) => e !== 'ours');
    console.log(
      `\nmodel ${dir}/model.txt: ${model.numTrees} trees (depth <= ${meta.depth}, ${meta.leaves_total} leaves), ${nf} features, ` +
        `layout ${model.layout}, kernel ${args.kernel === 0 ? treeKernelName() : ['auto', 'scalar', 'avx2', 'avx512'][args.kernel]}; ` +
        `${args.rounds} rounds x ${args.seconds}s per size per engine, 1 thread; median of round medians`,
    );
    console.log(`\nµs per call\n| engine | ${sizes.join(' | ')} |\n|---|${sizes.map(() => '---:').join('|')}|`);
    for (const e of engines) console.log(`| ${e} | ${sizes.map((n) => fmt(med(e, n))).join(' | ')} |`);
    console.log(`\nµs per row\n| engine | ${sizes.join(' | ')} |\n|---|${sizes.map(() => '---:').join('|')}|`);
    for (const e of engines) console.log(`| ${e} | ${sizes.map((n) => fmt(med(e, n) / n)).join(' | ')} |`);
    console.log('\n| rows | ours µs/call | best peer | its µs/call | best peer / ours | per-round best/ours |');
    console.log('|---:|---:|---|---:|---:|---|');
    const summary = sizes.map((n) => {
      const best = peerNames.reduce((a, b) => (med(b, n) < med(a, n) ? b : a));
      const ours = med('ours', n);
      const perRound = times
        .get('ours')!
        .get(n)!
        .map((t, i) => {
          const bestThisRound = Math.min(...peerNames.map((p) => times.get(p)!.get(n)![i]!.medianUs));
          return (bestThisRound / t.medianUs).toFixed(2);
        })
        .join(' ');
      console.log(
        `| ${n} | ${fmt(ours)} | ${best} | ${fmt(med(best, n))} | ${(med(best, n) / ours).toFixed(2)}x | ${perRound} |`,
      );
      return {
        rows: n,
        medianUs: Object.fromEntries(engines.map((e) => [e, med(e, n)])),
        p99Us: Object.fromEntries(
          engines.map((e) => [
            e,
            median(
              times
                .get(e)!
                .get(n)!
                .map((t) => t.p99Us),
            ),
          ]),
        ),
        bestPeer: best,
        bestPeerOverOurs: med(best, n) / ours,
      };
    });
    console.log(`load average at end: ${loadEnd}`);
    const versions = { node: process.version, ...py.versions, xgboostC: 'PyPI wheel libxgboost.so (xgboost-cpu)' };
    const cpu = cpus()[0]?.model ?? 'unknown';
    console.log(`machine: ${cpu}, ${cpus().length} logical CPUs; versions ${JSON.stringify(versions)}`);
    if (args.json) {
      writeFileSync(
        args.json,
        JSON.stringify(
          {
            date: new Date().toISOString(),
            machine: { cpu, logicalCpus: cpus().length, loadStart, loadEnd },
            model: { ...meta, layout: model.layout, kernel: treeKernelName() },
            settings: { sizes, seconds: args.seconds, rounds: args.rounds, threads: 1 },
            versions,
            checks,
            summary,
          },
          null,
          2,
        ),
      );
    }
    if (args.plot) {
      const series = engines.map((e) => ({ name: e, perRowUs: sizes.map((n) => med(e, n) / n) }));
      writeFileSync(
        args.plot,
        peersSvg(`${model.numTrees} trees, ${nf} features, 1 thread: µs per row (lower is better)`, sizes, series),
      );
    }
  } finally {
    model.dispose();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
