/**
 * One scoring call of a request, shared by every protocol: model lookup, admission (the in-flight
 * pair bound and the model's predicted completion against the time the request has left), the
 * request's deadline (arrival + budget − response margin), cancellation when the client goes away,
 * the gate call, the per-pair metrics, and the mapping of every deadline-shaped outcome (timeout,
 * abort, shed, pairs the scorer answered with nothing in time) onto the overload answer (429).
 * Protocol modules only map their request to (query, passages, options) and the GateResult back
 * to their response.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AbortedError,
  DeadlineExceededError,
  DisposedError,
  InvalidArgumentError,
  OverloadedError,
  TokenizationError,
  type FilterOptions,
  type GatePolicy,
  type GateItem,
  type GateResult,
  type Passage,
} from '../index.js';
import { rankingOf } from '../gate/order.js';
import { RANKING } from '../signals.js';
import type { AdmissionTicket, ServerAdmission } from './admission.js';
import type { ServerConfig } from './config/index.js';
import type { ServerDecisions } from './decisions.js';
import type { ShadowRunner } from './shadow.js';
import type { LagTracker } from './lag.js';
import { ApiError } from './errors.js';
import type { ServerMetrics } from './metrics.js';
import { RELEVANCE_SIGNALS, type DegradeLabel, type ModelRegistry, type ServedModel } from './registry.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Date.now() when the request arrived: when its bytes were first handled, less the time they
     * waited in the same event-loop turn, or the client's `x-request-start` when earlier. Deadlines
     * count from here.
     */
    arrivalMs: number;
    /** Estimated wait before that the server could not see (admission counts it in the request's age). */
    unseenMs: number;
  }
}

export interface Lifecycle {
  /** True once the start-up warm-up traffic has run: readiness waits for it. */
  warm: boolean;
  /**
   * True once shutdown began: readiness (and TEI /health) answer 503 and responses close their
   * connection; requests that still arrive are served, the closed listener refuses new connections.
   */
  draining: boolean;
}

export interface ServerContext {
  readonly config: ServerConfig;
  readonly registry: ModelRegistry;
  readonly metrics: ServerMetrics;
  readonly lifecycle: Lifecycle;
  readonly lag: LagTracker;
  readonly admission: ServerAdmission;
  /** The decision log (and the inspector's window); undefined when off. */
  readonly decisions?: ServerDecisions;
  /** Shadow models (config `shadows`); undefined when none. */
  readonly shadows?: ShadowRunner;
}

/** How long a request has waited so far, ms: since its arrival, plus the estimated unseen wait. */
export function requestAge(request: FastifyRequest): number {
  return Math.max(0, Date.now() - request.arrivalMs) + request.unseenMs;
}

/**
 * The deadline the gate gets: arrival + budget − (response margin + recent event-loop lag, capped
 * at a quarter of the budget), so that the answer is written before the caller's deadline even
 * when timers run late.
 */
export function gateDeadline(ctx: ServerContext, request: FastifyRequest, budgetMs: number): number {
  return request.arrivalMs + budgetMs - answerMargin(ctx.config.responseMarginMs, ctx.lag, budgetMs);
}

/** The time kept back from a budget for writing the answer: the response margin plus recent lag (≤ budget / 4). */
export function answerMargin(responseMarginMs: number, lag: LagTracker, budgetMs: number): number {
  return responseMarginMs + Math.min(budgetMs / 4, lag.peakMs);
}

/** The budget header: milliseconds the caller waits at most (also accepted on the rerank protocols). */
export const BUDGET_HEADER = 'x-budget-ms';

export interface ScoreCall {
  readonly endpoint: string;
  readonly modelName: string | undefined | null;
  readonly query: string;
  readonly passages: readonly Passage[];
  /** Rerank protocols: every document scored, no early stopping. */
  readonly rerank: boolean;
  readonly budgetMs?: number;
  readonly policy?: GatePolicy;
  readonly queryClass?: string;
}

export interface ScoreOutcome extends DeadlineContext {
  readonly model: ServedModel;
  readonly result: GateResult;
  readonly budgetMs: number;
  /** Degrade label per passage index (router models). */
  readonly degraded: ReadonlyMap<number, DegradeLabel>;
}

