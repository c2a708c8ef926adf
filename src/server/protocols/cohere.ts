/**
 * Cohere's rerank protocols, as the Cohere SDKs (v1 `CohereClient`, v2 `CohereClientV2`),
 * LangChain's `CohereRerank`, the Vercel AI SDK's `@ai-sdk/cohere` and Jina clients send them.
 *
 * - POST /v1/rerank `{model?, query, documents: (string | {text, ...})[], top_n?, return_documents?, rank_fields?, max_chunks_per_doc?}`
 *   → `{id, results: [{index, relevance_score, document?}], meta}`;
 * - POST /v2/rerank `{model, query, documents: string[], top_n?, max_tokens_per_doc?, priority?}`
 *   → `{id, results: [{index, relevance_score}], meta}`.
 *
 * Long documents are cut to `limits.maxDocumentChars`; v1 `max_chunks_per_doc` > 1 splits them
 * into up to that many chunks instead and scores each document by its best chunk. v2
 * `max_tokens_per_doc` keeps the first that many whitespace-separated tokens; `priority` is accepted.
 *
 * Errors are `{id, message}` with Cohere's statuses (400 malformed, 404 unknown model, 422 refused,
 * 429 overloaded with Retry-After, 503 loading/draining): the SDKs map them to their error classes.
 * Unknown body fields are accepted (newer clients send more than this server reads).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Passage } from '../../index.js';
import { ApiError } from '../errors.js';
import { rankAll, score, type RankedScore, type ServerContext } from '../scoring.js';
import { truncateTokens } from '../text.js';
import { checkCount, checkQuery, passageOf } from './documents.js';

const nullable = (type: string): { type: string[] } => ({ type: [type, 'null'] });

const V1_BODY = {
  type: 'object',
  required: ['query', 'documents'],
  properties: {
    model: nullable('string'),
    query: { type: 'string' },
    documents: { type: 'array', items: { type: ['string', 'object'] } },
    top_n: { type: ['integer', 'null'], minimum: 1 },
    return_documents: nullable('boolean'),
    rank_fields: { type: ['array', 'null'], items: { type: 'string' } },
    max_chunks_per_doc: { type: ['integer', 'null'], minimum: 1 },
  },
} as const;

const V2_BODY = {
  type: 'object',
  required: ['query', 'documents'],
  properties: {
    model: nullable('string'),
    query: { type: 'string' },
    documents: { type: 'array', items: { type: ['string', 'object'] } },
    top_n: { type: ['integer', 'null'], minimum: 1 },
    max_tokens_per_doc: { type: ['integer', 'null'], minimum: 1 },
    priority: { type: ['integer', 'null'] },
  },
} as const;

const META_SCHEMA = {
  type: 'object',
  properties: {
    api_version: { type: 'object', properties: { version: { type: 'string' } } },
    billed_units: { type: 'object', properties: { search_units: { type: 'number' } } },
  },
} as const;

const V1_RESPONSE = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    results: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer' },
          relevance_score: { type: 'number' },
          document: { type: 'object', additionalProperties: true },
        },
      },
    },
    meta: META_SCHEMA,
  },
} as const;

const V2_RESPONSE = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    results: {
      type: 'array',
      items: { type: 'object', properties: { index: { type: 'integer' }, relevance_score: { type: 'number' } } },
    },
    meta: META_SCHEMA,
  },
} as const;

type CohereDocument = string | Record<string, unknown>;

interface V1Body {
  model?: string | null;
  query: string;
  documents: CohereDocument[];
  top_n?: number | null;
  return_documents?: boolean | null;
  rank_fields?: string[] | null;
  max_chunks_per_doc?: number | null;
}

interface V2Body {
  model?: string | null;
  query: string;
  documents: CohereDocument[];
  top_n?: number | null;
  max_tokens_per_doc?: number | null;
  priority?: number | null;
}

/** Cohere bills one search unit per query with up to 100 documents. */
function searchUnits(documents: number): number {
  return Math.max(1, Math.ceil(documents / 100));
}

/** The text Cohere ranks for a document: `text`, or `field: value` lines of `rank_fields`. */
function documentText(doc: CohereDocument, index: number, rankFields: readonly string[] | null | undefined): string {
  if (typeof doc === 'string') return doc;
  if (rankFields !== undefined && rankFields !== null && rankFields.length > 0) {
    const lines: string[] = [];
    for (const field of rankFields) {
      const value = doc[field];
      if (typeof value === 'string') lines.push(rankFields.length === 1 ? value : `${field}: ${value}`);
    }
    if (lines.length === 0)
      throw new ApiError('invalid_request', `documents[${index}] has none of the rank_fields as a string`);
    return lines.join('\n');
  }
  const text = doc.text;
  if (typeof text !== 'string')
    throw new ApiError('invalid_request', `documents[${index}] must be a string or an object with a string "text"`);
  return text;
}

/** The document as returned: `{text}` for strings, the object's string fields (Cohere documents are string maps). */
function returnedDocument(doc: CohereDocument): Record<string, string> {
  if (typeof doc === 'string') return { text: doc };
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(doc)) if (typeof value === 'string') out[key] = value;
  return out;
}

interface BuiltPassages {
  readonly passages: Passage[];
  /** Chunked requests: the document index of every passage (chunk). */
  readonly owner: number[] | undefined;
}

