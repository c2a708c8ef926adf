/** Shared fixtures for the score-cache tests: a deterministic, call-counting scoreMisses. */
import { afterEach } from 'vitest';
import type { ScoreMisses } from '../../src/cache/cache-port.js';
import { createScoreCache, type ScoreCache } from '../../src/cache/score-cache.js';
import type { Passage, ScoreOptions, ScorerPairResult } from '../../src/types.js';

/** A probability that depends on exactly (query, title, text), so a wrong pair is visible. */
export function expectedScore(query: string, passage: Passage): number {
  let h = 2166136261;
  const s = `${query}\u0001${passage.title ?? ''}\u0001${passage.text}`;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) / 2 ** 32;
}

export interface ScoringLog {
  /** One entry per scoreMisses call: the passage ids it was asked for. */
  readonly calls: string[][];
  readonly scoredPairs: () => number;
}

export interface MissScorerOptions {
  /** Delay before answering (ms). */
  readonly delayMs?: number;
  /** Called before answering; may throw or return a replacement result list. */
  readonly intercept?: (
    ids: string[],
    options: ScoreOptions,
  ) => ScorerPairResult[] | undefined | Promise<ScorerPairResult[] | undefined>;
  /** Score query for a different model version: a different function of the pair. */
  readonly salt?: string;
}

/** A scoreMisses for one request, logging what it scored. */
export function missScorer(
  query: string,
  passages: readonly Passage[],
  log: { calls: string[][] },
  options: MissScorerOptions = {},
): ScoreMisses {
  return async (missIndices, scoreOptions) => {
    const ids = missIndices.map((i) => passages[i].id);
    log.calls.push(ids);
    if (options.delayMs !== undefined) await sleep(options.delayMs, scoreOptions.signal);
    const replaced = await options.intercept?.(ids, scoreOptions);
    if (replaced !== undefined) return replaced;
    return missIndices.map((i) => ({
      probabilities: { relevant: expectedScore((options.salt ?? '') + query, passages[i]) },
      raw: { relevant: 0.5 },
      tier: 'test',
    }));
  };
}

export function newLog(): { calls: string[][]; scoredPairs: () => number } {
  const calls: string[][] = [];
  return { calls, scoredPairs: () => calls.reduce((n, c) => n + c.length, 0) };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('aborted'));
      },
      { once: true },
    );
  });
}

export function passagesOf(
  n: number,
  prefix = 'p',
  textOf: (i: number) => string = (i) => `passage number ${i} about topic ${i % 7}`,
): Passage[] {
  return Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, text: textOf(i) }));
}

export function relevanceOf(result: ScorerPairResult): number | undefined {
  if (result === null) return undefined;
  const probabilities =
    (result as { probabilities?: Record<string, number> }).probabilities ?? (result as Record<string, number>);
  return probabilities.relevant;
}

type CacheOptions = Parameters<typeof createScoreCache>[0];

/**
 * Returns a cache factory whose caches are all closed after each test (call it at module level,
 * where vitest hooks may be registered).
 */
export function useCaches(defaults: CacheOptions = { maxBytes: 1 << 20 }): (options?: CacheOptions) => ScoreCache {
  let caches: ScoreCache[] = [];
  afterEach(async () => {
    await Promise.all(caches.map((c) => c.close()));
    caches = [];
  });
  return (options = defaults) => {
    const c = createScoreCache(options);
    caches.push(c);
    return c;
  };
}
