/**
 * Calls the scorer (through the cache when there is one) for a slice of a request, bounded by the
 * call's deadline and AbortSignal, and normalises every answer onto the working items. Anything
 * not a valid score marks the pair unscored with a reason; nothing here decides a route.
 */
import type {
  CacheApproximateUse,
  CachedMark,
  CacheResolution,
  PairScoreCache,
  ScoreMisses,
} from '../cache/cache-port.js';
import { AbortedError, DeadlineExceededError, DisposedError, InvalidArgumentError } from '../errors.js';
import { isCutByDeadline, pairResultProblem } from '../scoring/pair-result.js';
import { CACHE_TIER } from '../router/config.js';
import { ABORTED, type RaceOutcome, raceLimits, TIMED_OUT } from '../scoring/race-limits.js';
import type { Passage, Scorer, ScoreOptions, ScorerPairResult, SignalProbabilities } from '../types.js';
import { markUnscored, type WorkingItem } from './decide.js';
import type { UnscoredReason } from './types.js';

export interface ScoringContext {
  readonly scorer: Scorer;
  readonly cache: PairScoreCache | undefined;
  readonly query: string;
  readonly options: ScoreOptions;
  readonly now: () => number;
  /** Tier label for results that name none. */
  readonly defaultTier: string;
  /** The call's part in approximate reuse, when its cache has that (else undefined). */
  readonly approximate: CacheApproximateUse | undefined;
  /** Failure messages of this call; created on first failure. */
  errors: string[] | undefined;
}

