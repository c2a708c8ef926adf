/**
 * The in-memory form every tree-model loader (JSON, UBJSON, legacy binary) produces and the native
 * evaluator consumes. Loaders validate structure; the native side re-validates what crosses the
 * boundary (indices in range, acyclic, sizes consistent) because a hostile file must never crash it.
 *
 * `baseScore?` below is optional and informational only
 * (the response-space base_score the margin came from, kept so the JSON writer can round-trip it
 * exactly). The evaluator uses `baseMargin` and can ignore `baseScore`. Loaders guarantee (see
 * loaders/tree-builder.ts): every node is reachable from root 0 exactly once, leaf iff left === -1,
 * children in range, splitIndex in [0, numFeatures), no NaN thresholds, finite leaves and weights.
 */

/** Every objective the evaluator supports, in the order of the native enum (native/src/trees/tree_eval.h). */
export const TREE_OBJECTIVES = [
  'binary:logistic',
  'binary:logitraw',
  'reg:logistic',
  'reg:squarederror',
  'rank:pairwise',
  'rank:ndcg',
  'rank:map',
  'multi:softprob',
  'multi:softmax',
] as const;

export type TreeObjective = (typeof TREE_OBJECTIVES)[number];

export interface TreeIR {
  /** Output (class) this tree adds to: XGBoost's tree_info. */
  readonly group: number;
  /** Multiplier on the tree's leaves: dart's weight_drop; 1 for gbtree. */
  readonly weight: number;
  /** Per node, indexed by node id; a node is a leaf when left[i] === -1. */
  readonly left: Int32Array;
  readonly right: Int32Array;
  readonly splitIndex: Int32Array;
  /** Split threshold for inner nodes (go left when x < threshold, in float32); leaf value for leaves. */
  readonly splitCondition: Float32Array;
  /** 1 when a missing (NaN) value goes left. */
  readonly defaultLeft: Uint8Array;
  /**
   * Float64 leaf values, per node (0 for inner nodes), when the ensemble's marginPrecision is
   * 'float64' (LightGBM stores and sums leaves in float64); `splitCondition` then holds them
   * rounded to float32, for tools that only read float32.
   */
  readonly leafValues64?: Float64Array;
}

export interface TreeEnsembleIR {
  readonly booster: 'gbtree' | 'dart';
  readonly objective: TreeObjective;
  readonly numFeatures: number;
  /** Margins per row: num_class for multi-class models, else 1. */
  readonly numGroups: number;
  /** base_score already mapped to margin space by the objective's link, as float32. */
  readonly baseMargin: number;
  /** Optional: base_score in response space (float32) as stored/derived; the writer emits it. */
  readonly baseScore?: number;
  readonly trees: readonly TreeIR[];
  readonly featureNames?: readonly string[];
  /**
   * How margins are summed: 'float32' (default; XGBoost: float32 leaves, float32 sum in tree
   * order) or 'float64' (LightGBM: every tree's leafValues64 summed in float64 in tree order;
   * margins are then Float64Array).
   */
  readonly marginPrecision?: 'float32' | 'float64';
  /**
   * When true, an input of +inf is evaluated as FLT_MAX (LightGBM's `x <= +inf` on "present vs
   * missing" splits). XGBoost models leave it unset: there +inf is an ordinary value.
   */
  readonly clampPositiveInfinity?: boolean;
}
