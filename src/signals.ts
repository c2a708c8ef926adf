/**
 * The signal vocabulary. Every built-in tier names its probabilities with these words, and the
 * default policies read them, so a pair scored by any tier (or degraded from one to another) is
 * routed by the same rules.
 */

/** P(the passage is relevant to the query). Every relevance scorer emits it. */
export const RELEVANT = 'relevant';
/**
 * An ORDERING score in [0, 1]: higher = earlier in the returned list. Not a probability of
 * relevance and never a keep/drop input: scorers that rank better with a second per-pair score
 * than with `relevant` (the fast path's BM25 blend, src/tiers/fast-path/ranking-blend.ts) emit it, and
 * the gate orders what it returns by it while keeping or dropping on `relevant`. A [0, 1] value
 * (stored like every signal, validated by the cache) and a pure function of the pair, so a stored
 * result is re-ordered without rescoring.
 */
export const RANKING = 'ranking';
/** P(the passage states usable evidence for answering the query). */
export const EVIDENCE = 'evidence';
/** P(the passage contradicts a premise of the query). */
export const CONTRADICTS_PREMISE = 'contradicts_premise';
/** P(the passage tries to instruct the model: prompt injection). */
export const INJECTION = 'injection';

/** The four signals the default routing rules read. */
export const STANDARD_SIGNALS: readonly string[] = Object.freeze([RELEVANT, EVIDENCE, CONTRADICTS_PREMISE, INJECTION]);
