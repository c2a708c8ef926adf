/** Typed errors of the score cache. */
import { InvalidArgumentError, RelevanceGateError } from '../errors.js';

export type SnapshotFailure =
  | 'not-found' // no file at the path
  | 'io' // the file could not be read or written
  | 'foreign' // not a score-cache snapshot (wrong magic)
  | 'unsupported-version' // a snapshot format this build does not read
  | 'truncated' // shorter than its header says
  | 'checksum' // payload bytes do not match the header's checksum
  | 'malformed'; // checksum fine but the content is not a valid snapshot (wrong key schema, bad entry)

/** A snapshot file was refused; the cache it was loaded into is unchanged (a new cache stays empty). */
export class SnapshotError extends RelevanceGateError {
  readonly reason: SnapshotFailure;
  readonly path: string;
  constructor(reason: SnapshotFailure, path: string, message: string, options?: { cause?: unknown }) {
    super(
      'RG_ERR_CACHE_SNAPSHOT',
      `score-cache snapshot ${JSON.stringify(path)} refused (${reason}): ${message}`,
      options,
    );
    this.reason = reason;
    this.path = path;
  }
}

/** A scoreMisses callback broke its contract (wrong number of results). The call fails; nothing is cached. */
export class ScoreMissesContractError extends RelevanceGateError {
  constructor(message: string) {
    super('RG_ERR_SCORE_MISSES_CONTRACT', message);
  }
}

export type SigningKeyFailure =
  | 'type' // not a string, Buffer or Uint8Array
  | 'too-short'; // fewer than MIN_SIGNING_KEY_BYTES bytes (an empty key included)

/**
 * The L2 signing key was refused (`redis.signingKey`, or the server's
 * RELEVANCE_GATE_CACHE_SIGNING_KEY). The message never contains the key.
 */
export class CacheSigningKeyError extends InvalidArgumentError {
  readonly reason: SigningKeyFailure;
  constructor(reason: SigningKeyFailure, message: string) {
    super(message, undefined, 'RG_ERR_CACHE_SIGNING_KEY');
    this.reason = reason;
  }
}
