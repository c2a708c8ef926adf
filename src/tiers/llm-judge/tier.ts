/**
 * The judge as a router tier: the most expensive rung of the ladder. Its cost model for the router
 * is the judge's own prediction (estimateMs: pool backlog, measured latency, rate limits) until the
 * router has measured it, and its pending pairs (every caller's) count as work ahead.
 *
 * The returned object has the shape of the router's TierSpec (src/router/types.ts); it is declared
 * here structurally because a tier does not import the router.
 */
import type { LlmJudge } from './judge.js';

export interface LlmJudgeTierOptions {
  /** Tier name. Default the judge's tierName ('llm-judge'). */
  readonly name?: string;
  /** Higher is better; must exceed the other tiers' (fast-path 1, cross-encoder 2 by default). Default 3. */
  readonly quality?: number;
  /** Pairs the router keeps outstanding on the judge at most. Default: 64 × concurrency / requests per pair. */
  readonly maxQueuedPairs?: number;
  /** Store judge results in the router's cache (default true: a judged pair is never paid for twice). */
  readonly cache?: boolean;
}

/** Structurally a router TierSpec. */
export interface LlmJudgeTierSpec {
  readonly name: string;
  readonly scorer: LlmJudge;
  readonly quality: number;
  readonly cache: boolean;
  readonly maxQueuedPairs: number;
  readonly estimateMs: (pairs: number) => number;
  readonly pendingPairs: () => number;
  readonly initialMsPerPair: number;
}

export function llmJudgeTier(judge: LlmJudge, options: LlmJudgeTierOptions = {}): LlmJudgeTierSpec {
  const perPairMs = (judge.estimateMs(judge.concurrency) / judge.concurrency) * Math.max(1, judge.requestsPerPair);
  return {
    name: options.name ?? judge.tierName,
    scorer: judge,
    quality: options.quality ?? 3,
    cache: options.cache ?? true,
    maxQueuedPairs:
      options.maxQueuedPairs ??
      Math.max(1, Math.floor((64 * judge.concurrency) / Math.max(1e-9, judge.requestsPerPair))),
    estimateMs: (pairs) => judge.estimateMs(pairs),
    pendingPairs: () => judge.pendingPairs(),
    initialMsPerPair: Number.isFinite(perPairMs) && perPairMs > 0 ? perPairMs : 50,
  };
}
