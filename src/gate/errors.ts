/**
 * Typed errors of the gate. All extend the shared hierarchy so callers can branch on `code`
 * (or `instanceof InvalidArgumentError`) without parsing messages.
 */
import { InvalidArgumentError, RelevanceGateError } from '../errors.js';

/** Two passages of one request share an id: results could not be told apart, so the call is refused. */
export class DuplicatePassageIdError extends InvalidArgumentError {
  readonly id: string;
  readonly firstIndex: number;
  readonly secondIndex: number;
  constructor(id: string, firstIndex: number, secondIndex: number) {
    super(
      `duplicate passage id ${JSON.stringify(id)} at passages[${firstIndex}] and passages[${secondIndex}]`,
      undefined,
      'RG_ERR_DUPLICATE_PASSAGE_ID',
    );
    this.id = id;
    this.firstIndex = firstIndex;
    this.secondIndex = secondIndex;
  }
}

/** A policy value is out of range, of the wrong type, or inconsistent with another; `field` names it. */
export class InvalidPolicyError extends InvalidArgumentError {
  readonly field: string;
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(`policy.${field}: ${message}`, options, 'RG_ERR_INVALID_POLICY');
    this.field = field;
  }
}

/** A calibrated threshold was tuned for another model than the scorer it is used with. */
export class CalibrationModelMismatchError extends RelevanceGateError {
  readonly expectedModel: string;
  readonly actualModel: string;
  constructor(expectedModel: string, actualModel: string) {
    super(
      'RG_ERR_CALIBRATION_MODEL_MISMATCH',
      `calibrated threshold was fitted for model ${JSON.stringify(expectedModel)} but the scorer is ${JSON.stringify(actualModel)}; refit it for this model`,
    );
    this.expectedModel = expectedModel;
    this.actualModel = actualModel;
  }
}

/** Calibration input (labelled pairs, or a serialised CalibratedThreshold) is malformed. */
export { CalibrationFormatError } from '../calibration/errors.js';
