/**
 * The engine's own protocol: the full decision for each passage.
 *
 * - POST /v1/gate `{model?, query, passages: (string | {id?, text, title?})[], policy?, budget_ms?, query_class?}`
 *   → `{id, model, included, conflicting, excluded, stats, tier, timings, errors, degraded_pairs, budget_ms}`,
 *   every item `{index, id, route, rule, reason, relevance, signals, raw, tier, cached, degraded}`;
 * - POST /v1/gate/stream: the same call as NDJSON (default) or SSE (`Accept: text/event-stream`):
 *   an `item` event per included passage as soon as its inclusion is final (rank-order early
 *   stopping ends the call early), then one `result` event with everything above;
 * - GET /v1/models: the served models.
 *
 * `policy` takes the library's GatePolicy fields (camelCase, JSON-expressible ones) and is merged
 * over the model's policy for this call only. Errors: `{error: {type, message}, request_id}`.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KNOWN_POLICY_KEYS } from '../../gate/policy.js';
import type { GateItem, GatePolicy, GateResult, Passage } from '../../index.js';
import { ApiError } from '../errors.js';
import type { AdmissionTicket } from '../admission.js';
import {
  abortOnClose,
  admitCall,
  callOptions,
  cutByDeadline,
  type DeadlineContext,
  gateDeadline,
  logQuery,
  releaseWith,
  resolveBudget,
  resolveModel,
  toApiError,
  type ServerContext,
} from '../scoring.js';
import type { DegradeLabel, ServedModel } from '../registry.js';
import { checkCount, checkQuery, passageOf } from './documents.js';

/** GatePolicy options a call over HTTP may not set: `thresholdFn` (a function) and `operatingPoints`. */
const LIBRARY_ONLY_POLICY_KEYS: ReadonlySet<string> = new Set(['thresholdFn', 'operatingPoints']);

/** The per-call policy options over HTTP: the library's, less the library-only ones. */
const POLICY_KEYS: ReadonlySet<string> = new Set(
  [...KNOWN_POLICY_KEYS].filter((key) => !LIBRARY_ONLY_POLICY_KEYS.has(key)),
);

const BODY = {
  type: 'object',
  required: ['query', 'passages'],
  properties: {
    model: { type: ['string', 'null'] },
    query: { type: 'string' },
    passages: {
      type: 'array',
      items: {
        anyOf: [
          { type: 'string' },
          {
            type: 'object',
            required: ['text'],
            properties: { id: { type: 'string', minLength: 1 }, text: { type: 'string' }, title: { type: 'string' } },
          },
        ],
      },
    },
    policy: { type: ['object', 'null'] },
    budget_ms: { type: ['number', 'null'] },
    query_class: { type: ['string', 'null'] },
  },
} as const;

type GatePassage = string | { id?: string; text: string; title?: string };

interface GateBody {
  model?: string | null;
  query: string;
  passages: GatePassage[];
  policy?: Record<string, unknown> | null;
  budget_ms?: number | null;
  query_class?: string | null;
}

/** Rules from JSON can only be conditions (`{signal, op, value}`); functions do not travel. */
function parsePolicy(raw: Record<string, unknown> | null | undefined): GatePolicy | undefined {
  if (raw === undefined || raw === null) return undefined;
  for (const key of Object.keys(raw))
    if (!POLICY_KEYS.has(key))
      throw new ApiError(
        'unprocessable',
        `policy.${key} is not a policy option over HTTP (typo, or a function option?)`,
      );
  return raw as GatePolicy;
}

function buildPassages(ctx: ServerContext, passages: readonly GatePassage[]): Passage[] {
  const limits = ctx.config.limits;
  checkCount(passages.length, limits, 'passages');
  const out: Passage[] = new Array(passages.length);
  const seen = new Set<string>();
  for (let i = 0; i < passages.length; i++) {
    const p = passages[i];
    if (typeof p === 'string') {
      out[i] = passageOf(i, p, limits);
      continue;
    }
    const base = passageOf(i, p.text, limits);
    const id = p.id ?? String(i);
    if (seen.has(id))
      throw new ApiError('unprocessable', `passages[${i}].id ${JSON.stringify(id.slice(0, 64))} is repeated`);
    seen.add(id);
    out[i] = p.title === undefined ? { id, text: base.text } : { id, text: base.text, title: p.title };
  }
  if (passages.some((p) => typeof p !== 'string')) {
    // Index ids of plain strings must not collide with explicit ids either.
    const ids = new Set<string>();
    for (let i = 0; i < out.length; i++) {
      if (ids.has(out[i].id))
        throw new ApiError('unprocessable', `passages[${i}] id ${JSON.stringify(out[i].id.slice(0, 64))} is repeated`);
      ids.add(out[i].id);
    }
  }
  return out;
}

