/**
 * One resolve() or lookup() call: validation of its request and options, the state its parts
 * share while it resolves, and how its abort signal turns into AbortedError.
 */
import { AbortedError, InvalidArgumentError } from '../errors.js';
import type { Passage, ScoreOptions, ScorerPairResult } from '../types.js';
import type { CachedMark, CacheRequest, ScoreMisses } from './cache-port.js';

/** What the leading, following and L2 paths of one resolve() call write into. */
export interface CallState {
  readonly results: ScorerPairResult[];
  readonly cached: CachedMark[];
  /** Set when this call's own scoring failed: its follower re-scores are then skipped. */
  failed: boolean;
  /** Signals an entry must carry (any of) to serve or be stored for this call. */
  readonly required: readonly string[];
  /**
   * Set when this call took a lease in Redis on some pair: its stores then drop its leases, and
   * pairs it fails to store are released, so peers waiting on them go on at once.
   */
  leasing: boolean;
}

/** Call options: absent or null mean none; anything else must be { signal?, deadline? }. */
export function validateCallOptions(options: ScoreOptions | null | undefined): ScoreOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw new InvalidArgumentError(`options must be an object, got ${typeof options}`);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new InvalidArgumentError('options.signal must be an AbortSignal');
  if (options.deadline !== undefined && (typeof options.deadline !== 'number' || Number.isNaN(options.deadline)))
    throw new InvalidArgumentError('options.deadline must be a number (ms on the Date.now() clock)');
  return options;
}

export function validateRequest(request: CacheRequest, scoreMisses: ScoreMisses): void {
  if (request === null || typeof request !== 'object')
    throw new InvalidArgumentError('resolve() needs a request object');
  if (typeof request.scorerId !== 'string' || request.scorerId.length === 0)
    throw new InvalidArgumentError('request.scorerId must be a non-empty string');
  if (typeof request.query !== 'string') throw new InvalidArgumentError('request.query must be a string');
  if (!Array.isArray(request.passages)) throw new InvalidArgumentError('request.passages must be an array');
  if (typeof scoreMisses !== 'function') throw new InvalidArgumentError('scoreMisses must be a function');
  const keys: unknown = request.metadataKeys;
  if (keys !== undefined && (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')))
    throw new InvalidArgumentError('request.metadataKeys must be an array of strings when given');
  const l2: unknown = request.l2;
  if (l2 !== undefined) {
    const { read, lease } = (l2 ?? {}) as { read?: unknown; lease?: unknown };
    if (
      l2 === null ||
      typeof l2 !== 'object' ||
      (read !== undefined && typeof read !== 'boolean') ||
      (lease !== undefined && typeof lease !== 'boolean')
    )
      throw new InvalidArgumentError('request.l2 must be { read?: boolean, lease?: boolean } when given');
  }
  const approximate: unknown = request.approximate;
  if (approximate !== undefined) {
    const { scope, embedding } = (approximate ?? {}) as { scope?: unknown; embedding?: unknown };
    if (
      approximate === null ||
      typeof approximate !== 'object' ||
      typeof scope !== 'string' ||
      (embedding !== undefined && !(embedding instanceof Float32Array) && !Array.isArray(embedding))
    )
      throw new InvalidArgumentError(
        'request.approximate must be { scope: string, embedding?: Float32Array | number[] } when given',
      );
  }
  const required: unknown = request.requiredSignals;
  if (
    required !== undefined &&
    (!Array.isArray(required) || !required.every((k) => typeof k === 'string' && k.length > 0))
  )
    throw new InvalidArgumentError('request.requiredSignals must be an array of non-empty strings when given');
  const passages: readonly Passage[] = request.passages;
  for (let i = 0; i < passages.length; i++) {
    const p = passages[i];
    if (p === null || typeof p !== 'object' || typeof p.id !== 'string' || typeof p.text !== 'string') {
      throw new InvalidArgumentError(`passages[${i}] must be an object with string id and text`);
    }
    if (p.title !== undefined && typeof p.title !== 'string')
      throw new InvalidArgumentError(`passages[${i}].title must be a string when given`);
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortedError(signal);
}

export function abortedError(signal: AbortSignal): AbortedError {
  return signal.reason instanceof AbortedError
    ? signal.reason
    : new AbortedError('the operation was aborted', { cause: signal.reason });
}
