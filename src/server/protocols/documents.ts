/**
 * Documents → passages for the rerank protocols. Ids are the document's index, so results map
 * back to exactly the position the client sent, and each request builds its own passage objects.
 */
import type { Passage } from '../../index.js';
import { ApiError } from '../errors.js';
import { toWellFormed, truncateChars } from '../text.js';

export interface DocumentLimits {
  readonly documentsPerRequest: number;
  readonly maxDocumentChars: number;
  readonly maxQueryChars: number;
}

/** Refuses an empty or whitespace-only query, or one over the limit. */
export function checkQuery(query: string, limits: DocumentLimits, field = 'query'): string {
  if (query.trim().length === 0) throw new ApiError('invalid_request', `${field} must not be empty`);
  if (query.length > limits.maxQueryChars)
    throw new ApiError(
      'unprocessable',
      `${field} has ${query.length} characters, more than the limit ${limits.maxQueryChars}`,
    );
  return query;
}

export function checkCount(count: number, limits: DocumentLimits, field: string): void {
  if (count > limits.documentsPerRequest)
    throw new ApiError(
      'unprocessable',
      `too many ${field}: ${count} > the limit of ${limits.documentsPerRequest} per request`,
    );
}

/** A passage for document `index`: text made well-formed and cut to the per-document limit. */
export function passageOf(index: number, text: string, limits: DocumentLimits): Passage {
  return { id: String(index), text: truncateChars(toWellFormed(text), limits.maxDocumentChars) };
}
