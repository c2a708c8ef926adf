/**
 * createLlmJudge: a Scorer that asks an OpenAI-compatible chat-completions endpoint yes/no
 * questions about each (query, passage) pair and reports P(yes) per question as that question's
 * signal, read from the answer tokens' logprobs (logprobs.ts).
 *
 * Life of a call:
 *   1. every (pair, question) answer is looked up in the judge's answer cache, then among the
 *      answers other calls are asking for right now (shared, not asked twice);
 *   2. the rest are planned into requests: one question or all questions of a pair per request,
 *      one or several candidates per request (options questionsPerRequest, candidatesPerRequest);
 *   3. requests run through the bounded pool, the rate limiter and the retry loop (http-client.ts),
 *      all bounded by the call's deadline and AbortSignal;
 *   4. at `deadline − returnMarginMs` the judge stops waiting, cancels what is still running and
 *      answers with what it has. A pair with any question unanswered is null (the gate fails it
 *      closed); if no pair at all could be answered, the call rejects with the reason
 *      (DeadlineExceededError → 'timeout', AbortedError → 'aborted', an endpoint/format error →
 *      'scorer-error' with its message in the gate result's errors). Partial records are never
 *      returned: a score cache would store them and the missing question would never be asked.
 */
import { setMaxListeners } from 'node:events';
import { AbortedError, DeadlineExceededError, InvalidArgumentError } from '../../errors.js';
import type { DetailedPairScore, Passage, Scorer, ScoreOptions, ScorerPairResult } from '../../types.js';
import { AnswerCache, answerKey } from './answer-cache.js';
import { LlmResponseFormatError } from './errors.js';
import { ChatClient, type HttpCounters, newHttpCounters } from './http-client.js';
import { LatencyTracker } from './latency.js';
import { type JudgeAnswer, readAnswers, readTextAnswers } from './logprobs.js';
import { type LlmJudgeOptions, type ResolvedJudgeOptions, resolveOptions } from './options.js';
import { CallPool } from './pool.js';
import {
  buildMessages,
  estimatePromptTokens,
  type PreparedPassage,
  PROMPT_VERSION,
  prepareQuery,
  preparePassage,
} from './prompt.js';
import type { ChatCompletionRequestBody } from './protocol.js';
import { type JudgeQuestion, questionFingerprint } from './questions.js';
import { RateLimiter } from './rate-limiter.js';
import { abortError } from './timing.js';
import { checkPassages } from '../../scoring/passages.js';
import { ABORTED, raceLimits, TIMED_OUT } from '../../scoring/race-limits.js';

/** Counters since creation (or resetStats). Per-pair figures divide by pairs that needed the endpoint. */
export interface LlmJudgeStats extends Readonly<HttpCounters> {
  readonly calls: number;
  /** Pairs asked for. */
  readonly pairs: number;
  /** Pairs returned with every signal. */
  readonly pairsAnswered: number;
  /** Pairs returned null (some question unanswered: failed, timed out, unreadable). */
  readonly pairsFailed: number;
  /** Pairs that needed at least one fresh answer from the endpoint. */
  readonly pairsAsked: number;
  /** Chat-completions requests started (each may take several HTTP attempts). */
  readonly requests: number;
  readonly requestsFailed: number;
  /** Question answers read from responses. */
  readonly answers: number;
  readonly answersFromCache: number;
  /** Answers taken from a concurrent call asking the same thing. */
  readonly answersShared: number;
  /** Answers without logprobs (0/1 from the text, or from the chosen token only). */
  readonly coarseAnswers: number;
  /** Expected answers the response did not contain in a readable form. */
  readonly unreadableAnswers: number;
  /** requests / pairsAsked. */
  readonly requestsPerPair: number;
  /** (promptTokens + completionTokens) / pairsAsked, over requests that reported usage. */
  readonly tokensPerPair: number;
  readonly inFlight: number;
  /** Highest number of HTTP calls in flight at once. */
  readonly maxInFlight: number;
  readonly queued: number;
  readonly concurrency: number;
  readonly rateLimitWaitMs: number;
  readonly rateLimitRefusals: number;
  /** EWMA of successful request latency (the prior until measured), fastest recent, samples. */
  readonly latencyMs: { readonly expected: number; readonly fastestRecent: number; readonly samples: number };
  readonly cachedAnswers: number;
}

