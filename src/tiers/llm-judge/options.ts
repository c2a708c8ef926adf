/**
 * Options of createLlmJudge, their defaults, and validation (a bad option is an
 * InvalidArgumentError at creation, naming the option; unknown keys are refused so a misspelt
 * limit never silently means "no limit").
 */
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../../errors.js';
import type { EndpointSettings } from './http-client.js';
import { type AnswerVocabulary, DEFAULT_VOCABULARY, normalizeToken } from './logprobs.js';
import { DEFAULT_JUDGE_SYSTEM_PROMPT, PROMPT_VERSION, type PromptLimits } from './prompt.js';
import { DEFAULT_QUESTIONS, type JudgeQuestion, questionSetVersion, validateQuestions } from './questions.js';
import { rejectUnknownKeys } from '../../util/option-keys.js';
import {
  describeValue,
  integerInRange,
  nonNegativeNumber,
  type OptionErrorFactory,
  positiveFraction,
  positiveNumber,
} from '../../util/validate-options.js';

export interface LlmJudgeOptions {
  /** Base URL of an OpenAI-compatible API, e.g. 'http://127.0.0.1:8000/v1' (or the full .../chat/completions URL). */
  readonly baseURL: string;
  /** Model name sent in every request (part of the scorer id). */
  readonly model: string;
  /** Sent as `Authorization: Bearer <apiKey>`. Never part of the id, errors or stats. */
  readonly apiKey?: string;
  /** Extra request headers (e.g. an org/project header, a gateway key). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The questions; default DEFAULT_QUESTIONS (relevant, evidence, contradicts_premise, injection). */
  readonly questions?: readonly JudgeQuestion[];
  /** HTTP calls in flight at most. Default 4. */
  readonly concurrency?: number;
  /** Client-side request rate limit. Default none. */
  readonly requestsPerMinute?: number;
  /** Client-side token rate limit (prompt + max completion tokens, corrected by reported usage). Default none. */
  readonly tokensPerMinute?: number;
  /** 'one': one question per request (default); 'all': every question of a pair in one request. */
  readonly questionsPerRequest?: 'one' | 'all';
  /** Candidates per request (1–16): several passages of one query judged in one request. Default 1. */
  readonly candidatesPerRequest?: number;
  /** `top_logprobs` asked for (1–20). Default 10. */
  readonly topLogprobs?: number;
  /** Retries per request after the first attempt (429, 408, 5xx, connection errors, timeouts). Default 2. */
  readonly maxRetries?: number;
  /** Backoff base (ms): retry k waits uniform(0, min(retryMaxMs, retryBaseMs·2^k)). Default 100. */
  readonly retryBaseMs?: number;
  /** Backoff cap (ms). Default 2000. */
  readonly retryMaxMs?: number;
  /** Timeout of one HTTP attempt (ms), also bounded by the call's deadline. Default 30000. */
  readonly requestTimeoutMs?: number;
  /** Requests waiting for a pool slot at most; beyond it calls fail with OverloadedError. Default 1024. */
  readonly maxQueuedRequests?: number;
  /**
   * Admission control: a request that would have to queue is admitted only when its expected
   * completion fills at most this share of the time left before the deadline. (0, 1]; default 0.8.
   */
  readonly admissionHeadroom?: number;
  /** Passage metadata keys sent to the judge (absent keys skipped). Default ['source_type']. */
  readonly metadataKeys?: readonly string[];
  /** Passage text is cut to this many characters. Default 4000. */
  readonly maxPassageChars?: number;
  /** Query is cut to this many characters. Default 1000. */
  readonly maxQueryChars?: number;
  /** Replaces the system prompt (part of the id). */
  readonly systemPrompt?: string;
  /** Words read as yes / no besides 'yes' / 'no' (matched case-insensitively, any leading space). */
  readonly yesTokens?: readonly string[];
  readonly noTokens?: readonly string[];
  /** Extra request body fields (e.g. vLLM `chat_template_kwargs`); may not replace the judge's own fields. */
  readonly extraBody?: Readonly<Record<string, unknown>>;
  /** `seed` sent with every request, for endpoints that support it. */
  readonly seed?: number;
  /** The judge's own answer cache: { maxEntries } (default 10,000 answers) or false. */
  readonly answerCache?: { readonly maxEntries?: number } | false;
  /** The judge answers this long before the deadline with what it has. Default 2 ms. */
  readonly returnMarginMs?: number;
  /** Latency assumed for cost predictions before the first measurement (ms). Default 250. */
  readonly expectedLatencyMs?: number;
  /** Served model revision/quantisation, appended to the model in the id (answers cached per revision). */
  readonly modelRevision?: string;
  /** Tier label on results. Default 'llm-judge'. */
  readonly tierName?: string;
  /** Largest response body accepted (bytes). Default 1 MiB. */
  readonly maxResponseBytes?: number;
  /** Clock of deadlines (Date.now() scale). Default Date.now. */
  readonly clock?: () => number;
  /** Uniform [0, 1) source of the backoff jitter. Default Math.random. */
  readonly random?: () => number;
}

