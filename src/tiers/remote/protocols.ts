/**
 * The wire formats of the rerank protocols: the request body for one batch and the parse of the
 * answer into one probability per passage, in the batch's order.
 *   cohere: POST /v2/rerank `{model, query, documents}` → `{results: [{index, relevance_score}]}`
 *   tei:    POST /rerank `{query, texts, raw_scores: false, truncate: true}` → `[{index, score}]`
 * Both answer best first; the parse puts each score back at its index and refuses an answer that
 * misses, repeats or invents an index, or whose score is not a probability.
 */
import { RemoteResponseError } from './errors.js';
import type { RemoteProtocol } from './types.js';

export type RerankProtocol = Exclude<RemoteProtocol, 'kserve'>;

/** The request body of one batch. */
export function rerankBody(
  protocol: RerankProtocol,
  model: string | undefined,
  query: string,
  texts: readonly string[],
): string {
  if (protocol === 'cohere')
    return JSON.stringify(model === undefined ? { query, documents: texts } : { model, query, documents: texts });
  // truncate: a reranker reads a long text's head, as the local cross-encoder does; TEI's default
  // (false) would refuse the whole batch for one long text.
  return JSON.stringify(
    model === undefined
      ? { query, texts, raw_scores: false, truncate: true }
      : { model, query, texts, raw_scores: false, truncate: true },
  );
}

/** The scores of a 200 answer, index order; throws RemoteResponseError for anything else. */
export function parseRerankAnswer(protocol: RerankProtocol, text: string, count: number): Float64Array {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new RemoteResponseError(`${protocol} answer is not JSON`, protocol, { cause: error });
  }
  const list = protocol === 'cohere' ? (body as { results?: unknown } | null)?.results : body;
  if (!Array.isArray(list))
    throw new RemoteResponseError(
      protocol === 'cohere' ? 'cohere answer has no results array' : 'tei answer is not an array',
      protocol,
    );
  if (list.length !== count)
    throw new RemoteResponseError(`${protocol} answer has ${list.length} results for ${count} passages`, protocol);
  const field = protocol === 'cohere' ? 'relevance_score' : 'score';
  const scores = new Float64Array(count).fill(Number.NaN);
  for (const item of list) {
    const index = (item as { index?: unknown } | null)?.index;
    const score = (item as Record<string, unknown> | null)?.[field];
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count)
      throw new RemoteResponseError(`${protocol} answer has an invalid index ${JSON.stringify(index)}`, protocol);
    if (!Number.isNaN(scores[index]))
      throw new RemoteResponseError(`${protocol} answer repeats index ${index}`, protocol);
    if (typeof score !== 'number' || !(score >= 0 && score <= 1))
      throw new RemoteResponseError(
        `${protocol} answer's ${field} for index ${index} is not a probability in [0, 1]: ${JSON.stringify(score)}`,
        protocol,
      );
    scores[index] = score;
  }
  return scores;
}

/** The error message a backend put in its error body (Cohere `{message}`, TEI `{error}`), cut short. */
export function errorMessageOf(text: string): string {
  let message: unknown;
  try {
    const body = JSON.parse(text) as Record<string, unknown> | null;
    message = body?.message ?? body?.error;
    if (typeof message === 'object' && message !== null) message = (message as { message?: unknown }).message;
  } catch {
    message = text;
  }
  const s = typeof message === 'string' ? message : '';
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}
