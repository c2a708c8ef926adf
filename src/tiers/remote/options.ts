/**
 * Options of createRemoteScorer: defaults per protocol and validation. A bad option is a
 * RemoteConfigError at creation naming it; unknown keys are refused (a misspelt `maxbatch` must not
 * silently mean the default).
 */
import { rejectUnknownKeys } from '../../util/option-keys.js';
import { nonEmptyString, oneOf, positiveInteger, type OptionErrorFactory } from '../../util/validate-options.js';
import { describeValue } from '../../util/validate-options.js';
import { RemoteConfigError } from './errors.js';
import type { RemoteProtocol } from './types.js';

export type { RemoteProtocol } from './types.js';

/** Options of createRemoteScorer (docs/remote.md). */
export interface RemoteScorerOptions {
  /**
   * The backend's API: `cohere` (POST /v2/rerank: Cohere, Jina, infinity, vLLM, `relevance-gate
   * serve`), `tei` (text-embeddings-inference POST /rerank), `kserve` (KServe v2 / Triton infer).
   */
  readonly protocol: RemoteProtocol;
  /**
   * http(s) base URL of the backend (the protocol's path is appended), or the full endpoint URL.
   * No credentials in it: the key goes in `apiKey`.
   */
  readonly url: string;
  /** Model name sent to the backend (Cohere: required by the hosted API; TEI: sent when given). */
  readonly model?: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never part of an error message or the scorer id. */
  readonly apiKey?: string;
  /**
   * Most passages per request; larger calls are split and their answers merged in input order.
   * Default: TEI's `max_client_batch_size` (32) for `tei`, Cohere's 1,000 documents for `cohere`.
   * A 413 or 422 answer to a batch of more than one passage halves it (for this and later calls).
   */
  readonly maxBatch?: number;
  /**
   * The scorer id (part of cache keys). Default `remote:<protocol>:<model>@<endpoint URL>`; give
   * replicas that reach one model through different URLs the same id.
   */
  readonly id?: string;
  /** Longest one HTTP request may take when the call has no earlier deadline; default 30,000 ms. */
  readonly requestTimeoutMs?: number;
  /** Requests of one call in flight at once (a split call); default 4. */
  readonly maxConcurrentRequests?: number;
  /** Largest response body read; default 16 MiB. */
  readonly maxResponseBytes?: number;
}

/** Default maxBatch per protocol: TEI's max_client_batch_size; Cohere's documented document limit. */
export const DEFAULT_MAX_BATCH: Readonly<Record<RemoteProtocol, number>> = Object.freeze({
  tei: 32,
  cohere: 1000,
  kserve: 32,
});
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_CONCURRENT_REQUESTS = 4;
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** The tier label of a remote scorer's results. */
export const REMOTE_TIER = 'remote';

const PROTOCOLS: readonly RemoteProtocol[] = ['cohere', 'tei', 'kserve'];
const PATHS: Readonly<Record<RemoteProtocol, string>> = { cohere: '/v2/rerank', tei: '/rerank', kserve: '' };

const OPTION_KEYS: Readonly<Record<keyof RemoteScorerOptions, true>> = {
  protocol: true,
  url: true,
  model: true,
  apiKey: true,
  maxBatch: true,
  id: true,
  requestTimeoutMs: true,
  maxConcurrentRequests: true,
  maxResponseBytes: true,
};
const KEYS: ReadonlySet<string> = new Set(Object.keys(OPTION_KEYS));

const fail: OptionErrorFactory = (name, requirement, value) =>
  new RemoteConfigError(`createRemoteScorer: ${name} must be ${requirement}, got ${describeValue(value)}`);

/** RemoteScorerOptions resolved: defaults applied, the endpoint URL and headers built. */
export interface RemoteScorerSettings {
  readonly protocol: RemoteProtocol;
  /** The endpoint the requests go to. */
  readonly endpoint: URL;
  readonly model: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly maxBatch: number;
  readonly id: string;
  readonly requestTimeoutMs: number;
  readonly maxConcurrentRequests: number;
  readonly maxResponseBytes: number;
}

export function resolveRemoteScorerOptions(options: RemoteScorerOptions): RemoteScorerSettings {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new RemoteConfigError('createRemoteScorer needs an options object { protocol, url, ... }');
  rejectUnknownKeys(options, KEYS, 'createRemoteScorer', 'an option', (field, problem) => {
    return new RemoteConfigError(`${field} ${problem}`);
  });
  const protocol = oneOf('protocol', options.protocol, PROTOCOLS, fail);
  const model = options.model === undefined ? undefined : nonEmptyString('model', options.model, fail);
  if (protocol === 'kserve' && model === undefined)
    throw new RemoteConfigError('createRemoteScorer: model is required for kserve (it names /v2/models/<model>/infer)');
  const endpoint = endpointOf(protocol, nonEmptyString('url', options.url, fail), model);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${nonEmptyString('apiKey', options.apiKey, fail)}`;
  return {
    protocol,
    endpoint,
    model,
    headers,
    maxBatch:
      options.maxBatch === undefined
        ? DEFAULT_MAX_BATCH[protocol]
        : positiveInteger('maxBatch', options.maxBatch, fail),
    id:
      options.id === undefined
        ? `remote:${protocol}:${model ?? '-'}@${endpoint.href}`
        : nonEmptyString('id', options.id, fail),
    requestTimeoutMs: positiveInteger('requestTimeoutMs', options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, fail),
    maxConcurrentRequests: positiveInteger(
      'maxConcurrentRequests',
      options.maxConcurrentRequests ?? DEFAULT_MAX_CONCURRENT_REQUESTS,
      fail,
    ),
    maxResponseBytes: positiveInteger('maxResponseBytes', options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, fail),
  };
}

/** The request URL: the protocol's path appended to a base URL, or the URL as given when it ends with it. */
function endpointOf(protocol: RemoteProtocol, url: string, model: string | undefined): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RemoteConfigError('createRemoteScorer: url must be an absolute http(s) URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new RemoteConfigError(`createRemoteScorer: url must be http or https, got ${parsed.protocol}`);
  // fetch refuses such URLs, and the scorer id (which holds the URL) must not carry a secret.
  if (parsed.username !== '' || parsed.password !== '')
    throw new RemoteConfigError('createRemoteScorer: url must not hold credentials; pass the key as apiKey');
  const path = protocol === 'kserve' ? `/v2/models/${encodeURIComponent(model as string)}/infer` : PATHS[protocol];
  if (parsed.pathname.endsWith(path)) return parsed;
  const base = parsed.pathname.replace(/\/+$/, '');
  parsed.pathname = `${base}${path}`;
  return parsed;
}
