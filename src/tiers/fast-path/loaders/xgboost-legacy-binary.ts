/**
 * XGBoost's legacy binary model format → TreeEnsembleIR. This is what `ml-xgboost` 1.1.2 (a WASM
 * build of pre-1.0 XGBoost) writes from `toJSON().model`, and what XGBoost 1.x writes for
 * `save_model("x.bin")`/`.model` (then with a "binf" header). Layout, all little-endian:
 *
 *   ["binf"]                          optional 4-byte header (XGBoost >= 1.0 writes it)
 *   LearnerModelParam (136 bytes)     f32 base_score, u32 num_feature, i32 num_class,
 *                                     i32 contain_extra_attrs, i32 contain_eval_metrics,
 *                                     u32 major_version, u32 minor_version, u32 num_target, reserved
 *   string objective, string booster  u64 length + bytes (pre-0.7 quirk: length >= 2^32-1 means
 *                                     the real length is in the high word, followed by a 4-byte gap)
 *   GBTreeModelParam (160 bytes)      i32 num_trees, i32 num_roots, i32 num_feature, pad,
 *                                     i64 num_pbuffer, i32 num_output_group, i32 size_leaf_vector, reserved
 *   num_trees × tree:
 *     TreeParam (148 bytes)           i32 num_roots, i32 num_nodes, i32 num_deleted, i32 max_depth,
 *                                     i32 num_feature, i32 size_leaf_vector, reserved
 *     num_nodes × Node (20 bytes)     i32 parent, i32 left, i32 right, u32 sindex (bit 31 = default
 *                                     left, low 31 bits = feature), f32 split_cond | leaf_value
 *     num_nodes × NodeStat (16 bytes) loss_chg, sum_hess, base_weight, leaf_child_cnt (unused here)
 *   num_trees × i32 tree_info
 *   dart only: u64 count + count × f32 weight_drop
 *   [attributes]                      if contain_extra_attrs: u64 n, n × (string, string)
 *
 * base_score: before 1.0 (major_version 0) it was stored already in margin space. XGBoost 1.7.4
 * loads such a file by applying the objective's PredTransform (sigmoid for logistic, except for
 * multi:* objectives) and then ProbToMargin again; we do exactly the same, in float32.
 * From 1.0 on it is stored as a probability and goes through ProbToMargin only.
 */
import { ModelFormatError, UnsupportedModelError } from '../../../errors.js';
import type { TreeEnsembleIR, TreeIR } from '../model-ir.js';
import { ByteReader } from './byte-reader.js';
import { baseScoreToMargin, isMultiClass, marginToBaseScore, parseObjective, printable } from './objectives.js';
import { buildTree, checkNumFeatures } from './tree-builder.js';

const LEARNER_PARAM_BYTES = 136;
const GBTREE_PARAM_BYTES = 160;
const TREE_PARAM_BYTES = 148;
const NODE_BYTES = 20;
const NODE_STAT_BYTES = 16;
/** Names in this format are short identifiers; a longer one means a corrupt file. */
const MAX_NAME_BYTES = 256;
const MAX_ATTRIBUTE_BYTES = 1 << 20;

function readString(r: ByteReader, what: string, max: number): string {
  let len = r.u64(`${what} length`);
  if (len >= 0xffffffffn) {
    // Pre-0.7 XGBoost wrote a 32-bit length in the high word followed by a 4-byte gap.
    r.skip(4, `${what} length gap`);
    len >>= 32n;
  }
  if (len > BigInt(max)) r.fail(`${what} length ${len} exceeds ${max} bytes`);
  return r.utf8(Number(len), what);
}

/** True when the bytes start like a legacy binary model (used for format detection only). */
export function looksLikeLegacyBinary(bytes: Uint8Array): boolean {
  const start = bytes.length >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === 'binf' ? 4 : 0;
  if (bytes.length < start + LEARNER_PARAM_BYTES + 8) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset + start + LEARNER_PARAM_BYTES, 8);
  const len = view.getBigUint64(0, true);
  return len > 0n && len < 64n;
}