export interface LlmJudge extends Scorer {
  readonly id: string;
  readonly model: string;
  readonly questions: readonly JudgeQuestion[];
  /** Signal names, in question order. */
  readonly signals: readonly string[];
  readonly questionSetVersion: string;
  readonly promptVersion: number;
  /** Tier label on results. */
  readonly tierName: string;
  /** Passage metadata keys the judge reads (a score cache must key on them too; see docs). */
  readonly metadataKeys: readonly string[];
  readonly concurrency: number;
  /** Requests per pair as planned (no cache): questions per pair / questions per request / candidates per request. */
  readonly requestsPerPair: number;
  score(query: string, passages: readonly Passage[], options?: ScoreOptions): Promise<ReadonlyArray<ScorerPairResult>>;
  stats(): LlmJudgeStats;
  resetStats(): void;
  /** Predicted ms until `pairs` new pairs submitted now are answered (pool backlog, latency, rate limits). */
  estimateMs(pairs: number): number;
  /** Pairs of calls in progress (every caller). */
  pendingPairs(): number;
  /** Forgets the judge's cached answers. */
  clearCache(): void;
}

interface Unit {
  readonly pairs: readonly number[];
  readonly questions: readonly number[];
}

interface CallCounters {
  calls: number;
  pairs: number;
  pairsAnswered: number;
  pairsFailed: number;
  pairsAsked: number;
  requests: number;
  requestsFailed: number;
  answers: number;
  answersFromCache: number;
  answersShared: number;
  coarseAnswers: number;
  unreadableAnswers: number;
}

function newCallCounters(): CallCounters {
  return {
    calls: 0,
    pairs: 0,
    pairsAnswered: 0,
    pairsFailed: 0,
    pairsAsked: 0,
    requests: 0,
    requestsFailed: 0,
    answers: 0,
    answersFromCache: 0,
    answersShared: 0,
    coarseAnswers: 0,
    unreadableAnswers: 0,
  };
}

type WaitOutcome = 'done' | 'deadline' | 'aborted';

/** Waits for `work` (its failure counts as done) until `answerBy` or until `signal` fires: the shared race. */
async function waitBounded(
  work: Promise<unknown>,
  signal: AbortSignal | undefined,
  answerBy: number | undefined,
  clock: () => number,
): Promise<WaitOutcome> {
  if (signal?.aborted) return 'aborted';
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  const outcome = await raceLimits(settled, signal, answerBy, clock);
  return outcome === ABORTED ? 'aborted' : outcome === TIMED_OUT ? 'deadline' : 'done';
}

/** One call's working state. */
interface CallState {
  readonly queryJson: string;
  readonly prepared: readonly PreparedPassage[];
  /** answers[pair * Q + question] */
  readonly answers: Array<JudgeAnswer | undefined>;
  readonly keys: readonly string[];
  readonly signal: AbortSignal;
  readonly answerBy: number | undefined;
  readonly errors: unknown[];
  unreadableSample: string | undefined;
}

class LlmJudgeImpl implements LlmJudge {
  readonly id: string;
  readonly model: string;
  readonly questions: readonly JudgeQuestion[];
  readonly signals: readonly string[];
  readonly questionSetVersion: string;
  readonly promptVersion = PROMPT_VERSION;
  readonly tierName: string;
  readonly metadataKeys: readonly string[];
  readonly concurrency: number;
  readonly requestsPerPair: number;
  private readonly o: ResolvedJudgeOptions;
  private readonly pool: CallPool;
  private readonly limiter: RateLimiter;
  private readonly latency: LatencyTracker;
  private readonly client: ChatClient;
  private readonly cache: AnswerCache;
  private readonly fingerprints: readonly string[];
  private http: HttpCounters = newHttpCounters();
  private counters: CallCounters = newCallCounters();
  private pending = 0;
  private tokensPerRequest = 0;

