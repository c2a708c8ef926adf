/** The tier router's public surface (re-exported from the package root). */
export {
  createRouter,
  DEFAULT_BUDGET_MS,
  DEFAULT_RETURN_MARGIN_MS,
  DEFAULT_HEADROOM,
  DEFAULT_MAX_QUEUED_PAIRS,
  DEFAULT_PROBE_INTERVAL_MS,
  CACHE_TIER,
} from './router.js';
export { crossEncoderTier, embeddingTier, fastPathTier, type EmbeddingTierOptions } from './tiers.js';
export { orderByThresholdDistance, largestFitting } from './select.js';
export type { BackgroundFillOptions } from './background-fill.js';
export type { AnswerLagOptions } from './answer-lag.js';
export type {
  RoutingMode,
  RoutingOptions,
  TierSpec,
  RouterCache,
  RouterConfig,
  RouterScoreOptions,
  DegradeReason,
  RoutedPairScore,
  TierLoadStats,
  RouterStats,
  RouterWarmUp,
  Router,
} from './types.js';
