/**
 * The model folder of a tier command (eval, fit-points): `--model`, or for the fast-path tier the
 * shipped fast-path model; the other tiers have no default model.
 */
import { InvalidArgumentError } from '../errors.js';

export async function tierModel(tier: string, model: string | undefined): Promise<string> {
  if (model !== undefined) return model;
  if (tier !== 'fast-path') throw new InvalidArgumentError(`--model is required for --tier ${tier}`);
  return (await import('../tiers/fast-path/fast-path-scorer.js')).SHIPPED_FAST_PATH_MODEL_DIR;
}