  constructor(options: LlmJudgeOptions) {
    const o = resolveOptions(options);
    this.o = o;
    this.id = o.id;
    this.model = o.model;
    this.questions = o.questions;
    this.signals = Object.freeze(o.questions.map((q) => q.name));
    this.questionSetVersion = o.questionSetVersion;
    this.tierName = o.tierName;
    this.metadataKeys = o.limits.metadataKeys;
    this.concurrency = o.concurrency;
    this.requestsPerPair = (o.questionsPerRequest === 'all' ? 1 : o.questions.length) / o.candidatesPerRequest;
    this.fingerprints = o.questions.map(questionFingerprint);
    this.pool = new CallPool(o.concurrency, o.maxQueuedRequests, o.clock);
    this.limiter = new RateLimiter({
      requestsPerMinute: o.requestsPerMinute,
      tokensPerMinute: o.tokensPerMinute,
      clock: o.clock,
    });
    this.latency = new LatencyTracker(o.expectedLatencyMs);
    this.client = this.newClient();
    // In-flight dedupe is bounded by what can be outstanding: queue + pool, a few answers each.
    this.cache = new AnswerCache(o.answerCacheEntries, Math.max(1024, (o.maxQueuedRequests + o.concurrency) * 4));
  }

  private newClient(): ChatClient {
    const o = this.o;
    return new ChatClient(
      {
        url: o.url,
        headers: o.headers,
        maxRetries: o.maxRetries,
        retryBaseMs: o.retryBaseMs,
        retryMaxMs: o.retryMaxMs,
        requestTimeoutMs: o.requestTimeoutMs,
        maxResponseBytes: o.maxResponseBytes,
        admissionHeadroom: o.admissionHeadroom,
        clock: o.clock,
        random: o.random,
      },
      this.pool,
      this.limiter,
      this.http,
      this.latency,
    );
  }

  async score(
    query: string,
    passages: readonly Passage[],
    options: ScoreOptions = {},
  ): Promise<ReadonlyArray<ScorerPairResult>> {
    if (typeof query !== 'string') throw new InvalidArgumentError('query must be a string');
    checkPassages(passages);
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options must be an object');
    const { signal, deadline } = options;
    if (deadline !== undefined && (typeof deadline !== 'number' || Number.isNaN(deadline)))
      throw new InvalidArgumentError('deadline must be a number (ms on the Date.now() clock)');
    if (signal?.aborted) throw abortError(signal);
    const n = passages.length;
    if (n === 0) return [];
    if (deadline !== undefined && this.o.clock() >= deadline)
      throw new DeadlineExceededError('the deadline passed before the LLM judge was called');
    this.counters.calls++;
    this.counters.pairs += n;
    this.pending += n;
    try {
      return await this.scoreInner(query, passages, signal, deadline);
    } finally {
      this.pending -= n;
    }
  }

  private async scoreInner(
    query: string,
    passages: readonly Passage[],
    callerSignal: AbortSignal | undefined,
    deadline: number | undefined,
  ): Promise<ReadonlyArray<ScorerPairResult>> {
    // The call's own signal: aborted at the deadline, or when the caller's signal fires. Every
    // request of the call listens to it (and removes its listener when done): lift the default
    // limit of 10 listeners, which a call of more than 10 requests exceeds by design.
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    const onCallerAbort = (): void => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      return await this.runCall(query, passages, callerSignal, controller, deadline);
    } finally {
      callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  }

