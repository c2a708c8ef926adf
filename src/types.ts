/**
 * The seams between modules: what a passage is, what a scorer returns, how time limits travel.
 * Keep this file small; module-specific types live next to their module.
 */
import type { ModelDecisions } from './operating-points/types.js';

/**
 * One retrieved candidate. `features` feeds the tree tier: a record of the passthrough features
 * (retrieval_score, retrieval_rank, embedding_similarity), or a dense vector of the model's whole
 * row in schema order (an array or any numeric typed array).
 */
export interface Passage {
  readonly id: string;
  readonly text: string;
  readonly title?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly features?: Readonly<Record<string, number>> | Float32Array | Float64Array | readonly number[];
  /**
   * The passage's embedding, computed earlier by the embedding tier's model (`title + ' ' + text`,
   * trimmed, as that tier reads a passage): the embedding tier then uses it instead of running its
   * model. Checked (dimensions, finite values, the model id) before anything is scored; other tiers
   * ignore it. See docs/embedding.md.
   */
  readonly embedding?: Float32Array | readonly number[];
  /**
   * The model id `embedding` came from (the embedding scorer's `modelId`); default the call's
   * `embeddingModel` option. Lets a passage carry its vector through a router or a gate, which do
   * not pass call options on to their tiers.
   */
  readonly embeddingModel?: string;
}

/**
 * Time limits of one call. `deadline` is an absolute time in milliseconds on the `Date.now()`
 * clock; `signal` aborts the call. Both are optional; tiers must honour both when given.
 */
export interface ScoreOptions {
  readonly signal?: AbortSignal;
  readonly deadline?: number;
}

/** Signal name → probability in [0, 1] for one pair. Every relevance scorer names its relevance signal `relevant` (src/signals.ts). */
export type SignalProbabilities = Readonly<Record<string, number>>;

/**
 * A pair's score as built-in tiers report it: probabilities plus the raw values they came from
 * (logits/margins), and the tier that produced them (the router scores pairs on different tiers).
 */
export interface DetailedPairScore {
  readonly probabilities: SignalProbabilities;
  readonly raw?: Readonly<Record<string, number>>;
  readonly tier?: string;
  /** How many windows a long passage was scored as (a cross-encoder in chunk mode); absent otherwise. */
  readonly chunks?: number;
}

/** What a scorer may return per passage: plain probabilities, a detailed record, or null for "could not score". */
export type ScorerPairResult = SignalProbabilities | DetailedPairScore | null;

/**
 * Anything that scores (query, passage) pairs. `id` identifies the model and every setting that
 * changes scores (it is part of cache keys): change it whenever scores may change.
 */
export interface Scorer {
  readonly id: string;
  /**
   * The signal names this scorer can produce (e.g. ['relevant']). When given, createGate refuses
   * a policy whose rules need a signal outside it; a pair may still lack one at run time (a router
   * that degraded it to a tier without that signal), which the rules handle as documented.
   */
  readonly signals?: readonly string[];
  /**
   * Passage metadata keys whose values change this scorer's scores (an LLM judge reads
   * `source_type`, say). Caches key on their values too; scorers that read no metadata leave it unset.
   */
  readonly metadataKeys?: readonly string[];
  /**
   * What the model declares for the gate (its operating points and score calibration), read from
   * the operating-points file shipped beside its files: `createGate({ scorer })` then decides by
   * its `balanced` point. Absent: the gate's absolute threshold unless a policy gives points.
   */
  readonly decisions?: ModelDecisions;
  score(query: string, passages: readonly Passage[], options?: ScoreOptions): Promise<ReadonlyArray<ScorerPairResult>>;
}

/** Tier labels used in results, stats and bench output. */
export type TierName = 'cache' | 'fast-path' | 'cross-encoder' | 'llm-judge' | (string & {});

/** Distinguishes a DetailedPairScore from a plain probability record. */
export function isDetailedPairScore(value: ScorerPairResult): value is DetailedPairScore {
  return value !== null && typeof (value as DetailedPairScore).probabilities === 'object';
}
