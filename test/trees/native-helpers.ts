/** Helpers for the native evaluator tests: small hand-built IRs and kernel-aware predict. */
import type { TreeEnsembleIR, TreeIR, TreeObjective } from '../../src/tiers/fast-path/model-ir.js';
import type { NativeKernel } from '../../src/tiers/fast-path/native-trees.js';
import type { TreeModel, TreePredictOptions } from '../../src/tiers/fast-path/tree-model.js';

/** A node of a hand-written tree: a split or a leaf. */
export type NodeSpec = { f: number; t: number; dl?: boolean; l: number; r: number } | { leaf: number };

export function tree(nodes: NodeSpec[], group = 0, weight = 1): TreeIR {
  const n = nodes.length;
  const left = new Int32Array(n);
  const right = new Int32Array(n);
  const splitIndex = new Int32Array(n);
  const splitCondition = new Float32Array(n);
  const defaultLeft = new Uint8Array(n);
  nodes.forEach((node, i) => {
    if ('leaf' in node) {
      left[i] = -1;
      right[i] = -1;
      splitCondition[i] = node.leaf;
    } else {
      left[i] = node.l;
      right[i] = node.r;
      splitIndex[i] = node.f;
      splitCondition[i] = node.t;
      defaultLeft[i] = node.dl ? 1 : 0;
    }
  });
  return { group, weight, left, right, splitIndex, splitCondition, defaultLeft };
}

/** One split on feature f at threshold t, leaves a (left) and b (right). */
export function stump(f: number, t: number, a: number, b: number, dl = false, group = 0, weight = 1): TreeIR {
  return tree([{ f, t, dl, l: 1, r: 2 }, { leaf: a }, { leaf: b }], group, weight);
}

export function ensemble(
  trees: TreeIR[],
  extra: Partial<TreeEnsembleIR> & { objective?: TreeObjective } = {},
): TreeEnsembleIR {
  return {
    booster: 'gbtree',
    objective: 'reg:squarederror',
    numFeatures: 4,
    numGroups: 1,
    baseMargin: 0,
    trees,
    ...extra,
  };
}

/** A left-leaning chain of `depth` splits with all-zero leaves: adds 0 to every margin, forces the generic layout. */
export function deepZeroTree(depth: number, numFeatures: number, group = 0): TreeIR {
  const nodes: NodeSpec[] = [];
  for (let i = 0; i < depth; i++) {
    const at = nodes.length;
    nodes.push({ f: i % numFeatures, t: 0.25 * i, dl: i % 3 === 0, l: at + 2, r: at + 1 });
    nodes.push({ leaf: 0 });
  }
  nodes.push({ leaf: 0 });
  return tree(nodes, group, 1);
}

export type KernelModel = TreeModel & {
  readonly layout: 'perfect' | 'generic';
  predictWithKernel(
    rows: Float32Array,
    nRows: number,
    options: TreePredictOptions | undefined,
    kernel: NativeKernel,
  ): Float32Array | Float64Array;
};

export const KERNELS: readonly { name: string; id: NativeKernel }[] = [
  { name: 'auto', id: 0 },
  { name: 'scalar', id: 1 },
  { name: 'avx2', id: 2 },
  { name: 'avx512', id: 3 },
];