  private async runCall(
    query: string,
    passages: readonly Passage[],
    callerSignal: AbortSignal | undefined,
    controller: AbortController,
    deadline: number | undefined,
  ): Promise<ReadonlyArray<ScorerPairResult>> {
    const o = this.o;
    const c = this.counters;
    const n = passages.length;
    const Q = this.questions.length;
    const signal = controller.signal;
    const queryJson = prepareQuery(query, o.limits);
    const prepared = passages.map((p) => preparePassage(p, o.limits));
    const keys: string[] = new Array(n * Q);
    for (let i = 0; i < n; i++)
      for (let q = 0; q < Q; q++)
        keys[i * Q + q] = answerKey(this.id, this.fingerprints[q], queryJson, prepared[i].contentKey);
    const answerBy = deadline === undefined ? undefined : deadline - o.returnMarginMs;
    const state: CallState = {
      queryJson,
      prepared,
      answers: new Array(n * Q).fill(undefined),
      keys,
      signal,
      answerBy,
      errors: [],
      unreadableSample: undefined,
    };

    let timedOut = false;
    const asked = new Set<number>();
    // Two rounds: the first asks what nobody is asking; the second re-asks answers another call
    // was asking for when that call failed or was cancelled (its failure must not fail this call).
    let slots: number[] = Array.from({ length: n * Q }, (_, s) => s);
    for (let round = 0; round < 2 && slots.length > 0; round++) {
      const work = this.startRound(state, slots, round === 0, asked);
      const outcome = await waitBounded(work.done, callerSignal, answerBy, o.clock);
      if (outcome === 'aborted') {
        controller.abort(callerSignal?.reason);
        throw new AbortedError('the operation was aborted', { cause: callerSignal?.reason });
      }
      if (outcome === 'deadline') {
        timedOut = true;
        controller.abort(new DeadlineExceededError('LLM judge deadline'));
        break;
      }
      slots = work.retry;
    }
    c.pairsAsked += asked.size;

    const results: Array<DetailedPairScore | null> = new Array(n);
    let answered = 0;
    for (let i = 0; i < n; i++) {
      const probabilities: Record<string, number> = {};
      const raw: Record<string, number> = {};
      let complete = true;
      for (let q = 0; q < Q; q++) {
        const a = state.answers[i * Q + q];
        if (a === undefined) {
          complete = false;
          break;
        }
        const name = this.questions[q].name;
        probabilities[name] = a.probability;
        if (a.logit !== undefined) raw[name] = a.logit;
        if (a.coarse) raw[`${name}.coarse`] = 1;
      }
      if (complete) {
        results[i] = { probabilities, raw, tier: o.tierName };
        answered++;
      } else results[i] = null;
    }
    c.pairsAnswered += answered;
    c.pairsFailed += n - answered;
    if (answered === 0) throw this.callFailure(state, timedOut, n);
    return results;
  }

  /** Why a call produced nothing: the deadline, the endpoint's error, or unreadable answers. */
  private callFailure(state: CallState, timedOut: boolean, n: number): Error {
    const first = state.errors.find((e) => !(e instanceof DeadlineExceededError) && !(e instanceof AbortedError));
    if (timedOut || (first === undefined && state.errors.length > 0)) {
      const detail = first instanceof Error ? ` (last endpoint error: ${first.message})` : '';
      return new DeadlineExceededError(`the deadline passed before the LLM judge answered any of ${n} pairs${detail}`);
    }
    if (first instanceof Error) return first;
    return new LlmResponseFormatError(
      `the model's answers could not be read as yes/no for any of ${n} pairs${
        state.unreadableSample === undefined
          ? ''
          : `; it answered ${JSON.stringify(state.unreadableSample.slice(0, 80))}`
      }`,
    );
  }

