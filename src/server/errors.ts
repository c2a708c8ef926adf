/**
 * Errors of the HTTP server. A handler throws an ApiError naming WHAT went wrong (its kind); each
 * protocol module turns the kind into its own status code and body (Cohere `{message}`, TEI
 * `{error, error_type}`, the gate API `{error: {type, message}}`). Messages are written for the
 * client: never a stack trace, a file path or a passage's text.
 *
 * Every error class of the server lives here, each with its own `code` (`RG_ERR_*`, the project's
 * prefix, one per class, given to its parent's constructor as in src/errors.ts).
 */
import { RelevanceGateError } from '../errors.js';

/** A configuration value is missing, malformed or inconsistent; the message names the field. */
export class ServerConfigError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_SERVER_CONFIG', message, options);
  }
}

/**
 * - `invalid_request`: the body is not JSON or has the wrong shape/types;
 * - `unprocessable`: well-formed but refused (too many documents, a document too long, bad policy);
 * - `empty`: nothing to score (no documents);
 * - `model_not_found`: `model` names no configured model;
 * - `not_found`: no such route;
 * - `method_not_allowed`, `unauthorized`, `payload_too_large`, `unsupported_media_type`;
 * - `overloaded`: a bound is full, the request cannot be answered within its budget (refused at
 *   once), or its budget ran out before every document was scored (cut by the deadline);
 * - `unavailable`: the server is loading or shutting down;
 * - `tokenizer`: a text cannot be tokenised (e.g. unpaired UTF-16 surrogates);
 * - `backend`: the scorer failed;
 * - `internal`: a bug; the client sees a generic message.
 */
export type ApiErrorKind =
  | 'invalid_request'
  | 'unprocessable'
  | 'empty'
  | 'model_not_found'
  | 'not_found'
  | 'method_not_allowed'
  | 'unauthorized'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'overloaded'
  | 'unavailable'
  | 'tokenizer'
  | 'backend'
  | 'internal';

/**
 * A request refused or failed. One code for the class, `RG_ERR_API`; `kind` says what went wrong
 * and picks each protocol's status and body.
 */
export class ApiError extends RelevanceGateError {
  readonly kind: ApiErrorKind;
  /** Seconds after which a retry is expected to succeed (429 / 503). */
  readonly retryAfterSec: number | undefined;
  constructor(kind: ApiErrorKind, message: string, options?: { retryAfterSec?: number; cause?: unknown }) {
    super('RG_ERR_API', message, options);
    this.kind = kind;
    this.retryAfterSec = options?.retryAfterSec;
  }
}

/** Which error format a response uses: decided by the route (or, for unknown routes, the URL). */
export type Protocol = 'cohere' | 'tei' | 'gate';

export interface FormattedError {
  readonly status: number;
  readonly body: unknown;
}

const COHERE_STATUS: Readonly<Record<ApiErrorKind, number>> = {
  invalid_request: 400,
  unprocessable: 422,
  empty: 400,
  model_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  unauthorized: 401,
  payload_too_large: 413,
  unsupported_media_type: 415,
  overloaded: 429,
  unavailable: 503,
  tokenizer: 422,
  backend: 500,
  internal: 500,
};

/** TEI's statuses: its ErrorType values map to 400 / 422 / 429 / 424 / 503. */
const TEI: Readonly<Record<ApiErrorKind, readonly [number, string]>> = {
  invalid_request: [422, 'Validation'],
  unprocessable: [422, 'Validation'],
  empty: [400, 'Empty'],
  model_not_found: [422, 'Validation'],
  not_found: [404, 'Validation'],
  method_not_allowed: [405, 'Validation'],
  unauthorized: [401, 'Validation'],
  payload_too_large: [413, 'Validation'],
  unsupported_media_type: [415, 'Validation'],
  overloaded: [429, 'Overloaded'],
  unavailable: [503, 'Unhealthy'],
  tokenizer: [422, 'Tokenizer'],
  backend: [424, 'Backend'],
  internal: [500, 'Backend'],
};

const GATE_STATUS: Readonly<Record<ApiErrorKind, number>> = { ...COHERE_STATUS };

export function formatError(protocol: Protocol, error: ApiError, requestId: string): FormattedError {
  return formatErrorOf(protocol, error.kind, error.message, requestId);
}

/**
 * formatError without an ApiError: for answers written before Fastify sees the request (a refusal
 * at arrival), where building an Error (its stack trace) would cost more than the answer.
 */
export function formatErrorOf(
  protocol: Protocol,
  kind: ApiErrorKind,
  message: string,
  requestId: string,
): FormattedError {
  switch (protocol) {
    case 'cohere':
      return { status: COHERE_STATUS[kind], body: { id: requestId, message } };
    case 'tei': {
      const [status, errorType] = TEI[kind];
      return { status, body: { error: message, error_type: errorType } };
    }
    case 'gate':
      return { status: GATE_STATUS[kind], body: { error: { type: kind, message }, request_id: requestId } };
  }
}

/** The protocol of a URL no route matched (so a 404 still speaks the client's format). */
export function protocolOfUrl(url: string): Protocol {
  if (url.startsWith('/v1/rerank') || url.startsWith('/v2/')) return 'cohere';
  if (url.startsWith('/v1/') || url.startsWith('/metrics')) return 'gate';
  return 'tei';
}
