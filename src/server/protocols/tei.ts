/**
 * Hugging Face text-embeddings-inference (TEI) reranker protocol:
 *
 * - POST /rerank `{query, texts, truncate?, truncation_direction?, raw_scores?, return_text?}` →
 *   a bare array `[{index, score, text?}]`, best first; `raw_scores` gives the tier's raw logit;
 * - GET /info (model metadata as TEI reports it), GET /health (200 once ready, else 503).
 *
 * Errors are TEI's `{error, error_type}`: Empty 400, Validation 422, Tokenizer 422, Overloaded 429,
 * Backend 424, Unhealthy 503. As in TEI, `truncate` defaults to false: a text over the length
 * limit is refused (Validation) instead of silently cut; a text that is not valid Unicode
 * (unpaired surrogates) cannot be tokenised (Tokenizer).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Passage } from '../../index.js';
import { ApiError } from '../errors.js';
import { rankAll, resolveModel, score, type ServerContext } from '../scoring.js';
import { hasLoneSurrogate, truncateChars } from '../text.js';
import { checkCount, checkQuery } from './documents.js';

const BODY = {
  type: 'object',
  required: ['query', 'texts'],
  properties: {
    model: { type: ['string', 'null'] },
    query: { type: 'string' },
    texts: { type: 'array', items: { type: 'string' } },
    truncate: { type: ['boolean', 'null'] },
    truncation_direction: { type: ['string', 'null'], enum: ['Left', 'Right', 'left', 'right', null] },
    raw_scores: { type: ['boolean', 'null'] },
    return_text: { type: ['boolean', 'null'] },
  },
} as const;

const RESPONSE = {
  type: 'array',
  items: {
    type: 'object',
    properties: { index: { type: 'integer' }, text: { type: 'string' }, score: { type: 'number' } },
  },
} as const;

interface TeiBody {
  model?: string | null;
  query: string;
  texts: string[];
  truncate?: boolean | null;
  truncation_direction?: 'Left' | 'Right' | 'left' | 'right' | null;
  raw_scores?: boolean | null;
  return_text?: boolean | null;
}

export const TEI_VERSION = '1.8.0';

export function registerTeiRoutes(app: FastifyInstance, ctx: ServerContext, version: string): void {
  app.post(
    '/rerank',
    { schema: { body: BODY, response: { 200: RESPONSE } }, config: { protocol: 'tei' } },
    async (request: FastifyRequest<{ Body: TeiBody }>, reply: FastifyReply) => {
      const body = request.body;
      const limits = ctx.config.limits;
      if (body.texts.length === 0) throw new ApiError('empty', '`texts` cannot be empty');
      checkCount(body.texts.length, limits, 'texts');
      const query = checkQuery(body.query, limits);
      if (hasLoneSurrogate(query)) throw new ApiError('tokenizer', 'query is not valid Unicode (unpaired surrogate)');
      const truncate = body.truncate === true;
      const direction = body.truncation_direction?.toLowerCase() === 'left' ? 'left' : 'right';
      const passages: Passage[] = new Array(body.texts.length);
      for (let i = 0; i < body.texts.length; i++) {
        let text = body.texts[i];
        if (hasLoneSurrogate(text))
          throw new ApiError('tokenizer', `texts[${i}] is not valid Unicode (unpaired surrogate)`);
        if (text.length > limits.maxDocumentChars) {
          if (!truncate)
            throw new ApiError(
              'unprocessable',
              `Input validation error: texts[${i}] has ${text.length} characters, more than the limit of ${limits.maxDocumentChars}; send "truncate": true`,
            );
          text = truncateChars(text, limits.maxDocumentChars, direction);
        }
        passages[i] = { id: String(i), text };
      }
      const outcome = await score(ctx, request, reply, {
        endpoint: '/rerank',
        modelName: body.model,
        query,
        passages,
        rerank: true,
      });
      const ranked = rankAll(outcome);
      const raw = body.raw_scores === true;
      const withText = body.return_text === true;
      return ranked.map((r) =>
        withText
          ? { index: r.index, text: body.texts[r.index], score: raw ? r.raw : r.score }
          : { index: r.index, score: raw ? r.raw : r.score },
      );
    },
  );

  app.get('/info', { config: { protocol: 'tei' } }, async () => {
    const name = ctx.registry.defaultModel;
    const model = ctx.registry.get(name);
    const limits = ctx.config.limits;
    return {
      model_id: name,
      model_sha: model?.description.scorerId ?? null,
      model_dtype: 'float32',
      model_type: { reranker: { id2label: { '0': 'LABEL_0' }, label2id: { LABEL_0: 0 } } },
      max_concurrent_requests: ctx.config.admission.maxConcurrentRequests,
      max_input_length: model?.description.maxInputTokens ?? limits.maxDocumentChars,
      max_batch_tokens: limits.maxDocumentChars * limits.documentsPerRequest,
      max_batch_requests: null,
      max_client_batch_size: limits.documentsPerRequest,
      auto_truncate: false,
      tokenization_workers: 1,
      version,
      sha: null,
      docker_label: null,
      served_models: ctx.registry.names,
    };
  });

  app.get('/health', { config: { protocol: 'tei' } }, async (_request, reply) => {
    if (ctx.lifecycle.draining) throw new ApiError('unavailable', 'the server is shutting down', { retryAfterSec: 1 });
    resolveModel(ctx, undefined); // throws Unhealthy (503) while loading
    return reply.code(200).send();
  });
}
