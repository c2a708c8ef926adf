/**
 * Typed errors of the remote tier, each with its own `RG_ERR_REMOTE_*` code. None carries the API
 * key, a request header or a passage's text; URLs are shown without their credentials.
 */
import { InvalidArgumentError, RelevanceGateError } from '../../errors.js';
import type { RemoteProtocol } from './types.js';

/** createRemoteScorer was given a bad option (the message names it). */
export class RemoteConfigError extends InvalidArgumentError {
  constructor(message: string) {
    super(message, undefined, 'RG_ERR_REMOTE_CONFIG');
  }
}

/**
 * The backend answered with an HTTP error, or could not be reached, or took longer than
 * `requestTimeoutMs`. `status`: the HTTP status (undefined when no answer came); `retryable`: a
 * later try may succeed (408, 424, 429, 5xx, connection errors, timeouts); `retryAfterMs`: the backend's
 * Retry-After, when it sent one.
 */
export class RemoteEndpointError extends RelevanceGateError {
  /** The protocol of the scorer that failed. */
  readonly protocol: RemoteProtocol;
  /** The HTTP status; undefined when no answer came. */
  readonly status: number | undefined;
  /** Whether a later try may succeed. */
  readonly retryable: boolean;
  /** The backend's Retry-After in ms, when it sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    details: { protocol: RemoteProtocol; status?: number; retryable: boolean; retryAfterMs?: number },
    options?: { cause?: unknown },
    /** A subclass's own code (a refinement of an endpoint error). */
    code = 'RG_ERR_REMOTE_ENDPOINT',
  ) {
    super(code, message, options);
    this.protocol = details.protocol;
    this.status = details.status;
    this.retryable = details.retryable;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * The backend refused a batch of a single passage as too large (413/422): splitting cannot help.
 * A subclass of RemoteEndpointError (status 413 or 422, not retryable).
 */
export class RemoteBatchRefusedError extends RemoteEndpointError {
  constructor(message: string, protocol: RemoteProtocol, status: number) {
    super(message, { protocol, status, retryable: false }, undefined, 'RG_ERR_REMOTE_BATCH_REFUSED');
  }
}

/**
 * The backend answered 200 with a body that is not this protocol's answer: not JSON, too large, an
 * index missing, repeated or out of range, a score that is not a probability.
 */
export class RemoteResponseError extends RelevanceGateError {
  /** The protocol of the scorer whose answer was refused. */
  readonly protocol: RemoteProtocol;
  constructor(message: string, protocol: RemoteProtocol, options?: { cause?: unknown }) {
    super('RG_ERR_REMOTE_RESPONSE', message, options);
    this.protocol = protocol;
  }
}
