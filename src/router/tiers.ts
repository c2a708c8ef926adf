/**
 * TierSpec builders for the built-in tiers: the cross-encoder pool (slow, queued, cached, with the
 * batcher's own wait estimate) and the tree fast path (inline: the fallback of every pair).
 */
import { CROSS_ENCODER_TIER, createCrossEncoderScorer } from '../tiers/cross-encoder/scorer.js';
import { FAST_PATH_TIER } from '../tiers/fast-path/fast-path-scorer.js';
import type { CrossEncoder } from '../tiers/cross-encoder/cross-encoder.js';
import type { Scorer } from '../types.js';
import type { TierSpec } from './types.js';

export interface CrossEncoderTierOptions {
  readonly quality?: number;
  readonly maxQueuedPairs?: number;
  /** Store results in the router's cache (default true). */
  readonly cache?: boolean;
}

/** The cross-encoder as a router tier named 'cross-encoder' (quality 2 by default). */
export function crossEncoderTier(encoder: CrossEncoder, options: CrossEncoderTierOptions = {}): TierSpec {
  return {
    name: CROSS_ENCODER_TIER,
    scorer: createCrossEncoderScorer(encoder),
    quality: options.quality ?? 2,
    cache: options.cache ?? true,
    maxQueuedPairs: options.maxQueuedPairs,
    estimateMs: (pairs) => encoder.estimateWaitMs(pairs),
    pendingPairs: () => {
      const s = encoder.stats();
      return s.tokenizingPairs + s.queuedPairs + s.inFlightPairs;
    },
  };
}

export interface FastPathTierOptions {
  readonly quality?: number;
  /**
   * Store fast-path results in the router's cache too (default true: lexical features of ~250-word
   * passages cost ~20 µs per pair, a cache lookup ~1 µs; cached fast-path scores are only ever a
   * fallback, a pair can still be upgraded to the cross-encoder).
   */
  readonly cache?: boolean;
}

/** The tree fast path as the inline router tier named 'fast-path' (quality 1 by default). */
export function fastPathTier(scorer: Scorer, options: FastPathTierOptions = {}): TierSpec {
  return { name: FAST_PATH_TIER, scorer, quality: options.quality ?? 1, inline: true, cache: options.cache ?? true };
}
