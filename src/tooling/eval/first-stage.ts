/**
 * The BM25 first stage used to build candidate lists for training and evaluation: MiniSearch
 * (a well-kept in-memory full-text index) configured as classic Okapi BM25 over one field, the
 * passage (title + " " + text, as the reranker sees it).
 *
 * Configuration, and why:
 * - k1 = 1.2, b = 0.75, BM25+ delta d = 0 (classic BM25; MiniSearch defaults to BM25+ with d = 0.5).
 * - MiniSearch multiplies a document's score by the number of distinct query terms it matched (a
 *   coordination bonus). We divide it back out, so the ranking is the plain sum of per-term BM25.
 * - Document length = number of indexed tokens (stop words excluded). MiniSearch measures a field's
 *   length as its count of DISTINCT raw tokens; our tokenizer tags each token with its position so
 *   every token is distinct, and processTerm strips the tag again, so MiniSearch's length becomes the
 *   token count of classic BM25 (measured: MAP +0.005 on cranfield/cisi/scifact, -0.002 on nfcorpus).
 * - Tokens: MiniSearch's Unicode-aware word split (whitespace/punctuation), lower-cased, an English
 *   stop list (below) removed; no stemming. OR semantics: any document matching a query term is a candidate.
 * - Ties are broken by document id (compareIds) so candidate lists are deterministic.
 * Measured against the data README's BM25 MAP column (docs/eval.md has the table).
 */
import MiniSearch from 'minisearch';
import { InvalidArgumentError } from '../../errors.js';
import { positiveInteger } from '../../util/validate-options.js';
import { type Collection, type CollectionDoc, compareIds, docPassage } from './collection.js';

/** A compact English stop list (the classic SMART/NLTK core); the first stage only. */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves'
  ).split(' '),
);

export interface Bm25Params {
  readonly k1: number;
  readonly b: number;
}

export const DEFAULT_BM25: Bm25Params = { k1: 1.2, b: 0.75 };

export interface Candidate {
  readonly docId: string;
  /** BM25 score (sum over query terms). */
  readonly score: number;
  /** 1-based rank in the first-stage list. */
  readonly rank: number;
}

/** What a first stage is, as reports state it. */
export type FirstStageInfo =
  | { readonly kind: 'bm25'; readonly library: 'minisearch'; readonly k1: number; readonly b: number }
  | {
      /** Exact retrieval by the embedding tier's cosine over every document (`eval --dense`). */
      readonly kind: 'dense';
      readonly documents: number;
      readonly dimensions: number;
      /** The file the corpus vectors are kept in, null when not cached. */
      readonly corpusEmbeddings: string | null;
    };

export interface FirstStage {
  /** The top `topN` documents for a query by BM25 (fewer when fewer documents match any query term). */
  search(query: string, topN: number): Candidate[];
  readonly params: Bm25Params;
  /** What this first stage is, for reports; absent: BM25 over MiniSearch with `params`. */
  readonly info?: FirstStageInfo;
}

/** MiniSearch's own default split: runs of whitespace, separators and punctuation. */
const SPLIT = /[\n\r\p{Z}\p{P}]+/u;
const TAG = '\u0000';

/** Lower-cased, stop-word-free tokens of a text, in order. */
export function firstStageTokens(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(SPLIT)) {
    if (raw === '') continue;
    const t = raw.toLowerCase();
    if (!STOP_WORDS.has(t)) out.push(t);
  }
  return out;
}

/** Index-time tokenizer: each token tagged with its position, so MiniSearch's distinct-token length is the token count. */
function tokenizeForIndex(text: string): string[] {
  return firstStageTokens(text).map((t, i) => `${t}${TAG}${i}`);
}

function stripTag(term: string): string {
  const at = term.indexOf(TAG);
  return at < 0 ? term : term.slice(0, at);
}

/** Indexes the collection's documents (title + text as one field) for BM25 retrieval. */
export function createBm25FirstStage(
  docs: readonly CollectionDoc[] | Collection,
  params: Bm25Params = DEFAULT_BM25,
): FirstStage {
  if (!(params.k1 > 0) || !(params.b >= 0 && params.b <= 1)) {
    throw new InvalidArgumentError(`BM25 parameters out of range: k1=${params.k1} (> 0), b=${params.b} (0..1)`);
  }
  const list = 'docs' in docs ? docs.docs : docs;
  const index = new MiniSearch<{ id: string; passage: string }>({
    fields: ['passage'],
    idField: 'id',
    storeFields: [],
    tokenize: tokenizeForIndex,
    processTerm: stripTag,
    searchOptions: {
      tokenize: firstStageTokens,
      processTerm: (t: string) => t,
      bm25: { k: params.k1, b: params.b, d: 0 },
      prefix: false,
      fuzzy: false,
      combineWith: 'OR',
    },
  });
  index.addAll(list.map((d) => ({ id: d.id, passage: docPassage(d) })));

  return {
    params,
    search(query, topN) {
      positiveInteger('topN', topN);
      const results = index.search(query);
      const scored = results.map((r) => ({ docId: String(r.id), score: r.score / (r.queryTerms.length || 1) }));
      scored.sort((a, b) => b.score - a.score || compareIds(a.docId, b.docId));
      return scored.slice(0, topN).map((c, i) => ({ docId: c.docId, score: c.score, rank: i + 1 }));
    },
  };
}
