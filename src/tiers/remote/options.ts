/**
 * Options of createRemoteScorer: defaults per protocol and validation. A bad option is a
 * RemoteConfigError at creation naming it; unknown keys are refused (a misspelt `maxbatch` must not
 * silently mean the default).
 */
import { rejectUnknownKeys } from '../../util/option-keys.js';
import {
  integerInRange,
  nonEmptyString,
  oneOf,
  positiveInteger,
  type OptionErrorFactory,
} from '../../util/validate-options.js';
import { describeValue } from '../../util/validate-options.js';
import type { TruncationMode } from '../cross-encoder/tokenize-pairs.js';
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
  /**
   * Model name sent to the backend (Cohere: required by the hosted API; TEI: sent when given;
   * kserve: required, it names `/v2/models/<model>`).
   */
  readonly model?: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never part of an error message or the scorer id. */
  readonly apiKey?: string;
  /**
   * Most passages per request; larger calls are split and their answers merged in input order.
   * Default: TEI's `max_client_batch_size` (32) for `tei`, Cohere's 1,000 documents for `cohere`,
   * the model's Triton `max_batch_size` for `kserve` (32 where the server does not say; a given
   * maxBatch is lowered to it). A 413 or 422 answer to a batch of more than one passage lowers it
   * to the limit the answer names, else halves it (for this and later calls).
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
  /**
   * kserve (required there, refused elsewhere): the folder whose tokenizer the engine tokenizes
   * with, `tokenizer.json` (or a WordPiece `vocab.txt`), with the optional `config.json`
   * (`pad_token_id`, `max_position_embeddings`) and `tokenizer_config.json` (`model_max_length`)
   * beside it: the model folder the local cross-encoder tier would load serves.
   */
  readonly tokenizerDir?: string;
  /**
   * kserve: tokens per (query, passage) pair, special tokens included; default 512, never above
   * the limits `tokenizerDir` declares (as the local cross-encoder tier's `maxLength`).
   */
  readonly maxLength?: number;
  /** kserve: 'longest_first' (default, as Hugging Face) or 'only_second' (cut only the passage). */
  readonly truncation?: TruncationMode;
  /** kserve: the model version, sent as `/v2/models/<model>/versions/<modelVersion>/…`; default the server's choice. */
  readonly modelVersion?: string;
  /**
   * kserve: the output tensor holding the logits. Default: the model's only output, else the one
   * named `logits` (from `GET /v2/models/<model>`).
   */
  readonly output?: string;
}

/**
 * Default maxBatch per protocol: TEI's max_client_batch_size; Cohere's documented document limit;
 * for kserve, the cap until the server's max_batch_size is known (or where it names none).
 */
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
const PATHS: Readonly<Record<'cohere' | 'tei', string>> = { cohere: '/v2/rerank', tei: '/rerank' };

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
  tokenizerDir: true,
  maxLength: true,
  truncation: true,
  modelVersion: true,
  output: true,
};
/** Options only the kserve protocol reads (the others tokenize on the server). */
const KSERVE_ONLY = ['tokenizerDir', 'maxLength', 'truncation', 'modelVersion', 'output'] as const;
const TRUNCATIONS: readonly TruncationMode[] = ['longest_first', 'only_second'];
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
  /** The kserve protocol's own settings (absent for cohere and tei). */
  readonly kserve: KserveSettings | undefined;
}