/** Resolves a model name (undefined/null/'' = the default) or throws model_not_found. */
export function resolveModel(ctx: ServerContext, name: string | undefined | null): ServedModel {
  const wanted = name === undefined || name === null || name === '' ? ctx.registry.defaultModel : name;
  if (!ctx.registry.has(wanted)) {
    throw new ApiError(
      'model_not_found',
      `model ${JSON.stringify(wanted.length > 128 ? `${wanted.slice(0, 128)}…` : wanted)} is not served here; available: ${ctx.registry.names.join(', ')}`,
    );
  }
  const model = ctx.registry.get(wanted);
  if (model === undefined) {
    const state = ctx.registry.state;
    throw new ApiError(
      'unavailable',
      state === 'failed' ? 'the model failed to load' : 'the models are still loading',
      { retryAfterSec: 1 },
    );
  }
  return model;
}

/** The budget of a request: the body's `budget_ms`, else the header, else the model's default. */
export function resolveBudget(
  ctx: ServerContext,
  request: FastifyRequest,
  model: ServedModel,
  bodyBudget: number | undefined | null,
): number {
  let budget: number | undefined;
  if (bodyBudget !== undefined && bodyBudget !== null) budget = bodyBudget;
  else {
    const header = request.headers[BUDGET_HEADER];
    if (header !== undefined) {
      const raw = Array.isArray(header) ? header[0] : header;
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n))
        throw new ApiError('invalid_request', `${BUDGET_HEADER} must be a number of milliseconds`);
      budget = n;
    }
  }
  if (budget === undefined) return model.budgetMs;
  if (!(budget > 0) || budget > ctx.config.limits.maxBudgetMs)
    throw new ApiError(
      'invalid_request',
      `budget must be a number of milliseconds in (0, ${ctx.config.limits.maxBudgetMs}], got ${String(budget)}`,
    );
  return budget;
}

function degradeCounts(model: ServedModel, passages: readonly Passage[]): Map<number, DegradeLabel> {
  const out = new Map<number, DegradeLabel>();
  const labels = model.degraded;
  if (labels === undefined) return out;
  for (let i = 0; i < passages.length; i++) {
    const label = labels.get(passages[i]);
    if (label !== undefined) out.set(i, label);
  }
  return out;
}

/** An abort signal that fires when the client goes away before the response is written. */
export function abortOnClose(reply: FastifyReply): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onClose = (): void => {
    if (!reply.raw.writableEnded) controller.abort();
  };
  reply.raw.once('close', onClose);
  return { signal: controller.signal, dispose: () => reply.raw.removeListener('close', onClose) };
}

/** The gate call's options: the request's deadline and cancellation, plus its policy and query class when set. */
export function callOptions(
  deadline: number,
  signal: AbortSignal,
  call: { readonly policy?: GatePolicy | undefined; readonly queryClass?: string | undefined },
): FilterOptions {
  return {
    deadline,
    signal,
    ...(call.policy === undefined ? {} : { policy: call.policy }),
    ...(call.queryClass === undefined ? {} : { queryClass: call.queryClass }),
  };
}

