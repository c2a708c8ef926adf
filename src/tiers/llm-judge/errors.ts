/**
 * Typed errors of the LLM-judge tier. Each extends the shared hierarchy with a stable `code`.
 * None of them carries the API key or request headers.
 */
import { RelevanceGateError } from '../../errors.js';

/**
 * The endpoint answered with an HTTP error, or could not be reached. `status` is the HTTP status
 * (undefined for connection errors); `retryable` says whether the tier would retry it (429, 408,
 * 5xx, connection errors); `attempts` is how many HTTP attempts were made before giving up.
 */
export class LlmEndpointError extends RelevanceGateError {
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly attempts: number;
  constructor(
    message: string,
    details: { status?: number; retryable: boolean; attempts: number },
    options?: { cause?: unknown },
  ) {
    super('RG_ERR_LLM_ENDPOINT', message, options);
    this.status = details.status;
    this.retryable = details.retryable;
    this.attempts = details.attempts;
  }
}

/** The endpoint answered 200 with a body that is not a chat completion (or is too large). */
export class LlmResponseFormatError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_LLM_RESPONSE_FORMAT', message, options);
  }
}
