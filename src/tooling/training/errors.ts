/** Errors of this module. */
import { RelevanceGateError } from '../../errors.js';

/** Training trees failed (bad data, or the WASM learner broke and is unusable for this process). */
export class TrainingError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_TRAINING', message, options);
  }
}

/** `--check` found a file that differs between two runs of the same training command. */
export class ReproducibilityError extends RelevanceGateError {
  constructor(message: string) {
    super('RG_ERR_NOT_REPRODUCIBLE', message);
  }
}