const KEYS: ReadonlySet<string> = new Set([
  'baseURL',
  'model',
  'apiKey',
  'headers',
  'questions',
  'concurrency',
  'requestsPerMinute',
  'tokensPerMinute',
  'questionsPerRequest',
  'candidatesPerRequest',
  'topLogprobs',
  'maxRetries',
  'retryBaseMs',
  'retryMaxMs',
  'requestTimeoutMs',
  'maxQueuedRequests',
  'admissionHeadroom',
  'metadataKeys',
  'maxPassageChars',
  'maxQueryChars',
  'systemPrompt',
  'yesTokens',
  'noTokens',
  'extraBody',
  'seed',
  'answerCache',
  'returnMarginMs',
  'expectedLatencyMs',
  'modelRevision',
  'tierName',
  'maxResponseBytes',
  'clock',
  'random',
]);

/** Body fields the judge sets itself; extraBody may not replace them. */
const RESERVED_BODY: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'logprobs',
  'top_logprobs',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'stream',
]);

export const DEFAULT_CONCURRENCY = 4;
export const DEFAULT_TOP_LOGPROBS = 10;
export const LLM_JUDGE_TIER = 'llm-judge';

/** Every option resolved; the endpoint settings (URL, headers, retries, timeouts) are the HTTP client's. */
export interface ResolvedJudgeOptions extends EndpointSettings {
  readonly model: string;
  readonly questions: readonly JudgeQuestion[];
  readonly questionSetVersion: string;
  readonly concurrency: number;
  readonly requestsPerMinute: number | undefined;
  readonly tokensPerMinute: number | undefined;
  readonly questionsPerRequest: 'one' | 'all';
  readonly candidatesPerRequest: number;
  readonly topLogprobs: number;
  readonly maxQueuedRequests: number;
  readonly limits: PromptLimits;
  readonly systemPrompt: string;
  readonly vocabulary: AnswerVocabulary;
  readonly extraBody: Readonly<Record<string, unknown>>;
  readonly seed: number | undefined;
  readonly answerCacheEntries: number;
  readonly returnMarginMs: number;
  readonly expectedLatencyMs: number;
  readonly tierName: string;
  /** The scorer id: model, question-set version, prompt version and a hash of every answer-changing setting. */
  readonly id: string;
}

/** The judge's option errors: the shared validators' words, prefixed with the factory's name. */
const judgeError: OptionErrorFactory = (name, requirement, value) =>
  new InvalidArgumentError(`createLlmJudge: ${name} must be ${requirement}, got ${describeValue(value)}`);

function bad(name: string, what: string, value: unknown): never {
  throw judgeError(name, what, value);
}

function int(name: string, value: unknown, min: number, max: number, fallback: number): number {
  return value === undefined ? fallback : integerInRange(name, value, min, max, judgeError);
}

function positive(name: string, value: unknown, fallback: number | undefined, allowZero = false): number | undefined {
  if (value === undefined) return fallback;
  return allowZero ? nonNegativeNumber(name, value, judgeError) : positiveNumber(name, value, judgeError);
}

function headroom(value: unknown): number {
  return value === undefined ? 0.8 : positiveFraction('admissionHeadroom', value, judgeError);
}

