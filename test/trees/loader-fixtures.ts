/**
 * Shared helpers for the tree-loader tests: where the XGBoost parity fixtures live, how to read
 * their matrices and expectations, and a tiny pure-TS reference evaluator used only as an oracle
 * for the IR (the product evaluator is native; see src/tiers/fast-path/tree-model.ts).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TreeEnsembleIR } from '../../src/tiers/fast-path/model-ir.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = resolve(REPO_ROOT, '../shared/fixtures/xgboost');

export interface ManifestEntry {
  readonly name: string;
  readonly objective: string;
  readonly trees: number;
  readonly features: number;
  readonly rows: number;
}

export interface Expected {
  readonly objective: string;
  readonly rows: number;
  readonly outputs: number;
  readonly margin: number[][];
  readonly prediction: number[][];
}

export function manifest(): ManifestEntry[] {
  return (JSON.parse(readFileSync(resolve(FIXTURES, 'manifest.json'), 'utf8')) as { models: ManifestEntry[] }).models;
}

export function fixturePath(file: string): string {
  return resolve(FIXTURES, file);
}

export function fixtureBytes(file: string): Uint8Array {
  return new Uint8Array(readFileSync(fixturePath(file)));
}

export function readExpected(name: string): Expected {
  return JSON.parse(readFileSync(fixturePath(`${name}.expected.json`), 'utf8')) as Expected;
}

/** Reads a fixture matrix: headerless CSV, `nan` = missing. */
export function readMatrix(name: string): { rows: Float32Array; nRows: number; nCols: number } {
  const lines = readFileSync(fixturePath(`${name}.X.csv`), 'utf8')
    .trim()
    .split('\n');
  const nCols = (lines[0] as string).split(',').length;
  const rows = new Float32Array(lines.length * nCols);
  lines.forEach((line, r) => {
    line.split(',').forEach((v, c) => {
      rows[r * nCols + c] = v === 'nan' ? NaN : Number(v);
    });
  });
  return { rows, nRows: lines.length, nCols };
}

/** |a - b| <= tol, relative when |b| > 1 (the acceptance criterion). */
export function withinTolerance(actual: number, expected: number, tol = 1e-6): boolean {
  if (Number.isNaN(actual) || Number.isNaN(expected)) return false;
  const scale = Math.max(Math.abs(expected), 1);
  return Math.abs(actual - expected) <= tol * scale;
}

/** Oracle: XGBoost's margin semantics in float32 (tree order, from the base margin). */
export function referenceMargins(ir: TreeEnsembleIR, rows: Float32Array, nRows: number): Float32Array {
  const out = new Float32Array(nRows * ir.numGroups);
  for (let r = 0; r < nRows; r++) {
    const acc = new Float32Array(ir.numGroups).fill(ir.baseMargin);
    for (const t of ir.trees) {
      let i = 0;
      let steps = 0;
      while (t.left[i] !== -1) {
        if (++steps > t.left.length) throw new Error('oracle: cycle');
        const x = rows[r * ir.numFeatures + (t.splitIndex[i] as number)] as number;
        const goLeft = Number.isNaN(x) ? t.defaultLeft[i] === 1 : x < (t.splitCondition[i] as number);
        i = goLeft ? (t.left[i] as number) : (t.right[i] as number);
      }
      acc[t.group] = (acc[t.group] as number) + Math.fround((t.splitCondition[i] as number) * t.weight);
    }
    out.set(acc, r * ir.numGroups);
  }
  return out;
}

/**
 * Array cells of one tree in a parsed model document: JS arrays from JSON, typed arrays from
 * UBJSON. Tests overwrite them with values of any type, since a wrong type is what they test.
 */
export interface TreeCells {
  [index: number]: unknown;
  readonly length: number;
  slice(start?: number, end?: number): TreeCells;
}

/** One tree of a JSON document: every field is an array of JSON values. */
export type JsonTree = Record<string, unknown[]>;

export type Booster<Tree> = {
  name?: unknown;
  model: { trees: Tree[]; tree_info: unknown[] };
  gbtree?: Booster<Tree>;
  weight_drop?: unknown[];
};

/** A parsed XGBoost model document as the loader tests edit it to build malformed models (only the fields they touch). */
export type ModelDoc<Tree = JsonTree> = {
  learner: {
    learner_model_param: Record<string, unknown>;
    objective: { name: unknown };
    gradient_booster: Booster<Tree>;
  };
};

/** Puts a booster of another kind (gblinear, dart, none) in place of the gbtree one; it need not have trees. */
export function setBooster<Tree>(doc: ModelDoc<Tree>, booster: unknown): void {
  (doc.learner as { gradient_booster: unknown }).gradient_booster = booster;
}
