/**
 * The signal vocabulary. Every built-in tier names its probabilities with these words, and the
 * default policies read them, so a pair scored by any tier (or degraded from one to another) is
 * routed by the same rules.
 */

/** P(the passage is relevant to the query). Every relevance scorer emits it. */
export const RELEVANT = 'relevant';
/** P(the passage states usable evidence for answering the query). */
export const EVIDENCE = 'evidence';
/** P(the passage contradicts a premise of the query). */
export const CONTRADICTS_PREMISE = 'contradicts_premise';
/** P(the passage tries to instruct the model: prompt injection). */
export const INJECTION = 'injection';

/** The four signals the default routing rules read. */
export const STANDARD_SIGNALS: readonly string[] = Object.freeze([RELEVANT, EVIDENCE, CONTRADICTS_PREMISE, INJECTION]);
