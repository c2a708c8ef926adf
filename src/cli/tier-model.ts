/**
 * The model folder of a tier command (eval, fit-points): `--model`, or for the trees tier the
 * shipped fast-path model; the other tiers have no default model.
 */
import { InvalidArgumentError } from '../errors.js';

export async function tierModel(tier: string, model: string | undefined): Promise<string> {
  if (model !== undefined) return model;
  if (tier !== 'trees') throw new InvalidArgumentError(`--model is required for --tier ${tier}`);
  return (await import('../tiers/trees/fast-path-scorer.js')).SHIPPED_FASTPATH_MODEL_DIR;
}
