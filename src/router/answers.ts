/**
 * How the router answers a pair: a valid score re-labelled with the tier that produced it (and,
 * for cache hits, the tier it came from), and the inline tier's scores kept as every pair's fallback.
 */
import { isDetailedPairScore, type ScorerPairResult, type TierName } from '../types.js';
import { CACHE_TIER } from './config.js';
import type { DegradeReason, RoutedPairScore } from './types.js';

/** A valid scorer result re-labelled with the tier that produced it. */
export function labelled(
  result: NonNullable<ScorerPairResult>,
  tier: TierName,
  degraded?: DegradeReason,
  sourceTier?: TierName,
): RoutedPairScore {
  const detailed = isDetailedPairScore(result);
  const out: { -readonly [K in keyof RoutedPairScore]: RoutedPairScore[K] } = {
    probabilities: detailed ? result.probabilities : (result as Readonly<Record<string, number>>),
    tier,
  };
  if (detailed && result.raw !== undefined) out.raw = result.raw;
  if (sourceTier !== undefined) out.sourceTier = sourceTier;
  if (degraded !== undefined) out.degraded = degraded;
  return out;
}

/** The inline tier's score per pair (fresh or from the cache): the fallback of every pair. */
export class InlineScores {
  readonly results: Array<NonNullable<ScorerPairResult> | undefined>;
  readonly cached: Uint8Array;

  constructor(n: number) {
    this.results = new Array<NonNullable<ScorerPairResult> | undefined>(n);
    this.cached = new Uint8Array(n);
  }

  /** The pair's answer from the inline tier: labelled 'cache' when it came from the cache. */
  answer(i: number, tier: TierName, reason: DegradeReason | undefined): RoutedPairScore | null {
    const r = this.results[i];
    if (r === undefined) return null;
    return this.cached[i] === 1 ? labelled(r, CACHE_TIER, reason, tier) : labelled(r, tier, reason);
  }
}
