/**
 * Candidate lists: for each query, the BM25 first stage's top N documents with their qrels grade
 * (0 when unjudged). The same lists feed training (N = 100), reranking evaluation (N = 100) and the
 * gate evaluation (the first `gateK` of each list).
 */
import type { Passage } from '../../types.js';
import { InvalidArgumentError } from '../../errors.js';
import { type Collection, type CollectionDoc, judgmentsOf } from './collection.js';
import type { FirstStage } from './first-stage.js';

export interface CandidateDoc {
  readonly docId: string;
  readonly bm25: number;
  /** 1-based first-stage rank. */
  readonly rank: number;
  /** qrels grade; 0 when unjudged or judged non-relevant. */
  readonly grade: number;
}

export interface CandidateList {
  readonly queryId: string;
  readonly queryText: string;
  readonly candidates: readonly CandidateDoc[];
  /** All judgments of the query (for nDCG's ideal ranking, which counts relevant docs not retrieved). */
  readonly judgments: ReadonlyMap<string, number>;
}

export function buildCandidateLists(
  collection: Collection,
  firstStage: FirstStage,
  queryIds: readonly string[],
  topN: number,
): CandidateList[] {
  return queryIds.map((queryId) => {
    const query = collection.queryById.get(queryId);
    if (!query) throw new InvalidArgumentError(`query "${queryId}" is not in collection ${collection.name}`);
    const judgments = judgmentsOf(collection, queryId);
    const candidates = firstStage.search(query.text, topN).map((c) => {
      const g = judgments.get(c.docId) ?? 0;
      return { docId: c.docId, bm25: c.score, rank: c.rank, grade: Math.max(g, 0) };
    });
    return { queryId, queryText: query.text, candidates, judgments };
  });
}

/**
 * The passage a scorer receives for a document: title separate when the collection has one (the
 * lexical features use it), body as `text`. Training and evaluation both go through this function,
 * so the model sees the same input shape in both.
 */
export function toPassage(doc: CollectionDoc): Passage {
  return doc.title.trim() === '' ? { id: doc.id, text: doc.text } : { id: doc.id, text: doc.text, title: doc.title };
}
