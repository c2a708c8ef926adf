/**
 * The BM25 candidate lists the cost measurements time features on (scripts/feedback-cost.ts,
 * scripts/lsi-cost.ts): each judged query's first-stage top k, as passages with their BM25 scores.
 */
import { type Collection, judgedQueryIds } from '../../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import type { Passage } from '../../src/types.js';

export interface Bm25List {
  readonly query: string;
  readonly passages: Passage[];
  readonly bm25: Float64Array;
}

/** Every judged query's BM25 top `k` in `collection` (queries with no candidate left out). */
export function judgedBm25Lists(collection: Collection, k: number): Bm25List[] {
  const firstStage = createBm25FirstStage(collection);
  const lists: Bm25List[] = [];
  for (const qid of judgedQueryIds(collection.qrels)) {
    const query = collection.queryById.get(qid)!.text;
    const candidates = firstStage.search(query, k);
    if (candidates.length === 0) continue;
    const passages = candidates.map((c) => {
      const d = collection.docById.get(c.docId)!;
      return { id: d.id, title: d.title, text: d.text };
    });
    lists.push({ query, passages, bm25: Float64Array.from(candidates, (c) => c.score) });
  }
  return lists;
}