function stringList(name: string, value: unknown, fallback: readonly string[]): readonly string[] {
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 64))
    bad(name, 'an array of non-empty strings (≤ 64 characters)', value);
  return Object.freeze([...(value as string[])]);
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function resolveHeaders(apiKey: unknown, extra: unknown): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey !== undefined) {
    if (typeof apiKey !== 'string' || apiKey.length === 0 || /[\r\n]/.test(apiKey))
      throw new InvalidArgumentError('createLlmJudge: apiKey must be a non-empty string without line breaks');
    headers.authorization = `Bearer ${apiKey}`;
  }
  if (extra !== undefined) {
    if (typeof extra !== 'object' || extra === null || Array.isArray(extra))
      throw new InvalidArgumentError('createLlmJudge: headers must be a record of header name → string value');
    for (const [name, value] of Object.entries(extra)) {
      if (!HEADER_NAME.test(name))
        throw new InvalidArgumentError(`createLlmJudge: headers: ${JSON.stringify(name)} is not a valid header name`);
      if (typeof value !== 'string' || /[\r\n\0]/.test(value))
        throw new InvalidArgumentError(`createLlmJudge: headers.${name} must be a string without line breaks`);
      const lower = name.toLowerCase();
      if (lower === 'content-length' || lower === 'host' || lower === 'transfer-encoding')
        throw new InvalidArgumentError(`createLlmJudge: headers.${name} is set by the HTTP client`);
      headers[lower] = value;
    }
  }
  return headers;
}

