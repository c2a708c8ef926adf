/**
 * LambdaMART's Newton leaf step on a tree whose STRUCTURE was fitted elsewhere (ml-xgboost, a
 * least-squares fit to the lambdas): rows are routed through the tree here exactly as the native
 * evaluator routes them (x < threshold goes left in float32; NaN = missing follows default_left),
 * and each leaf gets learningRate × Σλ / (Σw + ε) over the training rows that reach it.
 * Leaf values are rounded to float32, the precision the model file and the evaluator use, so
 * training scores are the summed stored leaves.
 */
import { InvalidArgumentError } from '../../errors.js';
import { positiveNumber } from '../../util/validate-options.js';
import type { TreeIR } from '../../tiers/fast-path/model-ir.js';

/** Node id of the leaf that row `row` of a row-major matrix reaches. */
export function leafOf(tree: TreeIR, features: Float32Array, row: number, numFeatures: number): number {
  let node = 0;
  const base = row * numFeatures;
  for (let steps = 0; steps <= tree.left.length; steps++) {
    const left = tree.left[node]!;
    if (left === -1) return node;
    const x = features[base + tree.splitIndex[node]!]!;
    if (Number.isNaN(x)) node = tree.defaultLeft[node] === 1 ? left : tree.right[node]!;
    else node = x < tree.splitCondition[node]! ? left : tree.right[node]!;
  }
  throw new InvalidArgumentError('tree has a cycle');
}

/** Leaf node id per row. */
export function assignLeaves(tree: TreeIR, features: Float32Array, numRows: number, numFeatures: number): Int32Array {
  if (features.length !== numRows * numFeatures) {
    throw new InvalidArgumentError(`features has ${features.length} values, expected ${numRows} × ${numFeatures}`);
  }
  const out = new Int32Array(numRows);
  for (let r = 0; r < numRows; r++) out[r] = leafOf(tree, features, r, numFeatures);
  return out;
}

export interface NewtonLeafOptions {
  readonly learningRate: number;
  /** Added to Σw so leaves with (almost) no curvature stay finite. */
  readonly epsilon: number;
}

/**
 * The tree with every leaf replaced by learningRate × Σλ / (Σw + ε) over the rows assigned to it
 * (0 for a leaf no row reaches). Inner nodes are unchanged.
 */
export function refitLeaves(
  tree: TreeIR,
  leafOfRow: Int32Array,
  lambdas: Float64Array,
  weights: Float64Array,
  options: NewtonLeafOptions,
): TreeIR {
  positiveNumber('learningRate', options.learningRate);
  positiveNumber('epsilon', options.epsilon);
  if (leafOfRow.length !== lambdas.length || lambdas.length !== weights.length) {
    throw new InvalidArgumentError('leafOfRow, lambdas and weights must have one entry per row');
  }
  const n = tree.left.length;
  const sumLambda = new Float64Array(n);
  const sumWeight = new Float64Array(n);
  for (let r = 0; r < leafOfRow.length; r++) {
    const leaf = leafOfRow[r]!;
    if (leaf < 0 || leaf >= n || tree.left[leaf] !== -1)
      throw new InvalidArgumentError(`row ${r} is assigned to ${leaf}, not a leaf`);
    sumLambda[leaf]! += lambdas[r]!;
    sumWeight[leaf]! += weights[r]!;
  }
  const splitCondition = Float32Array.from(tree.splitCondition);
  for (let node = 0; node < n; node++) {
    if (tree.left[node] !== -1) continue;
    splitCondition[node] = Math.fround(
      (options.learningRate * sumLambda[node]!) / (sumWeight[node]! + options.epsilon),
    );
  }
  return { ...tree, splitCondition };
}

/** scores[r] += leaf value of row r (float64 accumulation of float32 leaves). */
export function addLeafValues(tree: TreeIR, leafOfRow: Int32Array, scores: Float64Array): void {
  for (let r = 0; r < leafOfRow.length; r++) scores[r]! += tree.splitCondition[leafOfRow[r]!]!;
}
