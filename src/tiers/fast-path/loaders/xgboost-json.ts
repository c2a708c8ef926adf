/**
 * XGBoost's JSON model format (Booster.save_model("x.json"), XGBoost >= 1.0) → TreeEnsembleIR.
 *
 * The same document shape comes out of the UBJSON decoder (xgboost-ubjson.ts), so
 * `treeEnsembleFromDocument` is shared: arrays may be plain arrays (JSON) or typed arrays (UBJSON
 * typed containers).
 *
 * Read: learner.learner_model_param {base_score, num_class, num_feature, num_target},
 * learner.objective.name, learner.gradient_booster (gbtree, or dart wrapping a gbtree plus
 * weight_drop), gbtree model {tree_info, trees[]: left_children, right_children, split_indices,
 * split_conditions, default_left, split_type, categories*}, learner.feature_names.
 * Refused with UnsupportedModelError: gblinear and other boosters, categorical splits,
 * multi-target models (num_target > 1 or vector leaves), unknown objectives.
 * Malformed structure → ModelFormatError.
 */
import { ModelFormatError, UnsupportedModelError } from '../../../errors.js';
import type { TreeEnsembleIR, TreeIR } from '../model-ir.js';
import { baseScoreToMargin, isMultiClass, parseObjective, printable } from './objectives.js';
import { modelText } from './byte-reader.js';
import { buildTree, checkNumFeatures } from './tree-builder.js';

type Doc = Record<string, unknown>;

function isObject(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

function obj(parent: Doc, key: string, where: string): Doc {
  const v = parent[key];
  if (!isObject(v)) throw new ModelFormatError(`${where}: "${key}" is missing or not an object`);
  return v;
}

function numArray(parent: Doc, key: string, where: string): ArrayLike<number> {
  const v = parent[key];
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x !== 'number' && typeof x !== 'boolean') {
        throw new ModelFormatError(`${where}: "${key}"[${i}] is not a number`);
      }
    }
    return v as number[];
  }
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    return v as unknown as ArrayLike<number>;
  }
  throw new ModelFormatError(`${where}: "${key}" is missing or not an array`);
}

function optionalLength(parent: Doc, key: string): number {
  const v = parent[key];
  if (Array.isArray(v)) return v.length;
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return (v as unknown as ArrayLike<number>).length;
  return 0;
}

/** XGBoost stores most scalars as strings ("24", "5E-1"); accept numbers too. */
function scalar(parent: Doc, key: string, where: string, fallback?: number): number {
  const v = parent[key];
  if (v === undefined && fallback !== undefined) return fallback;
  let s: unknown = v;
  // XGBoost >= 2.1 writes base_score as "[5E-1]" (a vector for multi-target models).
  if (typeof s === 'string' && s.startsWith('[') && s.endsWith(']')) {
    const parts = s.slice(1, -1).split(',');
    if (parts.length !== 1) {
      throw new UnsupportedModelError(
        `${where}: "${key}" holds ${parts.length} values (multi-target models are not supported)`,
      );
    }
    s = parts[0];
  }
  const n = typeof s === 'number' ? s : typeof s === 'string' && s.trim() !== '' ? Number(s) : NaN;
  if (Number.isNaN(n)) throw new ModelFormatError(`${where}: "${key}" is missing or not a number`);
  return n;
}

function count(parent: Doc, key: string, where: string, fallback?: number): number {
  const n = scalar(parent, key, where, fallback);
  if (!Number.isInteger(n) || n < 0 || n > 0x7fffffff) {
    throw new ModelFormatError(`${where}: "${key}" = ${n} is not a valid count`);
  }
  return n;
}

