/**
 * The OpenAI chat-completions wire format, as far as the judge uses it: the request body it sends
 * and a strict reader of the response (choices[0].message.content, choices[0].logprobs.content[]
 * with token, logprob, top_logprobs[], and usage). Anything malformed is an LlmResponseFormatError,
 * never a silently wrong score.
 */
import { LlmResponseFormatError } from './errors.js';
import type { AnswerPosition, TokenLogprob } from './logprobs.js';
import type { ChatMessage } from './prompt.js';

export interface ChatCompletionRequestBody {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly max_tokens: number;
  readonly temperature: number;
  readonly n: 1;
  readonly stream: false;
  readonly logprobs: boolean;
  readonly top_logprobs?: number;
  readonly seed?: number;
  readonly [extra: string]: unknown;
}

export interface ParsedCompletion {
  readonly content: string;
  /** Generated positions with their alternatives; undefined when the endpoint returned no logprobs. */
  readonly positions: readonly AnswerPosition[] | undefined;
  readonly finishReason: string | undefined;
  readonly promptTokens: number | undefined;
  readonly completionTokens: number | undefined;
}

function fail(message: string): never {
  throw new LlmResponseFormatError(`chat completion: ${message}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A log-probability ≤ 0 (tiny positive rounding clamped to 0). An absent or null value is NaN
 * ("unknown": some servers omit it, e.g. Go encoders with omitempty drop an exact 0), which the
 * reader ignores; any other non-number is a format error.
 */
function readLogprob(value: unknown, where: string): number {
  if (value === undefined || value === null) return Number.NaN;
  if (typeof value !== 'number' || Number.isNaN(value) || value > 1e-6)
    fail(`${where} must be a log-probability (a number ≤ 0), got ${JSON.stringify(value)}`);
  return Math.min(0, value);
}

function readTop(value: unknown, where: string): TokenLogprob[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(`${where} must be an array`);
  const out: TokenLogprob[] = [];
  value.forEach((entry: unknown, j) => {
    if (!isRecord(entry) || typeof entry.token !== 'string') fail(`${where}[${j}] must be { token, logprob }`);
    out.push({ token: entry.token, logprob: readLogprob(entry.logprob, `${where}[${j}].logprob`) });
  });
  return out;
}

function readPositions(logprobs: unknown): AnswerPosition[] | undefined {
  if (logprobs === undefined || logprobs === null) return undefined;
  if (!isRecord(logprobs)) fail('choices[0].logprobs must be an object or null');
  const content = logprobs.content;
  if (content === undefined || content === null) return undefined;
  if (!Array.isArray(content)) fail('choices[0].logprobs.content must be an array');
  if (content.length === 0) return undefined;
  return content.map((entry: unknown, i) => {
    const where = `choices[0].logprobs.content[${i}]`;
    if (!isRecord(entry) || typeof entry.token !== 'string') fail(`${where} must be { token, logprob, top_logprobs }`);
    return {
      token: entry.token,
      logprob: readLogprob(entry.logprob, `${where}.logprob`),
      top: readTop(entry.top_logprobs, `${where}.top_logprobs`),
    };
  });
}

function readCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** Reads a parsed JSON response body of /chat/completions. */
export function parseChatCompletion(body: unknown): ParsedCompletion {
  if (!isRecord(body)) fail('the body is not a JSON object');
  const choices = body.choices;
  if (!Array.isArray(choices) || choices.length === 0) fail('choices must be a non-empty array');
  const choice = choices[0] as unknown;
  if (!isRecord(choice)) fail('choices[0] must be an object');
  const message = choice.message;
  if (!isRecord(message)) fail('choices[0].message must be an object');
  const content = message.content;
  if (content !== null && content !== undefined && typeof content !== 'string')
    fail('choices[0].message.content must be a string or null');
  const usage = isRecord(body.usage) ? body.usage : undefined;
  return {
    content: typeof content === 'string' ? content : '',
    positions: readPositions(choice.logprobs),
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined,
    promptTokens: readCount(usage?.prompt_tokens),
    completionTokens: readCount(usage?.completion_tokens),
  };
}

/** Reads a response body as text, refusing more than `maxBytes` (a misbehaving server cannot exhaust memory). */
export async function readBodyText(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    fail(`the body is ${declared} bytes, more than the ${maxBytes} accepted`);
  }
  const body = response.body;
  if (body === null) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      fail(`the body is more than the ${maxBytes} bytes accepted`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