/** Runs the gate for one request under admission control and the request's deadline. */
export async function score(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  call: ScoreCall,
  bodyBudget?: number | null,
): Promise<ScoreOutcome> {
  const model = resolveModel(ctx, call.modelName);
  const budgetMs = call.budgetMs ?? resolveBudget(ctx, request, model, bodyBudget);
  const k = call.passages.length;
  logQuery(ctx, request, model.name, call.query, k);
  const ticket = admitCall(ctx, request, call.endpoint, model, k, budgetMs);
  const abort = abortOnClose(reply);
  const deadline = gateDeadline(ctx, request, budgetMs);
  const gate = call.rerank ? model.rerankGate : model.gate;
  let result: GateResult;
  try {
    result = await gate.filter(call.query, call.passages, callOptions(deadline, abort.signal, call));
  } catch (error) {
    ticket.release();
    throw toApiError(error);
  } finally {
    abort.dispose();
  }
  const endedAtMs = Date.now();
  releaseWith(ticket, result);
  const degraded = degradeCounts(model, call.passages);
  const byReason = new Map<string, number>();
  for (const label of degraded.values()) byReason.set(label, (byReason.get(label) ?? 0) + 1);
  ctx.metrics.observeResult(model.name, result, byReason, model.cacheEnabled);
  ctx.decisions?.record({
    requestId: String(request.id),
    endpoint: call.endpoint,
    model,
    rerank: call.rerank,
    result,
    override: call.policy,
    serverMs: endedAtMs - request.arrivalMs,
  });
  ctx.shadows?.offer({
    requestId: String(request.id),
    model,
    rerank: call.rerank,
    query: call.query,
    passages: call.passages,
    override: call.policy,
    queryClass: call.queryClass,
  });
  return { model, result, budgetMs, degraded, deadlineMs: deadline, endedAtMs };
}

/**
 * Admits a scoring call of `k` pairs on `model`, or throws the overload answer (429 with
 * Retry-After) at once: the model's pair bound is full, or its predicted completion leaves the
 * request no time within its budget (src/server/admission.ts).
 */
export function admitCall(
  ctx: ServerContext,
  request: FastifyRequest,
  endpoint: string,
  model: ServedModel,
  k: number,
  budgetMs: number,
): AdmissionTicket {
  const outcome = model.admission.admit(k, {
    ageMs: requestAge(request),
    budgetMs,
    marginMs: answerMargin(ctx.config.responseMarginMs, ctx.lag, budgetMs),
  });
  if ('release' in outcome) return outcome;
  ctx.metrics.rejected(endpoint, model.name, outcome.reason === 'pairs' ? 'overloaded' : 'predicted', k);
  throw new ApiError('overloaded', `overloaded: model ${model.name}: ${outcome.message}; retry later`, {
    retryAfterSec: outcome.retryAfterSec,
  });
}

/** Releases an admission ticket with the call's outcome: a completion sample when every pair was scored. */
export function releaseWith(ticket: AdmissionTicket, result: GateResult): void {
  const stats = result.stats;
  if (stats.unscored > 0) ticket.release();
  else ticket.release(Math.max(0, stats.scored - stats.cacheHits));
}

/** Logs the query text only when the operator opted in (`logPassages`); never document text. */
export function logQuery(ctx: ServerContext, request: FastifyRequest, model: string, query: string, k: number): void {
  if (ctx.config.logPassages) request.log.debug({ model, documents: k, query: query.slice(0, 500) }, 'scoring');
}

/**
 * Maps a library error thrown by a gate call onto the API's error kinds. Deadline-shaped ones (the
 * deadline passed, the call was aborted, a queue refused it) are the overload answer; a closed
 * model (shutdown) is `unavailable`; anything else is a real internal failure.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof TokenizationError) return new ApiError('tokenizer', error.message);
  if (error instanceof OverloadedError) return new ApiError('overloaded', error.message, { retryAfterSec: 1 });
  if (error instanceof DeadlineExceededError || (error instanceof Error && error.name === 'TimeoutError'))
    return new ApiError('overloaded', 'the budget ran out before the documents could be scored; retry later', {
      retryAfterSec: 1,
    });
  if (error instanceof AbortedError || (error instanceof Error && error.name === 'AbortError'))
    return new ApiError('overloaded', 'the request was cancelled before it could be scored', { retryAfterSec: 1 });
  if (error instanceof DisposedError)
    return new ApiError('unavailable', 'the model is shutting down', { retryAfterSec: 1, cause: error });
  if (error instanceof InvalidArgumentError) return new ApiError('unprocessable', error.message);
  return new ApiError('internal', 'internal error while scoring', { cause: error });
}

/**
 * Whether an unscored item was cut short by time (or the client going away), not failed: `timeout`
 * and `aborted`, and `scorer-null` (the scorer answered nothing for the pair) when the scorer
 * answers null only for pairs the deadline cut (the fast path's slices not started in time, a
 * router's pairs no tier answered in time) or the call came back in the last quarter of its budget.
 */
