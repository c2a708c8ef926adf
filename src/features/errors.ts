/** Errors of the lexical feature subsystem. */
import { RelevanceGateError } from '../errors.js';

/**
 * A model was trained on another feature schema (version or feature list) than this build
 * computes; its scores would be silently wrong, so it is refused.
 */
export class FeatureSchemaMismatchError extends RelevanceGateError {
  readonly expectedVersion: string;
  readonly actualVersion: string;
  constructor(expectedVersion: string, actualVersion: string, detail?: string) {
    super(
      'RG_ERR_FEATURE_SCHEMA_MISMATCH',
      `model was trained on feature schema "${actualVersion}" but this build computes "${expectedVersion}"` +
        (detail ? `: ${detail}` : ''),
    );
    this.expectedVersion = expectedVersion;
    this.actualVersion = actualVersion;
  }
}

/** A corpus-statistics file is corrupt, truncated, of another format version or tokenizer. */
export class CorpusStatsFormatError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_CORPUS_STATS_FORMAT', message, options);
  }
}
