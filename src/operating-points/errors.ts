/** Errors of operating points: a malformed file, a file fitted for another model. */
import { RelevanceGateError } from '../errors.js';

/** An operating-points file is malformed (not JSON, wrong format tag, a bad field). */
export class OperatingPointsFormatError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_OPERATING_POINTS_FORMAT', message, options);
  }
}

/** Operating points fitted for another model than the scorer they are used with. */
export class OperatingPointsModelMismatchError extends RelevanceGateError {
  readonly expectedModel: string;
  readonly actualModel: string;
  constructor(expectedModel: string, actualModel: string) {
    super(
      'RG_ERR_OPERATING_POINTS_MODEL_MISMATCH',
      `operating points were fitted for model ${JSON.stringify(expectedModel)} but the scorer is ${JSON.stringify(actualModel)}; fit them for this model (relevance-gate fit-points)`,
    );
    this.expectedModel = expectedModel;
    this.actualModel = actualModel;
  }
}