  /**
   * Fills what the caches have, plans requests for the rest and starts them. Returns a promise of
   * the round's end and (once it settled) the slots to re-ask in the next round.
   */
  private startRound(
    state: CallState,
    slots: readonly number[],
    shareable: boolean,
    asked: Set<number>,
  ): { done: Promise<void>; retry: number[] } {
    const c = this.counters;
    const Q = this.questions.length;
    const n = state.prepared.length;
    const missing: number[][] = Array.from({ length: n }, () => []);
    const shared: Array<Promise<void>> = [];
    const retry: number[] = [];
    const settle = new Map<number, (answer: JudgeAnswer | undefined) => void>();
    for (const slot of slots) {
      const key = state.keys[slot];
      const hit = this.cache.get(key);
      if (hit !== undefined) {
        state.answers[slot] = hit;
        c.answersFromCache++;
        continue;
      }
      const other = shareable ? this.cache.pending(key) : undefined;
      if (other !== undefined) {
        shared.push(
          other.then(
            (a) => {
              if (a === undefined) retry.push(slot);
              else {
                state.answers[slot] = a;
                c.answersShared++;
              }
            },
            () => {
              retry.push(slot);
            },
          ),
        );
        continue;
      }
      let resolve!: (answer: JudgeAnswer | undefined) => void;
      const promise = new Promise<JudgeAnswer | undefined>((r) => {
        resolve = r;
      });
      this.cache.track(key, promise);
      settle.set(slot, resolve);
      missing[Math.floor(slot / Q)].push(slot % Q);
    }
    const units = this.plan(missing);
    for (const u of units) for (const i of u.pairs) asked.add(i);
    const running = units.map((u) => this.runUnit(state, u, settle));
    const done = Promise.all([...running, ...shared]).then(() => undefined);
    return { done, retry };
  }

  /** Groups missing (pair, question) answers into requests. Ordered by rank, so early pairs finish first. */
  private plan(missing: readonly number[][]): Unit[] {
    const o = this.o;
    const units: Unit[] = [];
    const perRequest = o.candidatesPerRequest;
    if (o.questionsPerRequest === 'one') {
      const byQuestion = new Map<number, number[]>();
      for (let i = 0; i < missing.length; i++) {
        for (const q of missing[i]) {
          let list = byQuestion.get(q);
          if (list === undefined) {
            list = [];
            byQuestion.set(q, list);
          }
          list.push(i);
        }
      }
      for (const [q, pairs] of byQuestion)
        for (let s = 0; s < pairs.length; s += perRequest)
          units.push({ pairs: pairs.slice(s, s + perRequest), questions: [q] });
    } else {
      const bySet = new Map<string, { questions: number[]; pairs: number[] }>();
      for (let i = 0; i < missing.length; i++) {
        if (missing[i].length === 0) continue;
        const signature = missing[i].join(',');
        let group = bySet.get(signature);
        if (group === undefined) {
          group = { questions: missing[i], pairs: [] };
          bySet.set(signature, group);
        }
        group.pairs.push(i);
      }
      for (const group of bySet.values())
        for (let s = 0; s < group.pairs.length; s += perRequest)
          units.push({ pairs: group.pairs.slice(s, s + perRequest), questions: group.questions });
    }
    units.sort((a, b) => a.pairs[0] - b.pairs[0] || a.questions[0] - b.questions[0]);
    return units;
  }

