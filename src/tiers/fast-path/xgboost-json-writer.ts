/**
 * Writes a TreeEnsembleIR as an XGBoost JSON model (the schema XGBoost 1.7 writes), so a model
 * trained in Node (legacy binary) or loaded from UBJSON can be inspected with and used by XGBoost
 * and other tools. Only what prediction needs is meaningful: training statistics (loss_changes,
 * sum_hessian, base_weights of inner nodes) are not in the IR and are written as 0.
 *
 * Floats are written as the shortest decimal that reads back to the same float32, so loading the
 * output (here or in XGBoost) reproduces every threshold, leaf and base_score bit for bit.
 * JSON cannot hold ±Infinity, so a model with an infinite threshold is refused
 * (UnsupportedModelError) rather than written with a changed value.
 */
import { UnsupportedModelError } from '../../errors.js';
import type { TreeEnsembleIR, TreeIR, TreeObjective } from './model-ir.js';
import { marginToBaseScore } from './loaders/objectives.js';

/** The XGBoost version whose schema this writer follows. */
export const WRITTEN_XGBOOST_VERSION = [1, 7, 4] as const;

/** Shortest decimal string that parses back to exactly this float32 value. */
export function formatFloat32(value: number): string {
  const v = Math.fround(value);
  if (!Number.isFinite(v)) throw new UnsupportedModelError(`cannot write ${v} to JSON`);
  if (Object.is(v, -0)) return '-0';
  for (let p = 1; p <= 9; p++) {
    const s = v.toPrecision(p);
    if (Math.fround(Number(s)) === v) return String(Number(s));
  }
  return String(v);
}

/** A raw JSON number token (so arrays can be joined without re-serializing). */
class Raw {
  constructor(readonly text: string) {}
}

function floats(arr: ArrayLike<number>, what: string): Raw {
  const parts: string[] = new Array<string>(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i] as number;
    if (!Number.isFinite(v))
      throw new UnsupportedModelError(`cannot write ${what}[${i}] = ${v} as XGBoost JSON (JSON has no infinity)`);
    // XGBoost's JSON reader types numbers by syntax: "1" is an Integer and fails where a float is expected.
    const t = formatFloat32(v);
    parts[i] = /[.eE]/.test(t) ? t : `${t}.0`;
  }
  return new Raw(`[${parts.join(',')}]`);
}

function ints(arr: ArrayLike<number>): Raw {
  return new Raw(`[${Array.prototype.join.call(arr, ',')}]`);
}

function zeros(n: number, token: '0' | '0.0'): Raw {
  return new Raw(n === 0 ? '[]' : `[${new Array<string>(n).fill(token).join(',')}]`);
}

function serialize(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(serialize).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${serialize(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

function objectiveConfig(objective: TreeObjective, numGroups: number): Record<string, unknown> {
  if (objective.startsWith('multi:')) {
    return { name: objective, softmax_multiclass_param: { num_class: String(numGroups) } };
  }
  if (objective.startsWith('rank:')) {
    return { name: objective, lambda_rank_param: { fix_list_weight: '0', num_pairsample: '1' } };
  }
  return { name: objective, reg_loss_param: { scale_pos_weight: '1' } };
}

function treeJson(tree: TreeIR, id: number, numFeatures: number): Record<string, unknown> {
  const n = tree.left.length;
  const parents = new Int32Array(n);
  parents[0] = 2147483647; // XGBoost's "no parent" marker for the root
  const baseWeights = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const l = tree.left[i] as number;
    if (l === -1) {
      baseWeights[i] = tree.splitCondition[i] as number;
    } else {
      parents[l] = i;
      parents[tree.right[i] as number] = i;
    }
  }
  return {
    base_weights: floats(baseWeights, 'base_weights'),
    categories: [],
    categories_nodes: [],
    categories_segments: [],
    categories_sizes: [],
    default_left: ints(tree.defaultLeft),
    id,
    left_children: ints(tree.left),
    loss_changes: zeros(n, '0.0'),
    parents: ints(parents),
    right_children: ints(tree.right),
    split_conditions: floats(tree.splitCondition, `tree ${id} split_conditions`),
    split_indices: ints(tree.splitIndex),
    split_type: zeros(n, '0'),
    sum_hessian: zeros(n, '0.0'),
    tree_param: { num_deleted: '0', num_feature: String(numFeatures), num_nodes: String(n), size_leaf_vector: '0' },
  };
}

/** Returns the model as XGBoost JSON text. */
export function writeXGBoostJson(ir: TreeEnsembleIR): string {
  const baseScore = ir.baseScore ?? marginToBaseScore(ir.objective, ir.baseMargin);
  const gbtree = {
    model: {
      gbtree_model_param: { num_parallel_tree: '1', num_trees: String(ir.trees.length), size_leaf_vector: '0' },
      tree_info: ints(ir.trees.map((t) => t.group)),
      trees: ir.trees.map((t, i) => treeJson(t, i, ir.numFeatures)),
    },
    name: 'gbtree',
  };
  const gradientBooster =
    ir.booster === 'dart'
      ? {
          gbtree,
          name: 'dart',
          weight_drop: floats(
            ir.trees.map((t) => t.weight),
            'weight_drop',
          ),
        }
      : gbtree;
  if (ir.booster === 'gbtree' && ir.trees.some((t) => t.weight !== 1)) {
    throw new UnsupportedModelError('a gbtree model with tree weights other than 1 cannot be written as XGBoost JSON');
  }
  const doc = {
    learner: {
      attributes: {},
      feature_names: ir.featureNames ? [...ir.featureNames] : [],
      feature_types: ir.featureNames ? ir.featureNames.map(() => 'float') : [],
      gradient_booster: gradientBooster,
      learner_model_param: {
        base_score: formatFloat32(baseScore),
        boost_from_average: '1',
        num_class: String(ir.objective.startsWith('multi:') || ir.numGroups > 1 ? ir.numGroups : 0),
        num_feature: String(ir.numFeatures),
        num_target: '1',
      },
      objective: objectiveConfig(ir.objective, ir.numGroups),
    },
    version: [...WRITTEN_XGBOOST_VERSION],
  };
  return serialize(doc);
}