export function cutByDeadline(item: GateItem, outcome: DeadlineContext): boolean {
  const reason = item.reason;
  if (reason === 'timeout' || reason === 'aborted') return true;
  if (reason !== 'scorer-null') return false;
  const type = outcome.model.description.type;
  if (type === 'fast-path' || type === 'router') return true;
  return outcome.endedAtMs >= outcome.deadlineMs - outcome.budgetMs / 4;
}

/** What cutByDeadline needs of a call: its model, budget, deadline and when it came back (Date.now()). */
export interface DeadlineContext {
  readonly model: ServedModel;
  readonly budgetMs: number;
  readonly deadlineMs: number;
  readonly endedAtMs: number;
}

/** A queue that refused the call (OverloadedError) shows as scorer-error pairs with its message. */
function shedByQueue(result: GateResult): boolean {
  return result.errors.length > 0 && result.errors.every((e) => e.includes('OverloadedError'));
}

export interface RankedScore {
  readonly index: number;
  /**
   * The gate's score of the document (GateItem.score): a calibrated probability of relevance that
   * sorts as the documents are ordered (the `ranking` signal when the scorer gave it for every
   * document, else relevance); the order value itself for a model without a score calibration.
   */
  readonly score: number;
  /** The tier's raw value (logit / margin) of that signal. */
  readonly raw: number;
}

function logitOf(p: number): number {
  const c = Math.min(1 - 1e-15, Math.max(1e-15, p));
  return Math.log(c / (1 - c));
}

function rawOf(item: GateItem, relevance: number): number {
  const raw = item.raw;
  if (raw !== undefined) for (const name of RELEVANCE_SIGNALS) if (typeof raw[name] === 'number') return raw[name];
  // A scorer that reports probabilities only: its logit.
  return logitOf(relevance);
}

/**
 * Every document's score, best first (ties: input order). The order (and the score reported) is
 * the gate's returned order: the `ranking` signal when every document has one, else relevance
 * (docs/server.md "Scores and order"). A rerank answer needs every document scored: pairs the
 * deadline cut off (cutByDeadline) or a full queue refused make it an overload answer (retry
 * later), pairs the scorer failed a backend error — never a made-up score.
 */
export function rankAll(outcome: ScoreOutcome): RankedScore[] {
  const { result, model } = outcome;
  const items = [...result.included, ...result.conflicting, ...result.excluded];
  const out: RankedScore[] = new Array(items.length);
  let timedOut = 0;
  let failed = 0;
  const queueShed = shedByQueue(result);
  // One scale for the whole answer: the ranking signal when every document has it (src/gate/order.ts).
  const byRanking = items.length > 0 && items.every((item) => rankingOf(item) !== undefined);
  for (const item of items) {
    const relevance = item.relevance;
    if (relevance === null || item.reason !== undefined) {
      if (cutByDeadline(item, outcome) || (queueShed && item.reason === 'scorer-error')) timedOut++;
      else failed++;
      continue;
    }
    // The gate's score: a calibrated probability that sorts as the order does (GateItem.score).
    const value = item.score ?? relevance;
    if (byRanking) {
      const ranking = rankingOf(item) as number;
      const raw = item.raw?.[RANKING];
      out[item.rank] = { index: item.rank, score: value, raw: typeof raw === 'number' ? raw : logitOf(ranking) };
    } else out[item.rank] = { index: item.rank, score: value, raw: rawOf(item, relevance) };
  }
  if (failed > 0)
    throw new ApiError(
      'backend',
      `scoring failed for ${failed} of ${items.length} documents (model ${model.name})`,
      result.errors.length === 0 ? {} : { cause: new Error(result.errors.join('; ')) },
    );
  if (timedOut > 0)
    throw new ApiError(
      'overloaded',
      `${timedOut} of ${items.length} documents could not be scored within the ${outcome.budgetMs} ms budget; retry later or raise the budget`,
      { retryAfterSec: model.admission.retryAfterSec(items.length) },
    );
  out.sort((a, b) => b.score - a.score || a.index - b.index);
  return out;
}
