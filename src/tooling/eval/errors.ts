/** Errors of this module. */
import { RelevanceGateError } from '../../errors.js';

/** A collection folder or file is missing or malformed. */
/** A collection folder or file is missing or malformed. */
export class CollectionFormatError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_COLLECTION_FORMAT', message, options);
  }
}

/** A scorer failed to score a pair: eval refuses to guess a score for it. */
/** The scorer under evaluation left a pair unscored or answered the wrong number of results. */
export class EvalScoringError extends RelevanceGateError {
  constructor(message: string) {
    super('RG_ERR_EVAL_SCORING', message);
  }
}
