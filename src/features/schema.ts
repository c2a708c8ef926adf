/**
 * The versioned lexical feature schema: the order, names and meaning of the features the native
 * extractor (native/src/features/extractor.h) writes per (query, passage) pair. A trained model
 * records `FEATURE_SCHEMA_VERSION`; the fast-path scorer refuses a model with another version or
 * feature list. Change anything here (or in tokenisation) → bump the version.
 * docs/features.md explains each feature in more detail.
 */
import { FeatureSchemaMismatchError } from './errors.js';

export const FEATURE_SCHEMA_VERSION = 'lexical-v1';
/** Version of the tokenisation rules (folding, splitting, stop list, stemmer); stored in corpus statistics. */
export const TOKENIZER_VERSION = 'rg-tok-2';
/** BM25 parameters used by every BM25 feature (Robertson/Lucene classic defaults). */
export const BM25_PARAMETERS = { k1: 1.2, b: 0.75 } as const;

export interface FeatureDefinition {
  readonly name: string;
  /** 'lexical' = computed from text + corpus statistics; 'passthrough' = supplied by the caller (NaN when missing). */
  readonly kind: 'lexical' | 'passthrough';
  readonly meaning: string;
  /** Schema version that introduced the feature. */
  readonly since: string;
}

const v1 = 'lexical-v1';
/** In output order: column i of an extracted row is FEATURE_SCHEMA.features[i]. */
export const FEATURE_DEFINITIONS: readonly FeatureDefinition[] = [
  {
    name: 'bm25_body',
    kind: 'lexical',
    since: v1,
    meaning:
      'BM25 of the query against the passage body (k1=1.2, b=0.75, body document frequencies and average body length)',
  },
  {
    name: 'bm25_title',
    kind: 'lexical',
    since: v1,
    meaning: 'BM25 against the title (title document frequencies and average title length; 0 without a title)',
  },
  {
    name: 'bm25_all',
    kind: 'lexical',
    since: v1,
    meaning: 'BM25 against title+body as one field (document frequency = documents with the term in either field)',
  },
  {
    name: 'query_coverage',
    kind: 'lexical',
    since: v1,
    meaning: 'share of distinct query terms present in title or body',
  },
  { name: 'body_coverage', kind: 'lexical', since: v1, meaning: 'share of distinct query terms present in the body' },
  { name: 'title_coverage', kind: 'lexical', since: v1, meaning: 'share of distinct query terms present in the title' },
  {
    name: 'idf_coverage',
    kind: 'lexical',
    since: v1,
    meaning: 'IDF-weighted coverage: sum of IDF of matched distinct query terms / sum over all distinct query terms',
  },
  {
    name: 'matched_idf_sum',
    kind: 'lexical',
    since: v1,
    meaning: 'sum of IDF (either-field document frequency) of matched distinct query terms',
  },
  {
    name: 'matched_idf_max',
    kind: 'lexical',
    since: v1,
    meaning: 'largest IDF among matched distinct query terms (0 when none)',
  },
  {
    name: 'bigram_matches',
    kind: 'lexical',
    since: v1,
    meaning:
      'number of adjacent query-term pairs (query positions j-1, j) that occur adjacent and in order in the passage',
  },
  {
    name: 'bigram_share',
    kind: 'lexical',
    since: v1,
    meaning: 'bigram_matches / (query positions - 1); 0 for queries of fewer than 2 terms',
  },
  {
    name: 'longest_span',
    kind: 'lexical',
    since: v1,
    meaning: 'longest run of consecutive query terms found consecutively and in order in the passage (terms)',
  },
  { name: 'longest_span_share', kind: 'lexical', since: v1, meaning: 'longest_span / query positions' },
  {
    name: 'min_window_density',
    kind: 'lexical',
    since: v1,
    meaning:
      'matched distinct terms / length of the smallest window of term positions containing all of them; 0 when fewer than 2 matched',
  },
  {
    name: 'near_pair_share',
    kind: 'lexical',
    since: v1,
    meaning:
      'share of distinct query-term pairs that occur within 8 term positions of each other somewhere in the passage',
  },
  {
    name: 'match_density',
    kind: 'lexical',
    since: v1,
    meaning: 'occurrences of query terms / passage length (title+body terms); 0 for an empty passage',
  },
  { name: 'body_length', kind: 'lexical', since: v1, meaning: 'body length in terms (after stop-word removal)' },
  { name: 'title_length', kind: 'lexical', since: v1, meaning: 'title length in terms (after stop-word removal)' },
  {
    name: 'query_length',
    kind: 'lexical',
    since: v1,
    meaning: 'query length in terms (after stop-word removal, repeats counted)',
  },
  {
    name: 'query_idf_sum',
    kind: 'lexical',
    since: v1,
    meaning: 'sum of IDF of the distinct query terms (a query-level specificity signal, constant within a request)',
  },
  {
    name: 'retrieval_score',
    kind: 'passthrough',
    since: v1,
    meaning: 'first-stage retrieval score supplied by the caller (passage.features.retrieval_score); NaN when missing',
  },
  {
    name: 'retrieval_rank',
    kind: 'passthrough',
    since: v1,
    meaning: 'first-stage rank supplied by the caller, 1 = best (passage.features.retrieval_rank); NaN when missing',
  },
  {
    name: 'embedding_similarity',
    kind: 'passthrough',
    since: v1,
    meaning:
      'query-passage embedding similarity supplied by the caller (passage.features.embedding_similarity); NaN when missing',
  },
];