/**
 * A call whose every pair the deadline cut has no answer to give: it is the overload answer (429,
 * retry later), as for the rerank protocols, not a 200 that keeps nothing.
 */
function throwIfNothingScoredInTime(result: GateResult, call: DeadlineContext): void {
  const { retrieved, unscored } = result.stats;
  if (retrieved === 0 || unscored < retrieved) return;
  for (const list of [result.included, result.conflicting, result.excluded])
    for (const item of list) if (!cutByDeadline(item, call)) return;
  throw new ApiError(
    'overloaded',
    `none of the ${retrieved} passages could be scored within the ${call.budgetMs} ms budget; retry later or raise the budget`,
    { retryAfterSec: call.model.admission.retryAfterSec(retrieved) },
  );
}

/** Unscored counts by reason as the items report them: a pair the deadline cut is a `timeout`. */
function unscoredByReasonOf(result: GateResult, call: DeadlineContext): Record<string, number> {
  const out: Record<string, number> = {};
  for (const list of [result.included, result.conflicting, result.excluded])
    for (const item of list) {
      const reason = reasonOf(item, call);
      if (reason !== null) out[reason] = (out[reason] ?? 0) + 1;
    }
  return out;
}

/** `timeout` for a pair the deadline cut (whatever the scorer reported), else the gate's reason. */
function reasonOf(item: GateItem, call: DeadlineContext | undefined): string | null {
  if (item.reason === undefined) return null;
  return item.reason === 'scorer-null' && call !== undefined && cutByDeadline(item, call) ? 'timeout' : item.reason;
}

function itemJson(
  item: GateItem,
  degraded: DegradeLabel | undefined,
  call: DeadlineContext | undefined,
): Record<string, unknown> {
  return {
    index: item.rank,
    id: item.id,
    route: item.route,
    rule: item.rule,
    reason: reasonOf(item, call),
    relevance: item.relevance,
    signals: item.signals,
    raw: item.raw ?? null,
    tier: item.tier ?? null,
    cached: item.cached,
    degraded: degraded ?? null,
  };
}

function degradedOf(model: ServedModel, passages: readonly Passage[]): Map<Passage, DegradeLabel> {
  const out = new Map<Passage, DegradeLabel>();
  if (model.degraded === undefined) return out;
  for (const p of passages) {
    const label = model.degraded.get(p);
    if (label !== undefined) out.set(p, label);
  }
  return out;
}

function resultJson(
  requestId: string,
  model: ServedModel,
  result: GateResult,
  degraded: ReadonlyMap<Passage, DegradeLabel>,
  call: DeadlineContext,
  serverMs: number,
): Record<string, unknown> {
  const items = (list: readonly GateItem[]) => list.map((item) => itemJson(item, degraded.get(item.passage), call));
  let expired = 0;
  for (const list of [result.included, result.conflicting, result.excluded])
    for (const item of list)
      if (item.reason !== undefined && item.reason !== 'aborted' && cutByDeadline(item, call)) expired++;
  return {
    id: requestId,
    model: model.name,
    query_class: result.queryClass ?? null,
    included: items(result.included),
    conflicting: items(result.conflicting),
    excluded: items(result.excluded),
    stats: { ...result.stats, unscoredByReason: unscoredByReasonOf(result, call) },
    tier: result.tier,
    timings: { ...result.timings, serverMs },
    budget_ms: call.budgetMs,
    degraded_pairs: degraded.size,
    deadline_expired_pairs: expired,
    errors: result.errors.length === 0 ? [] : ['scoring failed for some pairs; see reason per item'],
  };
}

interface PreparedGateCall {
  readonly model: ServedModel;
  readonly query: string;
  readonly passages: Passage[];
  readonly policy: GatePolicy | undefined;
  readonly queryClass: string | undefined;
  readonly budgetMs: number;
  readonly deadline: number;
}

function prepare(ctx: ServerContext, request: FastifyRequest<{ Body: GateBody }>): PreparedGateCall {
  const body = request.body;
  const model = resolveModel(ctx, body.model);
  const query = checkQuery(body.query, ctx.config.limits);
  const passages = buildPassages(ctx, body.passages);
  const policy = parsePolicy(body.policy);
  const budgetMs = resolveBudget(ctx, request, model, body.budget_ms);
  logQuery(ctx, request, model.name, query, passages.length);
  return {
    model,
    query,
    passages,
    policy,
    queryClass: body.query_class ?? undefined,
    budgetMs,
    deadline: gateDeadline(ctx, request, budgetMs),
  };
}

function admit(ctx: ServerContext, request: FastifyRequest, endpoint: string, call: PreparedGateCall): AdmissionTicket {
  return admitCall(ctx, request, endpoint, call.model, call.passages.length, call.budgetMs);
}

