// Drives the built addon's tree evaluator with plain JS (no TypeScript loader, so it can run
// under valgrind): compiles every RGTD dump given (scripts/trees-dump-fixtures.ts), predicts
// sync and async, margins and values, checks margins against XGBoost's, disposes.
//   valgrind --error-exitcode=1 node scripts/trees-valgrind-smoke.mjs DUMP...
// RELEVANCE_GATE_ADDON=path loads another build of the addon (as the package loader does), e.g. to
// run a baseline x86-64 build on an emulated older CPU (qemu-x86_64 -cpu Conroe node ...).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const addon = require(process.env.RELEVANCE_GATE_ADDON ?? '../build/Release/relevance_gate.node');
// The native enum's order, as TREE_OBJECTIVES in src/tiers/fast-path/model-ir.ts: repeated here because
// this script runs as plain JS (no TypeScript loader under valgrind) and may not import the .ts source.
const objectives = [
  'binary:logistic',
  'binary:logitraw',
  'reg:logistic',
  'reg:squarederror',
  'rank:pairwise',
  'rank:ndcg',
  'rank:map',
  'multi:softprob',
  'multi:softmax',
];

function readDump(path) {
  const b = readFileSync(path);
  const buf = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  const u32 = new Uint32Array(buf, 0, 8);
  const [, numFeatures, numGroups, objective, , numTrees, totalNodes, nRows] = u32;
  const baseMargin = new Float32Array(buf, 16, 1)[0];
  let off = 32;
  const take = (Ctor, n) => {
    const a = new Ctor(buf.slice(off, off + n * Ctor.BYTES_PER_ELEMENT));
    off += n * Ctor.BYTES_PER_ELEMENT;
    return a;
  };
  const spec = { numFeatures, numGroups, objective: objectives[objective], baseMargin };
  spec.nodeOffsets = take(Int32Array, numTrees + 1);
  spec.left = take(Int32Array, totalNodes);
  spec.right = take(Int32Array, totalNodes);
  spec.splitIndex = take(Int32Array, totalNodes);
  spec.splitCondition = take(Float32Array, totalNodes);
  spec.defaultLeft = take(Uint8Array, (totalNodes + 3) & ~3).subarray(0, totalNodes);
  spec.groups = take(Int32Array, numTrees);
  spec.weights = take(Float32Array, numTrees);
  const rows = take(Float32Array, nRows * numFeatures);
  const expected = take(Float32Array, nRows * numGroups);
  return { spec, rows, expected, nRows };
}

let failures = 0;
for (const path of process.argv.slice(2)) {
  const { spec, rows, expected, nRows } = readDump(path);
  const image = addon.treesCompile(spec);
  const shared = new Uint8Array(new SharedArrayBuffer(image.byteLength));
  shared.set(image);
  const ev = new addon.TreeEvaluator(shared);
  const info = ev.info();
  const margins = new Float32Array(nRows * info.numGroups);
  ev.predict(rows, nRows, margins, false);
  const values = new Float64Array(nRows * info.numValueOutputs);
  ev.predict(rows, nRows, values, true);
  const asyncMargins = await ev.predictAsync(rows, nRows, false);
  let worst = 0;
  for (let i = 0; i < margins.length; i++) {
    worst = Math.max(worst, Math.abs(margins[i] - expected[i]) / Math.max(1, Math.abs(expected[i])));
    if (asyncMargins[i] !== margins[i]) failures++;
  }
  if (!(worst <= 1e-6) || values.some((v) => !Number.isFinite(v))) failures++;
  try {
    ev.predict(rows, nRows + 1, margins, false);
    failures++;
  } catch {}
  ev.dispose();
  try {
    ev.predict(rows, nRows, margins, false);
    failures++;
  } catch {}
  console.log(`${path}: layout ${info.layout}, kernel ${addon.treesKernel()}, max margin diff ${worst}`);
}
if (failures) {
  console.error(`${failures} failures`);
  process.exit(1);
}
console.log('valgrind smoke ok');
