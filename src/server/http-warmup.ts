/**
 * Warm-up of the HTTP path before readiness: requests through every protocol route and built-in
 * model with Fastify's inject (no socket), so the route handlers, parsers, validators,
 * serialisers, gates, router and cache code are compiled before the first real request.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ServerConfig } from './config/index.js';
import type { ModelRegistry } from './registry.js';
import { warmupRequest } from './warmup.js';

/** Requests per model through the HTTP path at start-up (in-process injection, no socket). */
const HTTP_WARMUP_REQUESTS = 60;

/**
 * The injected request's class: a request whose body was given whole, as a real request is once
 * Node has read all of it (`IncomingMessage.complete`). Fastify's inject leaves `complete` unset,
 * and the server treats a response to an incomplete request as one answered before its body
 * arrived: it would keep waiting (and arm a timer) to drain a body already read.
 */
class WarmupRequest extends Readable {
  get complete(): boolean {
    return true;
  }
}

/**
 * Sends warm-up requests through every route and model with Fastify's inject (no socket): the
 * code of the whole request path gets compiled before the first real request. Queries are
 * marked so they never collide with real ones in the cache; failures are ignored.
 */
export async function warmHttpPath(app: FastifyInstance, registry: ModelRegistry, config: ServerConfig): Promise<void> {
  const request = await warmupRequest();
  const texts = request.passages.map((p) => p.text);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-budget-ms': '100' };
  if (config.apiKey !== undefined) headers.authorization = `Bearer ${config.apiKey}`;
  const docs = Math.min(texts.length, config.limits.documentsPerRequest);
  for (const model of registry.names) {
    const m = config.models[model];
    const tiers = m.type === 'router' ? m.tiers.map((t) => config.models[t].type) : [m.type];
    // Programmatic scorers are the embedder's own (they may block or cost anything), remote ones
    // call a backend that may bill per request: not warmed.
    // Cross-encoders were warmed directly; a few requests compile their HTTP path.
    if (tiers.includes('scorer') || tiers.includes('remote')) continue;
    const rounds = tiers.includes('cross-encoder') ? 4 : HTTP_WARMUP_REQUESTS;
    for (let i = 0; i < rounds; i++) {
      const query = `${request.query} (warm-up ${i})`;
      const calls = [
        { url: '/v1/gate', payload: { model, query, passages: request.passages.slice(0, docs) } },
        {
          url: '/v1/rerank',
          payload: { model, query, documents: texts.slice(0, docs), return_documents: i % 2 === 0 },
        },
        {
          url: '/rerank',
          payload: { model, query, texts: texts.slice(0, docs), truncate: true, raw_scores: i % 2 === 0 },
        },
      ];
      for (const call of calls)
        await app
          .inject({ method: 'POST', url: call.url, headers, payload: call.payload, Request: WarmupRequest })
          .catch(() => undefined);
    }
  }
}
