import { join } from 'node:path';
import { Document, type DocumentInterface } from '@langchain/core/documents';
import { BaseRetriever } from '@langchain/core/retrievers';
import MiniSearch from 'minisearch';
import { type CollectionDoc, docPassage, loadCollection } from '../../src/tooling/eval/index.js';
import {
  type FastPathScorer,
  loadFastPathScorer,
  type Passage,
  type Scorer,
  type ScoreOptions,
} from '../../src/index.js';

export const SHARED_DATA = join(process.cwd(), '..', 'shared', 'data');
export const FAST_PATH_MODEL_DIR = 'models/fast-path-lexical';

let fastPath: Promise<FastPathScorer> | undefined;
/** The shipped fast-path scorer, loaded once per test file. */
export function fastPathScorer(): Promise<FastPathScorer> {
  fastPath ??= loadFastPathScorer(FAST_PATH_MODEL_DIR);
  return fastPath;
}

export interface MedSubset {
  readonly docs: readonly CollectionDoc[];
  readonly queries: ReadonlyArray<{ id: string; text: string }>;
}

/** 400 MED documents: those judged for the first three queries, then the lowest ids. */
export function medSubset(size = 400): MedSubset {
  const med = loadCollection(join(SHARED_DATA, 'med'));
  const queries = med.queries.slice(0, 3);
  const picked = new Map<string, CollectionDoc>();
  for (const q of queries) for (const id of med.qrels.get(q.id)?.keys() ?? []) picked.set(id, med.docById.get(id)!);
  for (const d of med.docs) {
    if (picked.size >= size) break;
    picked.set(d.id, d);
  }
  return { docs: [...picked.values()], queries };
}

/** A keyword (BM25, MiniSearch) retriever over collection documents: a real first stage. */
export class KeywordRetriever extends BaseRetriever {
  lc_namespace = ['relevance-gate', 'test', 'keyword'];
  private readonly index: MiniSearch<{ id: string; passage: string }>;
  private readonly byId: ReadonlyMap<string, CollectionDoc>;
  readonly k: number;

  constructor(docs: readonly CollectionDoc[], k = 20) {
    super();
    this.k = k;
    this.byId = new Map(docs.map((d) => [d.id, d]));
    this.index = new MiniSearch({ fields: ['passage'], idField: 'id', storeFields: [] });
    this.index.addAll(docs.map((d) => ({ id: d.id, passage: docPassage(d) })));
  }

  override async _getRelevantDocuments(query: string): Promise<DocumentInterface[]> {
    return this.index
      .search(query)
      .slice(0, this.k)
      .map((hit) => {
        const doc = this.byId.get(String(hit.id))!;
        return new Document({
          id: doc.id,
          pageContent: docPassage(doc),
          metadata: { source: 'med', docId: doc.id, title: doc.title, bm25: hit.score },
        });
      });
  }
}

/** Passages of documents exactly as the compressor builds them (id = document id, text = pageContent). */
export function passagesOf(documents: readonly DocumentInterface[]): Passage[] {
  return documents.map((d) => ({ id: String(d.id), text: d.pageContent }));
}

/** A scorer that answers after `ms` (or never, when ms is Infinity) unless aborted; counts its calls. */
export function slowScorer(ms: number): Scorer & { calls: number; aborted: number } {
  const scorer = {
    id: 'slow-model',
    calls: 0,
    aborted: 0,
    score(_query: string, passages: readonly Passage[], options?: ScoreOptions) {
      scorer.calls++;
      return new Promise<Array<{ relevant: number }>>((resolve, reject) => {
        const timer = Number.isFinite(ms)
          ? setTimeout(() => resolve(passages.map(() => ({ relevant: 0.9 }))), ms)
          : undefined;
        options?.signal?.addEventListener(
          'abort',
          () => {
            scorer.aborted++;
            clearTimeout(timer);
            reject(options.signal?.reason);
          },
          { once: true },
        );
      });
    },
  };
  return scorer;
}

/** Deep-freezes a value so any mutation throws (ESM test files run in strict mode). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