  /** One request: prompt, call, read answers; every slot of the unit is settled whatever happens. */
  private async runUnit(
    state: CallState,
    unit: Unit,
    settle: Map<number, (answer: JudgeAnswer | undefined) => void>,
  ): Promise<void> {
    const o = this.o;
    const c = this.counters;
    const Q = this.questions.length;
    const slots: number[] = [];
    for (const i of unit.pairs) for (const q of unit.questions) slots.push(i * Q + q);
    const got: Array<JudgeAnswer | undefined> = new Array(slots.length).fill(undefined);
    try {
      const messages = buildMessages(
        state.queryJson,
        unit.pairs.map((i) => state.prepared[i]),
        unit.questions.map((q) => this.questions[q]),
        o.systemPrompt,
      );
      const count = slots.length;
      const maxTokens = count === 1 ? 1 : 2 * count + 1;
      const body: ChatCompletionRequestBody = {
        ...o.extraBody,
        model: o.model,
        messages,
        max_tokens: maxTokens,
        temperature: 0,
        n: 1,
        stream: false,
        logprobs: true,
        top_logprobs: o.topLogprobs,
        ...(o.seed === undefined ? {} : { seed: o.seed }),
      };
      const estimated = estimatePromptTokens(messages) + maxTokens;
      this.tokensPerRequest = this.tokensPerRequest === 0 ? estimated : 0.8 * this.tokensPerRequest + 0.2 * estimated;
      c.requests++;
      const completion = await this.client.complete(body, estimated, state.signal, state.answerBy);
      let read =
        completion.positions === undefined ? undefined : readAnswers(completion.positions, count, o.vocabulary);
      // logprobs present but nothing readable in them: the text is the last resort (coarse).
      if (read === undefined || read.every((a) => a === undefined))
        read = readTextAnswers(completion.content, count, o.vocabulary);
      for (let k = 0; k < count; k++) {
        const a = read[k];
        if (a === undefined) {
          c.unreadableAnswers++;
          state.unreadableSample ??= completion.content;
          continue;
        }
        got[k] = a;
        c.answers++;
        if (a.coarse) c.coarseAnswers++;
        state.answers[slots[k]] = a;
        this.cache.set(state.keys[slots[k]], a);
      }
    } catch (error) {
      c.requestsFailed++;
      state.errors.push(error);
    } finally {
      for (let k = 0; k < slots.length; k++) settle.get(slots[k])?.(got[k]);
    }
  }

  stats(): LlmJudgeStats {
    const c = this.counters;
    const h = this.http;
    const asked = c.pairsAsked;
    return {
      ...h,
      ...c,
      requestsPerPair: asked === 0 ? 0 : c.requests / asked,
      tokensPerPair: asked === 0 ? 0 : (h.promptTokens + h.completionTokens) / asked,
      inFlight: this.pool.active,
      maxInFlight: this.pool.maxActive,
      queued: this.pool.queued,
      concurrency: this.concurrency,
      rateLimitWaitMs: this.limiter.waitedMs,
      rateLimitRefusals: this.limiter.refused,
      latencyMs: {
        expected: this.latency.expectedMs(),
        fastestRecent: this.latency.floorMs(),
        samples: this.latency.samples,
      },
      cachedAnswers: this.cache.size,
    };
  }

  resetStats(): void {
    this.counters = newCallCounters();
    // The client holds the HTTP counters object: reset it in place.
    Object.assign(this.http, newHttpCounters());
    this.pool.maxActive = this.pool.active;
    this.limiter.waitedMs = 0;
    this.limiter.refused = 0;
  }

  estimateMs(pairs: number): number {
    if (!(pairs > 0)) return 0;
    const requests = Math.ceil(pairs * this.requestsPerPair);
    const ahead = this.pool.active + this.pool.queued;
    const latency = this.latency.expectedMs();
    const waves = Math.ceil((ahead + requests) / this.concurrency);
    const rate = this.limiter.delayFor(ahead + requests, this.tokensPerRequest);
    return Math.max(waves * latency, rate + latency);
  }

  pendingPairs(): number {
    return this.pending;
  }

  clearCache(): void {
    this.cache.clear();
  }
}

/**
 * An LLM judge for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp
 * server, Ollama, LiteLLM, ...). The result is a Scorer for createGate and a tier for createRouter
 * (see llmJudgeTier). See docs/llm-judge.md.
 */
export function createLlmJudge(options: LlmJudgeOptions): LlmJudge {
  return new LlmJudgeImpl(options);
}