export const FEATURE_NAMES: readonly string[] = FEATURE_DEFINITIONS.map((f) => f.name);
export const NUM_FEATURES = FEATURE_DEFINITIONS.length;

/** Caller-supplied features, in the order they occupy at the end of each row. */
export const PASSTHROUGH_FEATURES = ['retrieval_score', 'retrieval_rank', 'embedding_similarity'] as const;
export type PassthroughFeatureName = (typeof PASSTHROUGH_FEATURES)[number];
/** Column of the first passthrough feature: they are the last PASSTHROUGH_FEATURES.length columns. */
export const PASSTHROUGH_COLUMN_OFFSET = NUM_FEATURES - PASSTHROUGH_FEATURES.length;

export interface FeatureSchema {
  readonly version: string;
  readonly tokenizerVersion: string;
  readonly bm25: { readonly k1: number; readonly b: number };
  readonly features: readonly FeatureDefinition[];
}

export const FEATURE_SCHEMA: FeatureSchema = {
  version: FEATURE_SCHEMA_VERSION,
  tokenizerVersion: TOKENIZER_VERSION,
  bm25: BM25_PARAMETERS,
  features: FEATURE_DEFINITIONS,
};

/**
 * Throws FeatureSchemaMismatchError unless a model's recorded schema is the one this build
 * computes (same version and, when recorded, the same feature names in the same order).
 */
export function assertFeatureSchema(model: { readonly schemaVersion: unknown; readonly featureNames?: unknown }): void {
  const version = typeof model.schemaVersion === 'string' ? model.schemaVersion : String(model.schemaVersion);
  if (version !== FEATURE_SCHEMA_VERSION) throw new FeatureSchemaMismatchError(FEATURE_SCHEMA_VERSION, version);
  if (model.featureNames === undefined) return;
  const names = model.featureNames;
  if (!Array.isArray(names) || names.length !== NUM_FEATURES || names.some((n, i) => n !== FEATURE_NAMES[i])) {
    throw new FeatureSchemaMismatchError(
      FEATURE_SCHEMA_VERSION,
      version,
      `feature names differ (model: ${Array.isArray(names) ? names.join(',') : typeof names}; expected: ${FEATURE_NAMES.join(',')})`,
    );
  }
}
