/**
 * One chat-completions request with its retry loop, all inside the caller's deadline. We own this
 * loop (Node's built-in fetch, not an SDK) because an SDK's retries and timeouts cannot be bound
 * to the gate's deadline or cancelled with the gate's AbortSignal.
 *
 * Per attempt: refuse it at once if the queue ahead means it cannot finish before the deadline
 * (admission control), take a slot of the bounded pool (retries go to the front of its queue), skip
 * the attempt if less time is left than the fastest recent request took, wait for the rate limiter,
 * then POST with a timeout of min(requestTimeoutMs, time left). Retried: 429 (after Retry-After /
 * retry-after-ms, which also pauses every other request), 408, 5xx, connection errors and attempt
 * timeouts, at most maxRetries times, with full-jitter exponential backoff; never when the wait
 * would end after the deadline, never after the caller's AbortSignal fired. Not retried: other
 * 4xx, malformed bodies.
 */
import { AbortedError, DeadlineExceededError } from '../../errors.js';
import { LlmEndpointError, LlmResponseFormatError } from './errors.js';
import type { LatencyTracker } from './latency.js';
import type { CallPool } from './pool.js';
import {
  type ChatCompletionRequestBody,
  type ParsedCompletion,
  parseChatCompletion,
  readBodyText,
} from './protocol.js';
import type { RateLimiter } from './rate-limiter.js';
import { abortError, sleep } from './timing.js';

export interface EndpointSettings {
  /** Full URL of the chat-completions endpoint. */
  readonly url: string;
  /** Request headers (content type, authorization, the caller's extra headers). */
  readonly headers: Readonly<Record<string, string>>;
  readonly maxRetries: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly requestTimeoutMs: number;
  readonly maxResponseBytes: number;
  /** Share of the time left that a queued request's expected completion may fill (admission control). */
  readonly admissionHeadroom: number;
  readonly clock: () => number;
  readonly random: () => number;
}

/** Counters of the HTTP layer (see LlmJudgeStats). */
export interface HttpCounters {
  attempts: number;
  retries: number;
  responses429: number;
  responses5xx: number;
  otherErrorResponses: number;
  connectionErrors: number;
  attemptTimeouts: number;
  malformedResponses: number;
  cancelledAttempts: number;
  skippedForTime: number;
  promptTokens: number;
  completionTokens: number;
  /** Requests whose response carried no usage: their tokens are estimated. */
  estimatedTokenRequests: number;
}

export function newHttpCounters(): HttpCounters {
  return {
    attempts: 0,
    retries: 0,
    responses429: 0,
    responses5xx: 0,
    otherErrorResponses: 0,
    connectionErrors: 0,
    attemptTimeouts: 0,
    malformedResponses: 0,
    cancelledAttempts: 0,
    skippedForTime: 0,
    promptTokens: 0,
    completionTokens: 0,
    estimatedTokenRequests: 0,
  };
}

/** Longest Retry-After honoured; a longer one is treated as this (the deadline still applies). */
const MAX_RETRY_AFTER_MS = 120_000;