export function loadXGBoostLegacyBinary(bytes: Uint8Array, where = 'XGBoost legacy binary model'): TreeEnsembleIR {
  const r = new ByteReader(bytes, where);
  const head = r.peek(4);
  if (head.length === 4 && String.fromCharCode(...head) === 'binf') r.skip(4, 'header');
  if (head.length === 4 && String.fromCharCode(...head) === 'bs64') {
    throw new UnsupportedModelError(`${where}: base64 ("bs64") models are not supported`);
  }

  // LearnerModelParam
  r.need(LEARNER_PARAM_BYTES, 'learner parameters');
  const paramStart = r.offset;
  const storedBaseScore = r.f32('base_score');
  const numFeature = r.u32('num_feature');
  const numClass = r.i32('num_class');
  const containExtraAttrs = r.i32('contain_extra_attrs');
  r.i32('contain_eval_metrics');
  const majorVersion = r.u32('major_version');
  r.u32('minor_version');
  const numTarget = r.u32('num_target');
  r.skip(LEARNER_PARAM_BYTES - (r.offset - paramStart), 'learner parameters (reserved)');
  checkNumFeatures(numFeature, where);
  if (numClass < 0) r.fail(`num_class ${numClass} is negative`);
  if (numTarget > 1)
    throw new UnsupportedModelError(`${where}: num_target = ${numTarget} (multi-target models are not supported)`);

  const objective = parseObjective(readString(r, 'objective name', MAX_NAME_BYTES), where);
  const boosterName = readString(r, 'booster name', MAX_NAME_BYTES);
  if (boosterName !== 'gbtree' && boosterName !== 'dart') {
    throw new UnsupportedModelError(
      `${where}: booster "${printable(boosterName)}" is not supported (gbtree and dart are)`,
    );
  }
  const numGroups = Math.max(1, numClass);
  if (isMultiClass(objective) && numClass < 1) {
    throw new ModelFormatError(`${where}: ${objective} requires num_class >= 1, got ${numClass}`);
  }

  // GBTreeModelParam
  r.need(GBTREE_PARAM_BYTES, 'gbtree parameters');
  const gbStart = r.offset;
  const numTrees = r.i32('num_trees');
  const numRoots = r.i32('num_roots');
  r.i32('gbtree num_feature');
  r.skip(4, 'pad');
  const numPbuffer = r.i64('num_pbuffer');
  const numOutputGroup = r.i32('num_output_group');
  const sizeLeafVector = r.i32('size_leaf_vector');
  r.skip(GBTREE_PARAM_BYTES - (r.offset - gbStart), 'gbtree parameters (reserved)');
  if (numTrees < 0) r.fail(`num_trees ${numTrees} is negative`);
  // Each tree takes at least its parameters plus one node and its stats.
  r.needItems(numTrees, TREE_PARAM_BYTES + NODE_BYTES + NODE_STAT_BYTES, 'trees');
  if (numPbuffer !== 0) {
    throw new UnsupportedModelError(
      `${where}: prediction buffers (num_pbuffer = ${numPbuffer}, XGBoost < 0.7) are not supported`,
    );
  }
  if (sizeLeafVector > 1) throw new UnsupportedModelError(`${where}: vector leaves are not supported`);
  // 1.x writes num_roots = num_parallel_tree there; both are irrelevant to prediction except a
  // genuinely multi-root tree, which only pre-0.7 XGBoost produced.
  if (majorVersion < 1 && numRoots > 1) {
    throw new UnsupportedModelError(`${where}: trees with ${numRoots} roots are not supported`);
  }
  if (numOutputGroup > 1 && numOutputGroup !== numGroups) {
    r.fail(`num_output_group ${numOutputGroup} disagrees with num_class ${numClass}`);
  }

  const rawTrees = [];
  for (let t = 0; t < numTrees; t++) {
    const tw = `tree ${t}`;
    r.need(TREE_PARAM_BYTES, `${tw} parameters`);
    const tpStart = r.offset;
    const treeRoots = r.i32(`${tw} num_roots`);
    const numNodes = r.i32(`${tw} num_nodes`);
    r.i32(`${tw} num_deleted`);
    r.i32(`${tw} max_depth`);
    r.i32(`${tw} num_feature`);
    const treeLeafVector = r.i32(`${tw} size_leaf_vector`);
    r.skip(TREE_PARAM_BYTES - (r.offset - tpStart), `${tw} parameters (reserved)`);
    if (treeRoots > 1 && majorVersion < 1) throw new UnsupportedModelError(`${where}: ${tw} has ${treeRoots} roots`);
    if (treeLeafVector > 1) throw new UnsupportedModelError(`${where}: ${tw} has vector leaves`);
    if (numNodes < 1) r.fail(`${tw} has ${numNodes} nodes`);
    r.needItems(numNodes, NODE_BYTES + NODE_STAT_BYTES, `${tw} nodes`);
    const left = new Int32Array(numNodes);
    const right = new Int32Array(numNodes);
    const splitIndex = new Int32Array(numNodes);
    const splitCondition = new Float32Array(numNodes);
    const defaultLeft = new Uint8Array(numNodes);
    for (let i = 0; i < numNodes; i++) {
      r.i32('node parent');
      left[i] = r.i32('node left');
      right[i] = r.i32('node right');
      const sindex = r.u32('node sindex');
      splitCondition[i] = r.f32('node value');
      // A deleted node has sindex 0xFFFFFFFF; it is unreachable and dropped by buildTree.
      splitIndex[i] = sindex & 0x7fffffff;
      defaultLeft[i] = sindex >>> 31;
    }
    r.skip(numNodes * NODE_STAT_BYTES, `${tw} node statistics`);
    rawTrees.push({ left, right, splitIndex, splitCondition, defaultLeft });
  }

  r.needItems(numTrees, 4, 'tree_info');
  const treeInfo = new Int32Array(numTrees);
  for (let t = 0; t < numTrees; t++) treeInfo[t] = r.i32('tree_info');

  let weights: Float32Array | undefined;
  if (boosterName === 'dart' && numTrees > 0) {
    const n = r.u64('weight_drop count');
    if (n !== BigInt(numTrees)) r.fail(`dart weight_drop has ${n} entries for ${numTrees} trees`);
    r.needItems(numTrees, 4, 'weight_drop');
    weights = new Float32Array(numTrees);
    for (let t = 0; t < numTrees; t++) weights[t] = r.f32('weight_drop');
  }

  if (containExtraAttrs !== 0) {
    // Attributes (best_iteration, the objective's JSON config in 1.x, ...) do not affect
    // prediction for the supported objectives; they are read only to validate the structure.
    const n = r.u64('attribute count');
    // Each pair takes at least two 8-byte lengths.
    if (n > BigInt(Math.floor(r.remaining / 16))) r.fail(`attribute count ${n} does not fit in the file`);
    for (let i = 0; i < Number(n); i++) {
      readString(r, 'attribute name', MAX_ATTRIBUTE_BYTES);
      readString(r, 'attribute value', MAX_ATTRIBUTE_BYTES);
    }
  }
  // Trailing bytes after a complete model (e.g. eval metric names) are ignored, as XGBoost does.

  let baseScore: number;
  if (majorVersion < 1) {
    baseScore = objective.startsWith('multi:')
      ? Math.fround(storedBaseScore)
      : marginToBaseScore(objective, storedBaseScore);
  } else {
    baseScore = Math.fround(storedBaseScore);
  }
  const baseMargin = baseScoreToMargin(objective, baseScore, where);

  const trees: TreeIR[] = rawTrees.map((raw, t) => {
    const group = treeInfo[t] as number;
    if (group < 0 || group >= numGroups) {
      throw new ModelFormatError(`${where}: tree ${t} has tree_info group ${group} outside [0, ${numGroups})`);
    }
    return buildTree(raw, group, weights === undefined ? 1 : (weights[t] as number), numFeature, `${where} tree ${t}`);
  });

  return {
    booster: boosterName,
    objective,
    numFeatures: numFeature,
    numGroups,
    baseMargin,
    baseScore,
    trees,
  };
}
