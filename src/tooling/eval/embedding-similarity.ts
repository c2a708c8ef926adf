/**
 * A bi-encoder's query–document cosines as the fast path's `embedding_similarity` feature, for
 * `train-fast-path --embedding-model` and `eval` / `fit-points --tier fast-path --embedding-model`:
 * the trees then read the similarity a caller's vector database returns beside the lexical features.
 * Each collection's documents are embedded once (the corpus cache of embedding-tier.ts) and its
 * queries at first use; a cosine is then a dot product of two stored unit vectors.
 */
import type { EmbeddingScorer } from '../../tiers/embedding/types.js';
import type { Passage, Scorer } from '../../types.js';
import type { Collection } from './collection.js';
import { corpusEmbeddings, queryEmbeddings } from './embedding-tier.js';

/** Cosine of a query of the collection with one of its documents; undefined for an unknown document. */
export type SimilarityOf = (query: string, docId: string) => number | undefined;

export interface EmbeddingSimilarities {
  /** What the vectors are of: the bi-encoder's model id and folder, recorded in a trained model's meta. */
  readonly source: { readonly modelId: string; readonly modelDir: string; readonly dimensions: number };
  /**
   * The collection's cosines (its documents embedded, or read from the corpus cache; its queries
   * embedded). Another query has no cosine until `prepareQuery` embedded it.
   */
  forCollection(collection: Collection): Promise<SimilarityOf>;
  /** Embeds a query text (another collection's, for lists that hold nothing relevant) unless known. */
  prepareQuery(text: string): Promise<void>;
  close(): Promise<void>;
}

export async function createEmbeddingSimilarities(
  modelDir: string,
  options: { readonly cacheDir?: string; readonly log?: (line: string) => void } = {},
): Promise<EmbeddingSimilarities> {
  const { createEmbeddingScorer } = await import('../../tiers/embedding/index.js');
  const embedder: EmbeddingScorer = await createEmbeddingScorer({ modelDir, cacheBytes: 256 * 1024 * 1024 });
  const perCollection = new Map<string, Promise<SimilarityOf>>();
  // Query text → vector, shared by every collection (a query is embedded once).
  const queries = new Map<string, Float32Array>();
  const load = async (collection: Collection): Promise<SimilarityOf> => {
    const corpus = await corpusEmbeddings(embedder, collection, {
      ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
      ...(options.log === undefined ? {} : { log: options.log }),
    });
    await queryEmbeddings(
      embedder,
      collection.queries.map((q) => q.text),
      queries,
    );
    const dims = corpus.dimensions;
    return (query, docId) => {
      const row = corpus.row.get(docId);
      const q = queries.get(query);
      if (row === undefined || q === undefined) return undefined;
      let dot = 0;
      const from = row * dims;
      for (let k = 0; k < dims; k++) dot += q[k] * corpus.matrix[from + k];
      return dot;
    };
  };
  return {
    source: { modelId: embedder.modelId, modelDir, dimensions: embedder.dimensions },
    forCollection(collection) {
      let known = perCollection.get(collection.fingerprint);
      if (known === undefined) {
        known = load(collection);
        perCollection.set(collection.fingerprint, known);
      }
      return known;
    },
    async prepareQuery(text) {
      if (!queries.has(text)) await queryEmbeddings(embedder, [text], queries);
    },
    close: () => embedder.close(),
  };
}

/**
 * `scorer` with each passage's `features.embedding_similarity` set from `similarity` (the caller's
 * other features kept): how `eval` feeds a fast-path model trained with the feature. Same id: the
 * inner scorer's.
 */
export function withEmbeddingSimilarity(
  scorer: Scorer,
  similarity: SimilarityOf,
  prepareQuery: (text: string) => Promise<void>,
): Scorer {
  return {
    id: scorer.id,
    ...(scorer.signals === undefined ? {} : { signals: scorer.signals }),
    ...(scorer.metadataKeys === undefined ? {} : { metadataKeys: scorer.metadataKeys }),
    ...(scorer.decisions === undefined ? {} : { decisions: scorer.decisions }),
    async score(query, passages, options) {
      await prepareQuery(query);
      const withFeature = passages.map((p): Passage => {
        const cos = similarity(query, p.id);
        if (cos === undefined) return p;
        const features = p.features;
        const record =
          features === undefined || features === null || Array.isArray(features) || ArrayBuffer.isView(features)
            ? {}
            : (features as Readonly<Record<string, number>>);
        return { ...p, features: { ...record, embedding_similarity: cos } };
      });
      return scorer.score(query, withFeature, options);
    },
  };
}