/** Retry-After as ms: `retry-after-ms`, or `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0) return Math.min(v, MAX_RETRY_AFTER_MS);
  }
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  const date = Date.parse(value);
  if (Number.isFinite(date)) return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
  return undefined;
}

type AttemptOutcome =
  | { readonly kind: 'ok'; readonly completion: ParsedCompletion }
  | { readonly kind: 'retry'; readonly error: LlmEndpointError; readonly retryAfterMs: number | undefined };

function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}

export class ChatClient {
  constructor(
    private readonly settings: EndpointSettings,
    private readonly pool: CallPool,
    private readonly limiter: RateLimiter,
    private readonly counters: HttpCounters,
    private readonly latency: LatencyTracker,
  ) {}

  /** Sends the request (with retries) and returns the parsed completion, or throws a typed error. */
  async complete(
    body: ChatCompletionRequestBody,
    estimatedTokens: number,
    signal: AbortSignal | undefined,
    deadline: number | undefined,
  ): Promise<ParsedCompletion> {
    const { clock } = this.settings;
    const payload = JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw abortError(signal);
      if (deadline !== undefined && !this.admits(attempt > 0, deadline)) {
        // Admission control: a request predicted to finish too late is refused now, so the queue
        // holds only work that can still finish in time.
        this.counters.skippedForTime++;
        throw new DeadlineExceededError('the call queue is too long for this request to finish before its deadline');
      }
      const release = await this.pool.acquire(signal, deadline, attempt > 0);
      let outcome: AttemptOutcome;
      try {
        if (deadline !== undefined && deadline - clock() < this.latency.floorMs()) {
          this.counters.skippedForTime++;
          throw new DeadlineExceededError('less time is left than the endpoint has needed for a request');
        }
        await this.limiter.acquire(estimatedTokens, signal, deadline);
        outcome = await this.attempt(payload, estimatedTokens, signal, deadline, attempt + 1);
      } finally {
        release();
      }
      if (outcome.kind === 'ok') return outcome.completion;
      if (attempt >= this.settings.maxRetries) throw outcome.error;
      const backoff =
        this.settings.random() * Math.min(this.settings.retryMaxMs, this.settings.retryBaseMs * 2 ** attempt);
      const delay = outcome.retryAfterMs ?? backoff;
      if (outcome.retryAfterMs !== undefined) this.limiter.pauseUntil(clock() + outcome.retryAfterMs);
      if (deadline !== undefined && clock() + delay >= deadline) {
        throw new LlmEndpointError(
          `${outcome.error.message}; not retried: the next attempt would start after the deadline`,
          { status: outcome.error.status, retryable: true, attempts: attempt + 1 },
          { cause: outcome.error },
        );
      }
      this.counters.retries++;
      await sleep(delay, signal, deadline, clock, 'retry backoff');
    }
  }

  /**
   * Whether a request entering the queue now is expected to finish in time. With a free slot it is
   * sent (the fastest-recent-latency check at the slot decides). Queued, its expected finish is:
   * the calls running now about half done, each full wave of queued calls ahead one mean latency
   * (a retry goes to the front: none ahead), then its own call one mean latency; it is admitted
   * when that fills at most `admissionHeadroom` of the time left, which keeps slack for latency
   * jitter and a late event loop. Before any measurement everything is admitted.
   */
  private admits(front: boolean, deadline: number): boolean {
    const pool = this.pool;
    if (this.latency.samples === 0 || (pool.active < pool.concurrency && pool.queued === 0)) return true;
    const waves = (front ? 0 : Math.floor(pool.queued / pool.concurrency)) + 0.5;
    const expected = (waves + 1) * this.latency.expectedMs();
    return expected <= this.settings.admissionHeadroom * (deadline - this.settings.clock());
  }

  private async attempt(
    payload: string,
    estimatedTokens: number,
    signal: AbortSignal | undefined,
    deadline: number | undefined,
    attempts: number,
  ): Promise<AttemptOutcome> {
    const { clock, requestTimeoutMs, url, headers, maxResponseBytes } = this.settings;
    const c = this.counters;
    const timeoutMs = deadline === undefined ? requestTimeoutMs : Math.min(requestTimeoutMs, deadline - clock());
    if (timeoutMs <= 0) throw new DeadlineExceededError('the deadline passed before the request was sent');
    // One controller per attempt, aborted by its timeout or by the call's signal (linked by hand:
    // cheaper than AbortSignal.any, and the link is removed when the attempt ends).
    const timeout = new AbortController();
    const attempt = new AbortController();
    const timer = setTimeout(() => {
      timeout.abort();
      attempt.abort();
    }, timeoutMs);
    const onCallAbort = (): void => attempt.abort(signal?.reason);
    signal?.addEventListener('abort', onCallAbort, { once: true });
    const attemptSignal = attempt.signal;
    const started = performance.now();
    c.attempts++;
    try {
      let response: Response;
      try {
        response = await fetch(url, { method: 'POST', headers, body: payload, signal: attemptSignal });
      } catch (error) {
        return this.failedFetch(error, signal, timeout.signal, deadline, attempts);
      }
      const status = response.status;
      if (status === 200) {
        let text: string;
        try {
          text = await readBodyText(response, maxResponseBytes);
        } catch (error) {
          if (error instanceof LlmResponseFormatError) {
            c.malformedResponses++;
            throw error;
          }
          return this.failedFetch(error, signal, timeout.signal, deadline, attempts);
        }
        let completion: ParsedCompletion;
        try {
          completion = parseChatCompletion(JSON.parse(text) as unknown);
        } catch (error) {
          c.malformedResponses++;
          if (error instanceof LlmResponseFormatError) throw error;
          throw new LlmResponseFormatError('chat completion: the body is not valid JSON', { cause: error });
        }
        this.latency.record(performance.now() - started);
        if (completion.promptTokens !== undefined && completion.completionTokens !== undefined) {
          c.promptTokens += completion.promptTokens;
          c.completionTokens += completion.completionTokens;
          this.limiter.settleTokens(estimatedTokens, completion.promptTokens + completion.completionTokens);
        } else c.estimatedTokenRequests++;
        return { kind: 'ok', completion };
      }
      // Error statuses: read (a little of) the body for the message, then decide.
      const detail = await readBodyText(response, 4096).then(
        (t) => t.slice(0, 200),
        () => '',
      );
      const message = `chat completions endpoint answered HTTP ${status}${detail.length > 0 ? `: ${detail}` : ''}`;
      if (status === 429) {
        c.responses429++;
        return {
          kind: 'retry',
          error: new LlmEndpointError(message, { status, retryable: true, attempts }),
          retryAfterMs: retryAfterMs(response.headers, Date.now()),
        };
      }
      if (status >= 500 || status === 408) {
        c.responses5xx += status >= 500 ? 1 : 0;
        return {
          kind: 'retry',
          error: new LlmEndpointError(message, { status, retryable: true, attempts }),
          retryAfterMs: status === 503 ? retryAfterMs(response.headers, Date.now()) : undefined,
        };
      }
      c.otherErrorResponses++;
      throw new LlmEndpointError(message, { status, retryable: false, attempts });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCallAbort);
    }
  }

  /** A fetch (or body read) that threw: the caller's abort, our timeout, or a connection error. */
  private failedFetch(
    error: unknown,
    callerSignal: AbortSignal | undefined,
    timeoutSignal: AbortSignal,
    deadline: number | undefined,
    attempts: number,
  ): AttemptOutcome {
    const c = this.counters;
    if (callerSignal?.aborted) {
      c.cancelledAttempts++;
      throw new AbortedError('the operation was aborted', { cause: callerSignal.reason });
    }
    if (timeoutSignal.aborted) {
      c.attemptTimeouts++;
      if (deadline !== undefined && this.settings.clock() >= deadline - 1)
        throw new DeadlineExceededError('the deadline passed while waiting for the endpoint');
      return {
        kind: 'retry',
        error: new LlmEndpointError(`chat completions request timed out after ${this.settings.requestTimeoutMs} ms`, {
          retryable: true,
          attempts,
        }),
        retryAfterMs: undefined,
      };
    }
    c.connectionErrors++;
    return {
      kind: 'retry',
      error: new LlmEndpointError(
        `chat completions endpoint unreachable: ${describeCause(error)}`,
        { retryable: true, attempts },
        { cause: error },
      ),
      retryAfterMs: undefined,
    };
  }
}
