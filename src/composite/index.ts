/** One tier assembled from several models (signals merged per pair, cached per member). */
export {
  createCompositeScorer,
  DEFAULT_COMPOSITE_RETURN_MARGIN_MS,
  type CompositeScorer,
  type CompositeScorerOptions,
  type CompositeStats,
  type CompositeMemberStats,
  type CompositeMemberInfo,
} from './composite-scorer.js';
export type { CompositeMember } from './members.js';
export { crossEncoderMember } from './cross-encoder-member.js';
export { compositeTierLabel } from './merge.js';
export { CompositeConfigError, CompositeMemberResultError } from './errors.js';