/** The kserve protocol's settings: its other endpoints and how the engine tokenizes. */
export interface KserveSettings {
  /** `GET <base>/v2/health/ready`: the server's readiness. */
  readonly healthUrl: URL;
  /** `GET <base>/v2/models/<model>[/versions/<v>]`: the model's inputs and outputs. */
  readonly metadataUrl: URL;
  /** `GET …/config` (Triton's model configuration, with `max_batch_size`; KServe has none). */
  readonly configUrl: URL;
  readonly tokenizerDir: string;
  /** The requested max length; undefined: 512 or the folder's limit. */
  readonly maxLength: number | undefined;
  readonly truncation: TruncationMode;
  /** The output named by the `output` option; undefined: discovered. */
  readonly output: string | undefined;
  /** Whether maxBatch was given (else the server's max_batch_size replaces the default). */
  readonly maxBatchGiven: boolean;
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
  if (protocol !== 'kserve')
    for (const key of KSERVE_ONLY)
      if (options[key] !== undefined)
        throw new RemoteConfigError(
          `createRemoteScorer: ${key} is a kserve option (${protocol} backends tokenize on the server)`,
        );
  const modelVersion =
    options.modelVersion === undefined ? undefined : nonEmptyString('modelVersion', options.modelVersion, fail);
  const path =
    protocol === 'kserve' ? kservePaths(model as string, modelVersion).infer : PATHS[protocol as 'cohere' | 'tei'];
  const { endpoint, base } = endpointOf(nonEmptyString('url', options.url, fail), path);
  const kserve =
    protocol === 'kserve' ? kserveSettings(options, base, kservePaths(model as string, modelVersion)) : undefined;
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
      options.id === undefined ? defaultId(protocol, model, endpoint, kserve) : nonEmptyString('id', options.id, fail),
    requestTimeoutMs: positiveInteger('requestTimeoutMs', options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, fail),
    maxConcurrentRequests: positiveInteger(
      'maxConcurrentRequests',
      options.maxConcurrentRequests ?? DEFAULT_MAX_CONCURRENT_REQUESTS,
      fail,
    ),
    maxResponseBytes: positiveInteger('maxResponseBytes', options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, fail),
    kserve,
  };
}

/**
 * `remote:<protocol>:<model>@<endpoint>`; a kserve id adds the tokenization that changes the
 * scores (`:len<maxLength or default>:<truncation>`), as the local cross-encoder's id does.
 */
function defaultId(
  protocol: RemoteProtocol,
  model: string | undefined,
  endpoint: URL,
  kserve: KserveSettings | undefined,
): string {
  const id = `remote:${protocol}:${model ?? '-'}@${endpoint.href}`;
  return kserve === undefined ? id : `${id}:len${kserve.maxLength ?? 'default'}:${kserve.truncation}`;
}

/** The model's paths under the server's base: `/v2/models/<model>[/versions/<v>]` and its infer. */
function kservePaths(model: string, version: string | undefined): { model: string; infer: string } {
  const at = `/v2/models/${encodeURIComponent(model)}${version === undefined ? '' : `/versions/${encodeURIComponent(version)}`}`;
  return { model: at, infer: `${at}/infer` };
}

function kserveSettings(options: RemoteScorerOptions, base: URL, paths: { model: string }): KserveSettings {
  if (options.tokenizerDir === undefined)
    throw new RemoteConfigError(
      'createRemoteScorer: tokenizerDir is required for kserve (the engine tokenizes: a folder with tokenizer.json)',
    );
  const tokenizerDir = nonEmptyString('tokenizerDir', options.tokenizerDir, fail);
  const at = (path: string): URL => {
    const url = new URL(base.href);
    url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
    return url;
  };
  return {
    healthUrl: at('/v2/health/ready'),
    metadataUrl: at(paths.model),
    configUrl: at(`${paths.model}/config`),
    tokenizerDir,
    maxLength:
      options.maxLength === undefined
        ? undefined
        : integerInRange('maxLength', options.maxLength, 4, Number.MAX_SAFE_INTEGER, fail),
    truncation: oneOf('truncation', options.truncation ?? 'longest_first', TRUNCATIONS, fail),
    output: options.output === undefined ? undefined : nonEmptyString('output', options.output, fail),
    maxBatchGiven: options.maxBatch !== undefined,
  };
}

/**
 * The request URL (the protocol's path appended to a base URL, or the URL as given when it ends
 * with it) and the base (the URL without the path: KServe's other endpoints hang off it).
 */
function endpointOf(url: string, path: string): { endpoint: URL; base: URL } {
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
  const base = new URL(parsed.href);
  if (parsed.pathname.endsWith(path)) {
    base.pathname = parsed.pathname.slice(0, parsed.pathname.length - path.length);
    return { endpoint: parsed, base };
  }
  // The path as a string: a URL's empty pathname reads back as '/'.
  const prefix = parsed.pathname.replace(/\/+$/, '');
  base.pathname = prefix;
  parsed.pathname = `${prefix}${path}`;
  return { endpoint: parsed, base };
}