/** Builds the IR from a decoded XGBoost model document (JSON.parse output or decoded UBJSON). */
export function treeEnsembleFromDocument(doc: unknown, where = 'XGBoost model'): TreeEnsembleIR {
  if (!isObject(doc)) throw new ModelFormatError(`${where}: top level is not an object`);
  const learner = obj(doc, 'learner', where);
  const lmp = obj(learner, 'learner_model_param', `${where} learner`);
  const numFeatures = count(lmp, 'num_feature', `${where} learner_model_param`);
  checkNumFeatures(numFeatures, where);
  const numClass = count(lmp, 'num_class', `${where} learner_model_param`, 0);
  const numTarget = count(lmp, 'num_target', `${where} learner_model_param`, 1);
  if (numTarget > 1) {
    throw new UnsupportedModelError(`${where}: num_target = ${numTarget} (multi-target models are not supported)`);
  }
  const objective = parseObjective(obj(learner, 'objective', where).name, where);
  const numGroups = Math.max(1, numClass);
  if (isMultiClass(objective) && numClass < 1) {
    throw new ModelFormatError(`${where}: ${objective} requires num_class >= 1, got ${numClass}`);
  }
  const baseScore = Math.fround(scalar(lmp, 'base_score', `${where} learner_model_param`));
  const baseMargin = baseScoreToMargin(objective, baseScore, where);

  const gb = obj(learner, 'gradient_booster', where);
  const boosterName = gb.name;
  let booster: 'gbtree' | 'dart';
  let gbtree: Doc;
  let weights: ArrayLike<number> | undefined;
  if (boosterName === 'gbtree') {
    booster = 'gbtree';
    gbtree = gb;
  } else if (boosterName === 'dart') {
    booster = 'dart';
    gbtree = obj(gb, 'gbtree', `${where} dart booster`);
    weights = numArray(gb, 'weight_drop', `${where} dart booster`);
  } else {
    throw new UnsupportedModelError(
      `${where}: booster "${typeof boosterName === 'string' ? printable(boosterName) : String(boosterName)}" is not supported (gbtree and dart are)`,
    );
  }
  const model = obj(gbtree, 'model', `${where} gbtree`);
  const treesRaw = model.trees;
  if (!Array.isArray(treesRaw)) throw new ModelFormatError(`${where}: gbtree model has no "trees" array`);
  const modelParam = isObject(model.gbtree_model_param) ? model.gbtree_model_param : undefined;
  if (modelParam !== undefined) {
    const declared = count(modelParam, 'num_trees', `${where} gbtree_model_param`, treesRaw.length);
    if (declared !== treesRaw.length) {
      throw new ModelFormatError(
        `${where}: gbtree_model_param.num_trees = ${declared} but ${treesRaw.length} trees are stored`,
      );
    }
    if (count(modelParam, 'size_leaf_vector', `${where} gbtree_model_param`, 0) > 1) {
      throw new UnsupportedModelError(`${where}: vector leaves (size_leaf_vector > 1) are not supported`);
    }
  }
  const treeInfo = numArray(model, 'tree_info', `${where} gbtree model`);
  if (treeInfo.length !== treesRaw.length) {
    throw new ModelFormatError(`${where}: tree_info has ${treeInfo.length} entries for ${treesRaw.length} trees`);
  }
  if (weights !== undefined && weights.length !== treesRaw.length) {
    throw new ModelFormatError(`${where}: dart weight_drop has ${weights.length} entries for ${treesRaw.length} trees`);
  }

  const trees: TreeIR[] = [];
  for (let t = 0; t < treesRaw.length; t++) {
    const tw = `${where} tree ${t}`;
    const tree: unknown = treesRaw[t];
    if (!isObject(tree)) throw new ModelFormatError(`${tw}: not an object`);
    const group = treeInfo[t] as number;
    if (!Number.isInteger(group) || group < 0 || group >= numGroups) {
      throw new ModelFormatError(`${tw}: tree_info group ${group} is outside [0, ${numGroups})`);
    }
    if (isObject(tree.tree_param) && count(tree.tree_param, 'size_leaf_vector', tw, 0) > 1) {
      throw new UnsupportedModelError(`${tw}: vector leaves (size_leaf_vector > 1) are not supported`);
    }
    const splitType = tree.split_type === undefined ? undefined : numArray(tree, 'split_type', tw);
    if (splitType !== undefined) {
      for (let i = 0; i < splitType.length; i++) {
        if (Number(splitType[i]) !== 0) {
          throw new UnsupportedModelError(
            `${tw}: node ${i} is a categorical split (split_type ${splitType[i]}); categorical splits are not supported`,
          );
        }
      }
    }
    if (optionalLength(tree, 'categories') > 0 || optionalLength(tree, 'categories_nodes') > 0) {
      throw new UnsupportedModelError(`${tw}: categorical splits are not supported`);
    }
    trees.push(
      buildTree(
        {
          left: numArray(tree, 'left_children', tw),
          right: numArray(tree, 'right_children', tw),
          splitIndex: numArray(tree, 'split_indices', tw),
          splitCondition: numArray(tree, 'split_conditions', tw),
          defaultLeft: numArray(tree, 'default_left', tw),
        },
        group,
        weights === undefined ? 1 : Number(weights[t]),
        numFeatures,
        tw,
      ),
    );
  }

  const names = learner.feature_names;
  const featureNames =
    Array.isArray(names) && names.length === numFeatures && names.every((n) => typeof n === 'string')
      ? (names as string[])
      : undefined;
  return {
    booster,
    objective,
    numFeatures,
    numGroups,
    baseMargin,
    baseScore,
    trees,
    ...(featureNames !== undefined ? { featureNames } : {}),
  };
}

/** Parses XGBoost JSON text (or its UTF-8 bytes) into the IR. */
export function loadXGBoostJson(input: string | Uint8Array, where = 'XGBoost JSON model'): TreeEnsembleIR {
  const text = modelText(input, where);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (cause) {
    throw new ModelFormatError(`${where}: not valid JSON (${(cause as Error).message})`, { cause });
  }
  return treeEnsembleFromDocument(doc, where);
}
