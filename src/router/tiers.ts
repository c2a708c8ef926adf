/**
 * TierSpec builders for the built-in tiers: the cross-encoder pool (slow, queued, cached, with the
 * batcher's own wait estimate), the embedding tier (a bi-encoder on the same pool design, between
 * the two in cost and quality) and the tree fast path (inline: the fallback of every pair).
 */
import { CROSS_ENCODER_TIER, createCrossEncoderScorer } from '../tiers/cross-encoder/scorer.js';
import { EMBEDDING_TIER } from '../tiers/embedding/types.js';
import { FAST_PATH_TIER } from '../tiers/fast-path/fast-path-scorer.js';
import type { CrossEncoder } from '../tiers/cross-encoder/cross-encoder.js';
import type { EmbeddingScorer } from '../tiers/embedding/types.js';
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
    pendingPairs: () => encoder.pendingPairs(),
  };
}

export interface EmbeddingTierOptions {
  /** Default 1.5: above the fast path (1), below the cross-encoder (2). */
  readonly quality?: number;
  readonly maxQueuedPairs?: number;
  /** Store results in the router's cache (default true). */
  readonly cache?: boolean;
}

/**
 * The embedding scorer as a router tier named 'embedding' (quality 1.5 by default: between the fast
 * path and the cross-encoder). Its wait estimate is the batcher's for that many texts, as if none
 * were in its vector cache (an upper bound: cached passages cost a dot product). In a router with
 * the fast path and a cross-encoder, `routing: { mode: 'cascade', cascadeTier: ['cross-encoder',
 * 'embedding'] }` is the staged cascade fast path → embedding → cross-encoder (the pairs nearest the
 * threshold to the cross-encoder as many as fit, the next nearest to this tier), `cascadeTier:
 * 'embedding'` a cascade to it alone, and budget routing falls back to it when the cross-encoder
 * does not fit the budget (docs/embedding.md, "In a router").
 */
export function embeddingTier(scorer: EmbeddingScorer, options: EmbeddingTierOptions = {}): TierSpec {
  return {
    name: EMBEDDING_TIER,
    scorer,
    quality: options.quality ?? 1.5,
    cache: options.cache ?? true,
    maxQueuedPairs: options.maxQueuedPairs,
    estimateMs: (pairs) => scorer.estimateWaitMs(pairs + 1),
    pendingPairs: () => scorer.pendingTexts(),
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