/** Cuts a long text into pieces of at most `size` characters, at whitespace when one is near the end. */
function chunks(text: string, size: number, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length && out.length < max) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > start + size * 0.8) end = space;
    }
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/**
 * One passage per document, text cut to the per-document limit; with `max_chunks_per_doc` > 1
 * (v1) a longer document is split into up to that many chunks instead, scored as its best chunk.
 */
function buildPassages(
  ctx: ServerContext,
  documents: readonly CohereDocument[],
  rankFields: readonly string[] | null | undefined,
  maxTokensPerDoc: number | null | undefined,
  maxChunksPerDoc: number | null | undefined,
): BuiltPassages {
  const limits = ctx.config.limits;
  if (documents.length === 0) throw new ApiError('invalid_request', 'documents must not be empty');
  checkCount(documents.length, limits, 'documents');
  const chunked = maxChunksPerDoc !== undefined && maxChunksPerDoc !== null && maxChunksPerDoc > 1;
  const passages: Passage[] = [];
  const owner: number[] = [];
  for (let i = 0; i < documents.length; i++) {
    let text = documentText(documents[i], i, rankFields);
    if (maxTokensPerDoc !== undefined && maxTokensPerDoc !== null) text = truncateTokens(text, maxTokensPerDoc);
    const pieces =
      chunked && text.length > limits.maxDocumentChars
        ? chunks(text, limits.maxDocumentChars, maxChunksPerDoc)
        : [text];
    for (const piece of pieces) {
      passages.push(passageOf(passages.length, piece, limits));
      owner.push(i);
    }
  }
  const maxPairs = limits.documentsPerRequest * MAX_CHUNK_FACTOR;
  if (passages.length > maxPairs)
    throw new ApiError('unprocessable', `documents make ${passages.length} chunks, more than the limit of ${maxPairs}`);
  return { passages, owner: passages.length === documents.length ? undefined : owner };
}

/** Chunks of one request at most, as a multiple of the documents limit. */
const MAX_CHUNK_FACTOR = 10;

/** Per document the best of its chunks, best first (ties: document order). */
function bestChunks(ranked: readonly RankedScore[], owner: readonly number[]): RankedScore[] {
  const best = new Map<number, RankedScore>();
  // `ranked` is best first: the first chunk seen of a document is its best.
  for (const r of ranked) {
    const doc = owner[r.index];
    if (!best.has(doc)) best.set(doc, { index: doc, score: r.score, raw: r.raw });
  }
  return [...best.values()].sort((a, b) => b.score - a.score || a.index - b.index);
}

function topN(count: number, requested: number | null | undefined): number {
  return requested === undefined || requested === null ? count : Math.min(count, requested);
}

/** Scores every passage of a rerank call; the results best first. */
async function rankedScores(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  endpoint: string,
  modelName: string | null | undefined,
  query: string,
  passages: readonly Passage[],
): Promise<RankedScore[]> {
  return rankAll(await score(ctx, request, reply, { endpoint, modelName, query, passages, rerank: true }));
}

/** Cohere's response envelope: results, API version and billed search units. */
function responseBody(id: string, results: unknown[], version: '1' | '2', passageCount: number) {
  return {
    id,
    results,
    meta: { api_version: { version }, billed_units: { search_units: searchUnits(passageCount) } },
  };
}

export function registerCohereRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.post(
    '/v1/rerank',
    {
      schema: { body: V1_BODY, response: { 200: V1_RESPONSE } },
      config: { protocol: 'cohere' },
    },
    async (request: FastifyRequest<{ Body: V1Body }>, reply: FastifyReply) => {
      const body = request.body;
      const query = checkQuery(body.query, ctx.config.limits);
      const { passages, owner } = buildPassages(
        ctx,
        body.documents,
        body.rank_fields,
        undefined,
        body.max_chunks_per_doc,
      );
      const all = await rankedScores(ctx, request, reply, '/v1/rerank', body.model, query, passages);
      const ranked = owner === undefined ? all : bestChunks(all, owner);
      const n = topN(ranked.length, body.top_n);
      const withDocuments = body.return_documents === true;
      const results = new Array(n);
      for (let i = 0; i < n; i++) {
        const r = ranked[i];
        const doc = body.documents[r.index];
        results[i] = withDocuments
          ? { index: r.index, relevance_score: r.score, document: returnedDocument(doc) }
          : { index: r.index, relevance_score: r.score };
      }
      return responseBody(request.id, results, '1', passages.length);
    },
  );

  app.post(
    '/v2/rerank',
    {
      schema: { body: V2_BODY, response: { 200: V2_RESPONSE } },
      config: { protocol: 'cohere' },
    },
    async (request: FastifyRequest<{ Body: V2Body }>, reply: FastifyReply) => {
      const body = request.body;
      const query = checkQuery(body.query, ctx.config.limits);
      const { passages } = buildPassages(ctx, body.documents, undefined, body.max_tokens_per_doc, undefined);
      const ranked = await rankedScores(ctx, request, reply, '/v2/rerank', body.model, query, passages);
      const n = topN(ranked.length, body.top_n);
      const results = new Array(n);
      for (let i = 0; i < n; i++) results[i] = { index: ranked[i].index, relevance_score: ranked[i].score };
      return responseBody(request.id, results, '2', passages.length);
    },
  );
}