function observe(ctx: ServerContext, call: PreparedGateCall, result: GateResult, degraded: Map<Passage, DegradeLabel>) {
  const byReason = new Map<string, number>();
  for (const label of degraded.values()) byReason.set(label, (byReason.get(label) ?? 0) + 1);
  ctx.metrics.observeResult(call.model.name, result, byReason, call.model.cacheEnabled);
}

/** Hands the decided call to the decision log (when on) under the id the caller gets back, and to its shadow. */
function logDecision(
  ctx: ServerContext,
  requestId: string,
  endpoint: string,
  call: PreparedGateCall,
  result: GateResult,
  serverMs: number,
): void {
  ctx.decisions?.record({
    requestId,
    endpoint,
    model: call.model,
    rerank: false,
    result,
    override: call.policy,
    serverMs,
  });
  ctx.shadows?.offer({
    requestId,
    model: call.model,
    rerank: false,
    query: call.query,
    passages: call.passages,
    override: call.policy,
    queryClass: call.queryClass,
  });
}

export function registerGateRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.post(
    '/v1/gate',
    { schema: { body: BODY }, config: { protocol: 'gate' } },
    async (request: FastifyRequest<{ Body: GateBody }>, reply: FastifyReply) => {
      const call = prepare(ctx, request);
      const ticket = admit(ctx, request, '/v1/gate', call);
      const abort = abortOnClose(reply);
      let result: GateResult;
      try {
        result = await call.model.gate.filter(
          call.query,
          call.passages,
          callOptions(call.deadline, abort.signal, call),
        );
      } catch (error) {
        ticket.release();
        throw toApiError(error);
      } finally {
        abort.dispose();
      }
      const ended = { model: call.model, budgetMs: call.budgetMs, deadlineMs: call.deadline, endedAtMs: Date.now() };
      releaseWith(ticket, result);
      const degraded = degradedOf(call.model, call.passages);
      observe(ctx, call, result, degraded);
      throwIfNothingScoredInTime(result, ended);
      const serverMs = Date.now() - request.arrivalMs;
      logDecision(ctx, request.id, '/v1/gate', call, result, serverMs);
      return resultJson(request.id, call.model, result, degraded, ended, serverMs);
    },
  );

  app.post(
    '/v1/gate/stream',
    { schema: { body: BODY }, config: { protocol: 'gate' } },
    async (request: FastifyRequest<{ Body: GateBody }>, reply: FastifyReply) => {
      const call = prepare(ctx, request);
      const ticket = admit(ctx, request, '/v1/gate/stream', call);
      const sse = (request.headers.accept ?? '').includes('text/event-stream');
      const abort = abortOnClose(reply);
      let stream: ReturnType<typeof call.model.gate.stream>;
      try {
        stream = call.model.gate.stream(call.query, call.passages, callOptions(call.deadline, abort.signal, call));
      } catch (error) {
        ticket.release();
        abort.dispose();
        throw toApiError(error);
      }
      const frame = (event: string, data: unknown): string =>
        sse
          ? `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
          : `${JSON.stringify({ type: event, ...(data as object) })}\n`;
      const model = call.model;
      const requestId = request.id;
      async function* events(): AsyncGenerator<string> {
        try {
          for await (const item of stream) {
            // The degrade label is known once the item's chunk was scored, which precedes its emission.
            yield frame('item', { item: itemJson(item, model.degraded?.get(item.passage), undefined) });
          }
          const result = await stream.result;
          const ended = { model, budgetMs: call.budgetMs, deadlineMs: call.deadline, endedAtMs: Date.now() };
          releaseWith(ticket, result);
          const degraded = degradedOf(model, call.passages);
          observe(ctx, call, result, degraded);
          const serverMs = Date.now() - request.arrivalMs;
          logDecision(ctx, requestId, '/v1/gate/stream', call, result, serverMs);
          yield frame('result', resultJson(requestId, model, result, degraded, ended, serverMs));
        } catch (error) {
          const api = toApiError(error);
          yield frame('error', { error: { type: api.kind, message: api.message }, request_id: requestId });
        } finally {
          ticket.release();
          abort.dispose();
        }
      }
      reply
        .header('content-type', sse ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .header('cache-control', 'no-cache');
      return reply.send(Readable.from(events(), { objectMode: false }));
    },
  );

  app.get('/v1/models', { config: { protocol: 'gate' } }, async () => ({
    default: ctx.registry.defaultModel,
    state: ctx.registry.state,
    models: ctx.registry.names.map((name) => {
      const m = ctx.registry.get(name);
      return { name, ready: m !== undefined, ...(m === undefined ? {} : { ...m.description, name }) };
    }),
  }));
}
