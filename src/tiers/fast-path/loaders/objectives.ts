/**
 * The objectives this engine evaluates, and the float32 link functions XGBoost applies to
 * `base_score` when it turns the stored value into the starting margin of every row.
 *
 * XGBoost keeps `base_score` in response space ("probability" for logistic objectives) and maps it
 * with the objective's ProbToMargin: `-logf(1/p - 1)` for binary:logistic and reg:logistic, identity
 * for everything else here. binary:logitraw is identity in XGBoost 1.7.4 (checked against the parity
 * fixture logitraw_t80_d5: base_score 0.3 is used as the margin 0.3), although pre-1.0 sources
 * derived it from the logistic loss.
 * All arithmetic is float32, as XGBoost does it, so the margin matches bit for bit.
 */
import { ModelFormatError, UnsupportedModelError } from '../../../errors.js';
import { TREE_OBJECTIVES, type TreeObjective } from '../model-ir.js';

const SUPPORTED: ReadonlySet<string> = new Set<TreeObjective>(TREE_OBJECTIVES);

/** Older XGBoost spellings that mean exactly a supported objective. */
const ALIASES: Readonly<Record<string, TreeObjective>> = {
  'reg:linear': 'reg:squarederror',
};

export function parseObjective(name: unknown, where: string): TreeObjective {
  if (typeof name !== 'string' || name.length === 0) {
    throw new ModelFormatError(`${where}: objective name is missing or not a string`);
  }
  const alias = ALIASES[name];
  if (alias !== undefined) return alias;
  if (!SUPPORTED.has(name)) {
    throw new UnsupportedModelError(
      `${where}: objective "${printable(name)}" is not supported (supported: ${[...SUPPORTED].join(', ')})`,
    );
  }
  return name as TreeObjective;
}

export function isLogisticLink(objective: TreeObjective): boolean {
  return objective === 'binary:logistic' || objective === 'reg:logistic';
}

export function isMultiClass(objective: TreeObjective): boolean {
  return objective === 'multi:softprob' || objective === 'multi:softmax';
}

const f32 = Math.fround;

/** XGBoost's ProbToMargin(base_score), in float32. Throws when the value is outside the link's domain. */
export function baseScoreToMargin(objective: TreeObjective, baseScore: number, where: string): number {
  const p = f32(baseScore);
  if (!Number.isFinite(p)) throw new ModelFormatError(`${where}: base_score ${baseScore} is not finite`);
  if (!isLogisticLink(objective)) return p;
  if (!(p > 0 && p < 1)) {
    throw new ModelFormatError(`${where}: base_score must be in (0,1) for ${objective}, got ${baseScore}`);
  }
  return f32(-f32(Math.log(f32(f32(1 / p) - 1))));
}

/**
 * XGBoost's PredTransform for a single value, as used when XGBoost >= 1.0 upgrades a pre-1.0
 * binary model (whose base_score was stored already in margin space) back to response space.
 * Only the logistic link transforms; binary:logitraw's PredTransform is the identity.
 */
export function marginToBaseScore(objective: TreeObjective, margin: number): number {
  const m = f32(margin);
  if (isLogisticLink(objective)) {
    return f32(1 / f32(1 + f32(Math.exp(-m))));
  }
  return m;
}

export function printable(s: string): string {
  const cut = s.length > 80 ? `${s.slice(0, 80)}…` : s;
  return cut.replace(/[^\x20-\x7e]/g, '?');
}
