/**
 * One POST of a JSON body to the backend (or a GET of a KServe health, metadata or config
 * endpoint), bounded by the call's deadline, its AbortSignal and the per-request timeout, with the
 * answer read up to a byte limit. Node's fetch (undici) is used
 * directly: an SDK's own retries and timeouts could not be bound to the gate's deadline.
 * Failures become typed errors: DeadlineExceededError (the call's deadline), AbortedError (the
 * caller's signal), RemoteEndpointError (timeout, connection error, HTTP error status).
 */
import { AbortedError, DeadlineExceededError } from '../../errors.js';
import { RemoteEndpointError, RemoteResponseError } from './errors.js';
import type { RemoteScorerSettings } from './options.js';

/** An HTTP answer: its status, its body text (up to the limit) and its Retry-After in ms. */
export interface HttpAnswer {
  readonly status: number;
  readonly text: string;
  readonly retryAfterMs: number | undefined;
}

/** Posts `body`; resolves with any HTTP answer (error statuses included), rejects with a typed error otherwise. */
export function postJson(
  settings: RemoteScorerSettings,
  body: string,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
): Promise<HttpAnswer> {
  return sendRequest(settings, settings.endpoint, body, signal, deadline);
}

/** GETs `url` (a KServe health, metadata or config endpoint), bounded as a POST is. */
export function getJson(
  settings: RemoteScorerSettings,
  url: URL,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
): Promise<HttpAnswer> {
  return sendRequest(settings, url, undefined, signal, deadline);
}

/** One request: a POST of `body`, or a GET without one. */
async function sendRequest(
  settings: RemoteScorerSettings,
  url: URL,
  body: string | undefined,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
): Promise<HttpAnswer> {
  const { protocol } = settings;
  if (signal?.aborted) throw new AbortedError('the remote scoring call was aborted', { cause: signal.reason });
  const left = deadline === undefined ? Number.POSITIVE_INFINITY : deadline - Date.now();
  if (left <= 0) throw new DeadlineExceededError('the deadline passed before the remote request was sent');
  const byDeadline = left <= settings.requestTimeoutMs;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      controller.abort();
    },
    Math.min(left, settings.requestTimeoutMs),
  );
  const onAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await fetch(
      url,
      body === undefined
        ? { method: 'GET', headers: getHeaders(settings.headers), signal: controller.signal }
        : { method: 'POST', headers: settings.headers, body, signal: controller.signal },
    );
    const text = await readText(response, settings.maxResponseBytes, protocol);
    return { status: response.status, text, retryAfterMs: retryAfterMs(response.headers) };
  } catch (error) {
    if (signal?.aborted) throw new AbortedError('the remote scoring call was aborted', { cause: signal.reason });
    if (timedOut) {
      if (byDeadline) throw new DeadlineExceededError('the deadline passed while the remote backend was answering');
      throw new RemoteEndpointError(
        `${protocol} backend did not answer within ${settings.requestTimeoutMs} ms`,
        { protocol, retryable: true },
        { cause: error },
      );
    }
    if (error instanceof RemoteResponseError) throw error;
    throw new RemoteEndpointError(
      `${protocol} backend could not be reached: ${describeCause(error)}`,
      { protocol, retryable: true },
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** The headers of a GET: no content-type, as there is no body. */
function getHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const { 'content-type': _omitted, ...rest } = headers;
  return rest;
}

/** The body as text, refusing (and cancelling) one over `limit` bytes. */
async function readText(
  response: Response,
  limit: number,
  protocol: RemoteScorerSettings['protocol'],
): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw new RemoteResponseError(`${protocol} answer of ${declared} bytes is over the ${limit}-byte limit`, protocol);
  }
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) {
      await response.body.cancel().catch(() => undefined);
      throw new RemoteResponseError(`${protocol} answer is over the ${limit}-byte limit`, protocol);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Longest Retry-After reported; a longer one is reported as this. */
const MAX_RETRY_AFTER_MS = 120_000;

function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.min(Math.max(0, date - Date.now()), MAX_RETRY_AFTER_MS) : undefined;
}

function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}