function resolveUrl(baseURL: unknown): string {
  if (typeof baseURL !== 'string' || baseURL.length === 0)
    throw new InvalidArgumentError('createLlmJudge: baseURL must be a URL string, e.g. http://127.0.0.1:8000/v1');
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch (error) {
    throw new InvalidArgumentError(`createLlmJudge: baseURL ${JSON.stringify(baseURL)} is not a URL`, {
      cause: error,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('createLlmJudge: baseURL must be an http: or https: URL');
  if (url.username !== '' || url.password !== '')
    throw new InvalidArgumentError('createLlmJudge: put credentials in apiKey/headers, not in baseURL');
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/chat/completions') ? path : `${path}/chat/completions`;
  return url.toString();
}

function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 10);
}

export function resolveOptions(options: LlmJudgeOptions): ResolvedJudgeOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('createLlmJudge needs an options object { baseURL, model, ... }');
  rejectUnknownKeys(options, KEYS, 'createLlmJudge');
  const url = resolveUrl(options.baseURL);
  if (typeof options.model !== 'string' || options.model.trim().length === 0)
    throw new InvalidArgumentError('createLlmJudge: model must be a non-empty string');
  const headers = resolveHeaders(options.apiKey, options.headers);
  const questions = validateQuestions(options.questions ?? DEFAULT_QUESTIONS);
  const questionsPerRequest = options.questionsPerRequest ?? 'one';
  if (questionsPerRequest !== 'one' && questionsPerRequest !== 'all')
    bad('questionsPerRequest', "'one' or 'all'", questionsPerRequest);
  const limits: PromptLimits = Object.freeze({
    maxPassageChars: int('maxPassageChars', options.maxPassageChars, 1, 1_000_000, 4000),
    maxQueryChars: int('maxQueryChars', options.maxQueryChars, 1, 100_000, 1000),
    metadataKeys: stringList('metadataKeys', options.metadataKeys, ['source_type']),
  });
  const systemPrompt = options.systemPrompt ?? DEFAULT_JUDGE_SYSTEM_PROMPT;
  if (typeof systemPrompt !== 'string' || systemPrompt.trim().length === 0)
    bad('systemPrompt', 'a non-empty string', systemPrompt);
  const yes = new Set([
    ...DEFAULT_VOCABULARY.yes,
    ...stringList('yesTokens', options.yesTokens, []).map(normalizeToken),
  ]);
  const no = new Set([...DEFAULT_VOCABULARY.no, ...stringList('noTokens', options.noTokens, []).map(normalizeToken)]);
  for (const w of yes)
    if (no.has(w) || w.length === 0)
      throw new InvalidArgumentError(`createLlmJudge: ${JSON.stringify(w)} cannot be both a yes and a no token`);
  const extraBody = options.extraBody ?? {};
  if (typeof extraBody !== 'object' || extraBody === null || Array.isArray(extraBody))
    throw new InvalidArgumentError('createLlmJudge: extraBody must be an object of request fields');
  for (const key of Object.keys(extraBody))
    if (RESERVED_BODY.has(key))
      throw new InvalidArgumentError(`createLlmJudge: extraBody.${key} is set by the judge and cannot be replaced`);
  try {
    JSON.stringify(extraBody);
  } catch (error) {
    throw new InvalidArgumentError('createLlmJudge: extraBody must be JSON-serialisable', { cause: error });
  }
  const seed = options.seed;
  if (seed !== undefined && (typeof seed !== 'number' || !Number.isInteger(seed))) bad('seed', 'an integer', seed);
  const cacheOption = options.answerCache;
  let answerCacheEntries = 10_000;
  if (cacheOption === false) answerCacheEntries = 0;
  else if (cacheOption !== undefined) {
    if (typeof cacheOption !== 'object' || cacheOption === null)
      bad('answerCache', '{ maxEntries } or false', cacheOption);
    answerCacheEntries = int('answerCache.maxEntries', cacheOption.maxEntries, 0, 10_000_000, 10_000);
  }
  const tierName = options.tierName ?? LLM_JUDGE_TIER;
  if (typeof tierName !== 'string' || tierName.length === 0 || tierName === 'cache')
    bad('tierName', "a non-empty string other than 'cache'", tierName);
  const modelRevision = options.modelRevision;
  if (modelRevision !== undefined && (typeof modelRevision !== 'string' || modelRevision.length === 0))
    bad('modelRevision', 'a non-empty string', modelRevision);
  if (options.clock !== undefined && typeof options.clock !== 'function') bad('clock', 'a function', options.clock);
  if (options.random !== undefined && typeof options.random !== 'function') bad('random', 'a function', options.random);
  const candidatesPerRequest = int('candidatesPerRequest', options.candidatesPerRequest, 1, 16, 1);
  const topLogprobs = int('topLogprobs', options.topLogprobs, 1, 20, DEFAULT_TOP_LOGPROBS);
  const qsv = questionSetVersion(questions);
  const model = options.model.trim();
  // Everything that can change an answer, hashed into the id (and so into every cache key).
  const settings = hash({
    questionsPerRequest,
    candidatesPerRequest,
    topLogprobs,
    limits,
    systemPrompt,
    yes: [...yes].sort(),
    no: [...no].sort(),
    extraBody,
    seed,
  });
  const id = `llm-judge:${model}${modelRevision === undefined ? '' : `@${modelRevision}`}:qs-${qsv}:p${PROMPT_VERSION}:${settings}`;
  return {
    url,
    model,
    headers,
    questions,
    questionSetVersion: qsv,
    concurrency: int('concurrency', options.concurrency, 1, 1024, DEFAULT_CONCURRENCY),
    requestsPerMinute: positive('requestsPerMinute', options.requestsPerMinute, undefined),
    tokensPerMinute: positive('tokensPerMinute', options.tokensPerMinute, undefined),
    questionsPerRequest,
    candidatesPerRequest,
    topLogprobs,
    maxRetries: int('maxRetries', options.maxRetries, 0, 10, 2),
    retryBaseMs: positive('retryBaseMs', options.retryBaseMs, 100, true) as number,
    retryMaxMs: positive('retryMaxMs', options.retryMaxMs, 2000, true) as number,
    requestTimeoutMs: Math.min(2_147_483_647, positive('requestTimeoutMs', options.requestTimeoutMs, 30_000) as number),
    maxQueuedRequests: int('maxQueuedRequests', options.maxQueuedRequests, 0, 1_000_000, 1024),
    admissionHeadroom: headroom(options.admissionHeadroom),
    limits,
    systemPrompt,
    vocabulary: Object.freeze({ yes, no }),
    extraBody: Object.freeze({ ...extraBody }),
    seed,
    answerCacheEntries,
    returnMarginMs: positive('returnMarginMs', options.returnMarginMs, 2, true) as number,
    expectedLatencyMs: positive('expectedLatencyMs', options.expectedLatencyMs, 250) as number,
    tierName,
    maxResponseBytes: int('maxResponseBytes', options.maxResponseBytes, 1024, 64 << 20, 1 << 20),
    clock: options.clock ?? Date.now,
    random: options.random ?? Math.random,
    id,
  };
}
