/**
 * A cross-encoder as a composite member: its Scorer adapter, declaring the labels the encoder
 * produces (its contract's signal names: config.json's labels for a labelled head, `relevant` for
 * a single-logit reranker), so the member's signal map can be checked at construction.
 * The pair layout (query-passage, passage-query for NLI, the passage alone for a classifier) is
 * the encoder's own option, chosen when it is created.
 */
import type { CrossEncoder } from '../tiers/cross-encoder/cross-encoder.js';
import { createCrossEncoderScorer } from '../tiers/cross-encoder/scorer.js';
import type { Scorer } from '../types.js';
import type { CompositeMember } from './members.js';

export function crossEncoderMember(
  encoder: CrossEncoder,
  signals: Readonly<Record<string, string>>,
  options: { readonly id?: string } = {},
): CompositeMember {
  const adapter = createCrossEncoderScorer(encoder);
  const declared = adapter.signals ?? encoder.info.contract.signalNames;
  const scorer: Scorer = {
    id: adapter.id,
    signals: Object.freeze([...declared]),
    score: (query, passages, scoreOptions) => adapter.score(query, passages, scoreOptions),
  };
  return options.id === undefined ? { scorer, signals } : { scorer, signals, id: options.id };
}
