/**
 * The model folder of a tier command (eval, fit-points): `--model`, or for the fast-path tier the
 * shipped fast-path model. `--model shipped` names the model the package ships for the tier (the
 * fast-path trees, the cross-encoder); the embedding tier ships none.
 */
import { InvalidArgumentError } from '../errors.js';
import { SHIPPED_CROSS_ENCODER_MODEL_DIR, SHIPPED_MODEL_NAME } from '../tiers/cross-encoder/shipped-model.js';

export async function tierModel(tier: string, model: string | undefined): Promise<string> {
  if (model !== undefined && model !== SHIPPED_MODEL_NAME) return model;
  if (tier === 'cross-encoder' && model === SHIPPED_MODEL_NAME) return SHIPPED_CROSS_ENCODER_MODEL_DIR;
  if (tier !== 'fast-path') {
    throw new InvalidArgumentError(
      model === undefined
        ? `--model is required for --tier ${tier}`
        : `the package ships no ${tier} model: give --model <dir>`,
    );
  }
  return (await import('../tiers/fast-path/fast-path-scorer.js')).SHIPPED_FAST_PATH_MODEL_DIR;
}
