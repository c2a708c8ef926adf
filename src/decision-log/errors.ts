/**
 * Typed errors of the decision log and its replay. Writes never throw at a request (they degrade
 * to counted drops); these are for the operator's side: bad options, unreadable logs, replays that
 * cannot re-decide a record.
 */
import { InvalidArgumentError, RelevanceGateError } from '../errors.js';

/** A decision-log option is malformed (sample rate outside [0, 1], a non-positive size, ...). */
export class DecisionLogOptionError extends InvalidArgumentError {
  constructor(message: string) {
    super(message, undefined, 'RG_ERR_DECISION_LOG_OPTION');
  }
}

/** A log directory or one of its lines is not a decision log this version reads. */
export class DecisionLogFormatError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_DECISION_LOG_FORMAT', message, options);
  }
}

/** A logged request cannot be re-decided (its policy record is missing, or held a function). */
export class ReplayError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_REPLAY', message, options);
  }
}
