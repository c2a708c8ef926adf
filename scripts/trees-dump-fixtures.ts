/**
 * Writes every XGBoost parity fixture as a flat "RGTD" dump the standalone native test driver
 * (native/test/trees_test.cc) reads: the loader's IR flattened exactly as createTreeModel passes
 * it to the addon, the fixture's test matrix, and XGBoost's expected margins.
 *
 *   npx tsx scripts/trees-dump-fixtures.ts OUT_DIR
 *
 * Layout (little-endian): u32 magic "RGTD", numFeatures, numGroups, objectiveCode, f32 baseMargin,
 * u32 numTrees, totalNodes, nRows; i32 nodeOffsets[numTrees+1], left[N], right[N], splitIndex[N];
 * f32 splitCondition[N]; u8 defaultLeft[N] padded to 4; i32 groups[T]; f32 weights[T];
 * f32 rows[nRows*numFeatures]; f32 expectedMargin[nRows*numGroups].
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadXGBoostJson } from '../src/tiers/fast-path/loaders/xgboost-json.js';
import { NATIVE_OBJECTIVES, flattenEnsemble } from '../src/tiers/fast-path/native-trees.js';
import { packageRoot } from '../src/util/package-root.js';

const outDir = process.argv[2];
if (!outDir) {
  console.error('usage: trees-dump-fixtures.ts OUT_DIR');
  process.exit(1);
}
mkdirSync(outDir, { recursive: true });
const fixtures = resolve(packageRoot(), '..', 'shared', 'fixtures', 'xgboost');
const manifest = JSON.parse(readFileSync(join(fixtures, 'manifest.json'), 'utf8')) as { models: { name: string }[] };

for (const { name } of manifest.models) {
  const ir = loadXGBoostJson(readFileSync(join(fixtures, `${name}.json`), 'utf8'));
  const spec = flattenEnsemble(ir);
  const X = readFileSync(join(fixtures, `${name}.X.csv`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(',').map((v) => (v.trim() === 'nan' ? Number.NaN : Number(v))));
  const expected = JSON.parse(readFileSync(join(fixtures, `${name}.expected.json`), 'utf8')) as { margin: number[][] };
  const T = spec.groups.length;
  const N = spec.left.length;
  const parts: Uint8Array[] = [];
  const u32 = (...v: number[]) => parts.push(new Uint8Array(Uint32Array.from(v).buffer));
  const f32 = (a: ArrayLike<number>) => parts.push(new Uint8Array(Float32Array.from(a).buffer));
  const i32 = (a: ArrayLike<number>) => parts.push(new Uint8Array(Int32Array.from(a).buffer));
  u32(
    0x44544752,
    spec.numFeatures,
    spec.numGroups,
    NATIVE_OBJECTIVES.indexOf(spec.objective as (typeof NATIVE_OBJECTIVES)[number]),
  );
  f32([spec.baseMargin]);
  u32(T, N, X.length);
  i32(spec.nodeOffsets);
  i32(spec.left);
  i32(spec.right);
  i32(spec.splitIndex);
  f32(spec.splitCondition);
  const dl = new Uint8Array((N + 3) & ~3);
  dl.set(spec.defaultLeft);
  parts.push(dl);
  i32(spec.groups);
  f32(spec.weights);
  f32(X.flat());
  f32(expected.margin.flat());
  writeFileSync(join(outDir, `${name}.rgtd`), Buffer.concat(parts));
  console.log(`${name}: ${T} trees, ${N} nodes, ${X.length} rows`);
}
