/** Typed errors of calibration (fitting, thresholds, calibrated-threshold files). */
import { InvalidArgumentError } from '../errors.js';

/** Calibration input (labelled pairs, or a serialised CalibratedThreshold) is malformed. */
export class CalibrationFormatError extends InvalidArgumentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options, 'RG_ERR_CALIBRATION_FORMAT');
  }
}