function recordError(ctx: ScoringContext, message: string): void {
  if (ctx.errors === undefined) ctx.errors = [message];
  else ctx.errors.push(message);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * A closed scorer or cache is a programming error, not a scoring failure: the call rejects with the
 * DisposedError instead of answering every pair fail-closed (which would look like "nothing relevant").
 */
function throwIfDisposed(error: unknown): void {
  if (error instanceof DisposedError) throw error;
}

/** A scorer that honours the deadline/signal itself rejects with these; they are not scorer bugs. */
function failureReason(error: unknown, otherwise: UnscoredReason): UnscoredReason {
  if (error instanceof DeadlineExceededError) return 'timeout';
  if (error instanceof AbortedError || (error instanceof Error && error.name === 'AbortError')) return 'aborted';
  if (error instanceof Error && error.name === 'TimeoutError') return 'timeout';
  return otherwise;
}

function applyResult(
  item: WorkingItem,
  result: ScorerPairResult | undefined,
  cached: CachedMark,
  defaultTier: string,
): void {
  item.cached = cached;
  const problem = pairResultProblem(result);
  if (problem !== undefined) {
    markUnscored(item, problem);
    return;
  }
  const value = result as NonNullable<ScorerPairResult>;
  const probabilities = (value as { probabilities?: unknown }).probabilities;
  if (typeof probabilities === 'object' && probabilities !== null) {
    item.signals = probabilities as SignalProbabilities;
    item.raw = (value as { raw?: Readonly<Record<string, number>> }).raw;
    item.tier = (value as { tier?: string }).tier ?? defaultTier;
    // A router holds the cache itself (the gate in front of it has none) and labels the pairs it
    // answered from it, L1 or Redis, with the cache tier: those are cached answers too.
    if (item.tier === CACHE_TIER) item.cached = true;
  } else {
    item.signals = value as SignalProbabilities;
    item.tier = defaultTier;
  }
  item.reason = undefined;
}

function markRange(items: WorkingItem[], start: number, end: number, reason: UnscoredReason): void {
  for (let i = start; i < end; i++) markUnscored(items[i], reason);
}

/**
 * The gate's deadline timer fired with the scorer's answer still pending. After an event-loop
 * stall several expired timers run in one turn, and Node runs them grouped by duration, not
 * strictly by expiry: a router's own answer timer (set to answer before this deadline) may run
 * just after ours. It answers from what it has within the same turn, so give it that turn
 * (setImmediate runs after every expired timer) and take its answer rather than nothing; the
 * call is late either way, but its pairs are scored.
 */
async function answerInSameTurn<T>(pending: Promise<T>): Promise<T | undefined> {
  let answer: T | undefined;
  pending.then(
    (value) => {
      answer = value;
    },
    () => undefined,
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return answer;
}

/** The shared deadline race, then, when it timed out, the answer given in the same turn (above). */
async function raceDeadline<T>(
  pending: Promise<T>,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
  now: () => number,
): Promise<RaceOutcome<T>> {
  const outcome = await raceLimits(pending, signal, deadline, now);
  return outcome === TIMED_OUT ? ((await answerInSameTurn(pending)) ?? TIMED_OUT) : outcome;
}

/** Calls scorer.score, turning a synchronous throw into a rejection. */
function callScorer(
  scorer: Scorer,
  query: string,
  passages: readonly Passage[],
  options: ScoreOptions,
): Promise<ReadonlyArray<ScorerPairResult>> {
  try {
    return Promise.resolve(scorer.score(query, passages, options));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Scores items[start, end) (whose passages are passages[start, end)). Pairs still pending at the
 * deadline are marked 'timeout', at abort 'aborted'; the late answer, if any, is ignored.
 */
export async function scoreRange(
  ctx: ScoringContext,
  passages: readonly Passage[],
  items: WorkingItem[],
  start: number,
  end: number,
): Promise<void> {
  if (start >= end) return;
  const { signal, deadline } = ctx.options;
  if (signal?.aborted) return markRange(items, start, end, 'aborted');
  if (deadline !== undefined && ctx.now() >= deadline) return markRange(items, start, end, 'timeout');
  const slice = start === 0 && end === passages.length ? passages : passages.slice(start, end);
  const count = end - start;

  if (ctx.cache === undefined) {
    const pending = callScorer(ctx.scorer, ctx.query, slice, ctx.options);
    let results: RaceOutcome<ReadonlyArray<ScorerPairResult>>;
    try {
      if (signal === undefined && deadline === undefined) results = await pending;
      else {
        pending.catch(() => undefined); // a rejection after the deadline must not go unhandled
        results = await raceDeadline(pending, signal, deadline, ctx.now);
      }
    } catch (error) {
      throwIfDisposed(error);
      const reason = failureReason(error, 'scorer-error');
      if (reason === 'scorer-error') recordError(ctx, `scorer ${ctx.scorer.id} failed: ${describe(error)}`);
      return markRange(items, start, end, reason);
    }
    if (results === TIMED_OUT) return markRange(items, start, end, 'timeout');
    if (results === ABORTED) return markRange(items, start, end, 'aborted');
    if (!Array.isArray(results) || results.length !== count) {
      recordError(
        ctx,
        `scorer ${ctx.scorer.id} returned ${Array.isArray(results) ? results.length : typeof results} results for ${count} passages`,
      );
      return markRange(items, start, end, 'scorer-error');
    }
    for (let i = 0; i < count; i++) applyResult(items[start + i], results[i], false, ctx.defaultTier);
    nullsPastDeadline(ctx, items, start, end, isCutByDeadline(results));
    return;
  }

  // Through the cache: only misses reach the scorer. Misses are validated here, before the cache
  // can store them, and invalid ones are handed back as null (the cache never stores null).
  let missReasons: Map<number, UnscoredReason> | undefined;
  const scoreMisses: ScoreMisses = async (missIndices, missOptions) => {
    for (const i of missIndices) {
      if (!Number.isInteger(i) || i < 0 || i >= count)
        throw new InvalidArgumentError(`cache asked to score miss index ${String(i)} of ${count} passages`);
    }
    const missPassages = missIndices.map((i) => slice[i]);
    const nulls = (reason: UnscoredReason): ScorerPairResult[] => {
      missReasons ??= new Map();
      for (const i of missIndices) missReasons.set(i, reason);
      return missIndices.map(() => null);
    };
    let results: ReadonlyArray<ScorerPairResult>;
    try {
      results = await callScorer(ctx.scorer, ctx.query, missPassages, missOptions);
    } catch (error) {
      throwIfDisposed(error);
      const reason = failureReason(error, 'scorer-error');
      if (reason === 'scorer-error') recordError(ctx, `scorer ${ctx.scorer.id} failed: ${describe(error)}`);
      return nulls(reason);
    }
    if (!Array.isArray(results) || results.length !== missIndices.length) {
      recordError(
        ctx,
        `scorer ${ctx.scorer.id} returned ${Array.isArray(results) ? results.length : typeof results} results for ${missIndices.length} passages`,
      );
      return nulls('scorer-error');
    }
    const clean: ScorerPairResult[] = new Array(results.length);
    const cutByDeadline = isCutByDeadline(results);
    for (let j = 0; j < results.length; j++) {
      if (cutByDeadline && results[j] === null) {
        clean[j] = null;
        missReasons ??= new Map();
        missReasons.set(missIndices[j], 'timeout');
        continue;
      }
      const problem = pairResultProblem(results[j]);
      if (problem === undefined) clean[j] = results[j];
      else {
        clean[j] = null;
        missReasons ??= new Map();
        missReasons.set(missIndices[j], problem);
      }
    }
    return clean;
  };
  let resolution: RaceOutcome<CacheResolution>;
  try {
    const pending = ctx.cache.resolve(
      {
        scorerId: ctx.scorer.id,
        metadataKeys: ctx.scorer.metadataKeys,
        query: ctx.query,
        passages: slice,
        approximate: ctx.approximate,
      },
      scoreMisses,
      ctx.options,
    );
    if (signal === undefined && deadline === undefined) resolution = await pending;
    else {
      pending.catch(() => undefined);
      resolution = await raceDeadline(pending, signal, deadline, ctx.now);
    }
  } catch (error) {
    throwIfDisposed(error);
    const reason = failureReason(error, 'cache-error');
    if (reason === 'cache-error') recordError(ctx, `cache failed: ${describe(error)}`);
    return markRange(items, start, end, reason);
  }
  if (resolution === TIMED_OUT) return markRange(items, start, end, 'timeout');
  if (resolution === ABORTED) return markRange(items, start, end, 'aborted');
  const results = (resolution as { results?: unknown } | null)?.results;
  const cached = (resolution as { cached?: unknown } | null)?.cached;
  if (!Array.isArray(results) || !Array.isArray(cached) || results.length !== count || cached.length !== count) {
    recordError(ctx, `cache answered malformed resolution for ${count} passages`);
    return markRange(items, start, end, 'cache-error');
  }
  for (let i = 0; i < count; i++) {
    const item = items[start + i];
    const mark: unknown = cached[i];
    applyResult(
      item,
      results[i] as ScorerPairResult,
      mark === true || mark === 'approximate' ? mark : false,
      ctx.defaultTier,
    );
    // A null from the cache: use the reason our scoreMisses recorded (if this call scored it).
    if (item.reason === 'scorer-null' && missReasons?.has(i)) item.reason = missReasons.get(i);
  }
  nullsPastDeadline(ctx, items, start, end);
}

/**
 * A scorer that honours the deadline answers the pairs it had no time for with null (the fast
 * path's slices): when the answer came at or after the deadline, those pairs ran out of time.
 */
function nullsPastDeadline(
  ctx: ScoringContext,
  items: WorkingItem[],
  start: number,
  end: number,
  cutByDeadline = false,
): void {
  const deadline = ctx.options.deadline;
  if (deadline === undefined || (!cutByDeadline && ctx.now() < deadline)) return;
  for (let i = start; i < end; i++) if (items[i].reason === 'scorer-null') items[i].reason = 'timeout';
}
