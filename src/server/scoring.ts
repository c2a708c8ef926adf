/**
 * One scoring call of a request, shared by every protocol: model lookup, admission (the in-flight
 * pair bound), the request's deadline (arrival + budget − response margin), cancellation when the
 * client goes away, the gate call, and the per-pair metrics. Protocol modules only map their
 * request to (query, passages, options) and the GateResult back to their response.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
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
import type { ServerConfig } from './config.js';
import type { LagTracker } from './lag.js';
import { ApiError } from './errors.js';
import type { ServerMetrics } from './metrics.js';
import { RELEVANCE_SIGNALS, type DegradeLabel, type ModelRegistry, type ServedModel } from './registry.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Date.now() when the request arrived (before the body was read): deadlines count from here. */
    arrivalMs: number;
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
}

/**
 * The deadline the gate gets: arrival + budget − (response margin + recent event-loop lag, capped
 * at a quarter of the budget), so that the answer is written before the caller's deadline even
 * when timers run late.
 */
export function gateDeadline(ctx: ServerContext, request: FastifyRequest, budgetMs: number): number {
  const margin = ctx.config.responseMarginMs + Math.min(budgetMs / 4, ctx.lag.peakMs);
  return request.arrivalMs + budgetMs - margin;
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

export interface ScoreOutcome {
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
  const ticket = model.admission.tryAdmit(k);
  if (ticket === undefined) {
    ctx.metrics.rejected(call.endpoint, model.name, 'overloaded', k);
    throw new ApiError(
      'overloaded',
      `overloaded: model ${model.name} has ${model.admission.pairsInFlight} pairs in flight (bound ${model.admission.maxPairs}); retry later`,
      { retryAfterSec: model.admission.retryAfterSec(k) },
    );
  }
  const abort = abortOnClose(reply);
  const deadline = gateDeadline(ctx, request, budgetMs);
  const gate = call.rerank ? model.rerankGate : model.gate;
  let result: GateResult;
  try {
    result = await gate.filter(call.query, call.passages, callOptions(deadline, abort.signal, call));
  } catch (error) {
    throw toApiError(error);
  } finally {
    ticket.release();
    abort.dispose();
  }
  const degraded = degradeCounts(model, call.passages);
  const byReason = new Map<string, number>();
  for (const label of degraded.values()) byReason.set(label, (byReason.get(label) ?? 0) + 1);
  ctx.metrics.observeResult(model.name, result, byReason, model.cacheEnabled);
  return { model, result, budgetMs, degraded };
}

/** Logs the query text only when the operator opted in (`logPassages`); never document text. */
export function logQuery(ctx: ServerContext, request: FastifyRequest, model: string, query: string, k: number): void {
  if (ctx.config.logPassages) request.log.debug({ model, documents: k, query: query.slice(0, 500) }, 'scoring');
}

/** Maps a library error thrown by a gate call onto the API's error kinds. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof TokenizationError) return new ApiError('tokenizer', error.message);
  if (error instanceof OverloadedError) return new ApiError('overloaded', error.message, { retryAfterSec: 1 });
  if (error instanceof InvalidArgumentError) return new ApiError('unprocessable', error.message);
  return new ApiError('internal', 'internal error while scoring', { cause: error });
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
 * deadline cut off make it an overload answer (retry later), pairs the scorer failed a backend
 * error — never a made-up score.
 */
export function rankAll(outcome: ScoreOutcome): RankedScore[] {
  const { result, model } = outcome;
  const items = [...result.included, ...result.conflicting, ...result.excluded];
  const out: RankedScore[] = new Array(items.length);
  let timedOut = 0;
  let failed = 0;
  // One scale for the whole answer: the ranking signal when every document has it (src/gate/order.ts).
  const byRanking = items.length > 0 && items.every((item) => rankingOf(item) !== undefined);
  for (const item of items) {
    const relevance = item.relevance;
    if (relevance === null || item.reason !== undefined) {
      if (item.reason === 'timeout' || item.reason === 'aborted') timedOut++;
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
    throw new ApiError('backend', `scoring failed for ${failed} of ${items.length} documents (model ${model.name})`);
  if (timedOut > 0)
    throw new ApiError(
      'overloaded',
      `${timedOut} of ${items.length} documents could not be scored within the ${outcome.budgetMs} ms budget; retry later or raise the budget`,
      { retryAfterSec: model.admission.retryAfterSec(items.length) },
    );
  out.sort((a, b) => b.score - a.score || a.index - b.index);
  return out;
}
