/**
 * Execution of a plan: the cache probe, inline scoring (the fallback of every pair), slow-tier
 * submissions through the cache with the call's AbortSignal and deadline, and collecting their
 * answers until they are all in or the answer time comes (the shared deadline race,
 * scoring/race-limits.ts). At the answer time pending work is cancelled and those pairs are
 * answered from the fallback, labelled and counted.
 */
import { AbortedError, DeadlineExceededError, InvalidArgumentError, OverloadedError } from '../errors.js';
import { isUsablePairResult, pairResultProblem } from '../scoring/pair-result.js';
import { ABORTED, TIMED_OUT } from '../scoring/race-limits.js';
import { raceAnswer } from './answer-race.js';
import type { CachedMark, CacheL2Use, CacheRequest } from '../cache/cache-port.js';
import type { Passage, ScoreOptions, ScorerPairResult, TierName } from '../types.js';
import { type InlineScores, labelled } from './answers.js';
import { CACHE_TIER, type TierState } from './config.js';
import type { Submission } from './cost-model.js';
import type { PairCacheState } from './plan.js';
import type { Counters } from './stats.js';
import type { DegradeReason, RoutedPairScore, RouterCache, RoutingMode } from './types.js';
import { type SpanAttributes, traced } from '../util/tracing.js';

/** The span of one call the router makes to a tier (src/util/tracing.ts). */
const TIER_SPAN = 'relevance-gate.tier';

function tierAttributes(tier: string, pairs: number): SpanAttributes {
  return { 'relevance_gate.tier': tier, 'relevance_gate.pairs': pairs };
}

/** Inline scoring without a deadline (background work, fixed mode without one). */
const NO_LIMITS: ScoreOptions = Object.freeze({});

/**
 * How the inline tier uses a shared L2: never a lease (it scores faster than a Redis round trip,
 * so waiting on another instance costs more than scoring), and no read of what the call's prefetch
 * has just read.
 */
const INLINE_L2: CacheL2Use = Object.freeze({ lease: false });
const INLINE_L2_PREFETCHED: CacheL2Use = Object.freeze({ read: false, lease: false });

/** The read ahead of planning gets at most 1 / PREFETCH_SHARE of the time left to the answer. */
const PREFETCH_SHARE = 4;

/** A pending piece of slow-tier work of one call. */
export interface Job {
  readonly tier: TierState;
  readonly indices: readonly number[];
  /** Label of this job's answers when it is a later cascade stage (else the call's `belowBest`). */
  readonly degraded?: DegradeReason;
  done: boolean;
}

/** One pair's answer from a submission: the score and whether the cache had it. */
export type JobAnswer = { readonly result: NonNullable<ScorerPairResult>; readonly cached: boolean } | undefined;

/** The state of one call the execution steps share. */
export interface CallState {
  readonly query: string;
  readonly passages: readonly Passage[];
  /** The call's answers, filled as they come; null = not (yet) answered. */
  readonly out: Array<RoutedPairScore | null>;
  readonly fallback: InlineScores;
  /** The counters the call started with (a concurrent resetStats does not split a call's counts). */
  readonly counters: Counters;
  /** Set once the call read the shared L2 ahead of planning (its inline scoring need not read it again). */
  prefetched?: boolean;
}

export interface ExecutorDeps {
  readonly cache: RouterCache | undefined;
  readonly clock: () => number;
  /** The best tier (pairs cancelled on it at the deadline are remembered for background fill). */
  readonly best: TierState;
  readonly inline: TierState | undefined;
  /** Remembers pairs answered below the best tier (background fill), when it is on. */
  readonly noteBelowBest: ((query: string, passages: readonly Passage[]) => void) | undefined;
}

/** The limits inline work of a call runs under: the caller's signal and the router's answer time. */
export function answerLimits(signal: AbortSignal | undefined, answerBy: number | undefined): ScoreOptions {
  if (signal === undefined && answerBy === undefined) return NO_LIMITS;
  return answerBy === undefined
    ? { signal }
    : signal === undefined
      ? { deadline: answerBy }
      : { signal, deadline: answerBy };
}

/** Runs a call's plan against the tiers and the cache. */
export class TierExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  /**
   * Cache probe, best tier first: fills `call.out` with hits of slow tiers (label 'cache') and
   * `call.fallback` with hits of the inline tier; returns each pair's cache state.
   */
  probeCache(call: CallState, tiers: readonly TierState[]): PairCacheState[] {
    const { query, passages, out, fallback } = call;
    const state = new Array<PairCacheState>(passages.length).fill('miss');
    const cache = this.deps.cache;
    if (cache === undefined) return state;
    let rest: number[] = Array.from({ length: passages.length }, (_, i) => i);
    for (const tier of tiers) {
      if (!tier.cacheable || rest.length === 0) continue;
      const subset = rest.length === passages.length ? passages : rest.map((i) => passages[i]);
      const hits = cache.lookup({
        scorerId: tier.spec.scorer.id,
        metadataKeys: tier.spec.scorer.metadataKeys,
        query,
        passages: subset,
      });
      const next: number[] = [];
      for (let j = 0; j < rest.length; j++) {
        const hit = hits[j];
        const i = rest[j];
        if (hit === undefined || pairResultProblem(hit) !== undefined) next.push(i);
        else if (tier.inline) {
          fallback.results[i] = hit;
          fallback.cached[i] = 1;
          state[i] = 'fallback';
          next.push(i);
        } else {
          out[i] = labelled(hit, CACHE_TIER, undefined, tier.name);
          state[i] = 'final';
        }
      }
      rest = next;
    }
    return state;
  }

  /**
   * Reads from the cache's shared L2 what the L1 probe left open, before the plan is made: for
   * each cacheable slow tier the pairs without a final answer, for the inline tier the pairs
   * without any (one MGET per tier, in parallel, bounded by the L2 timeout and skipped when the
   * answer time is nearer). Resolves with the probe's new state when something came, else the
   * old one. Undefined (nothing to await) without a shared cache or when every pair is final.
   */
  prefetchShared(
    call: CallState,
    tiers: readonly TierState[],
    state: PairCacheState[],
    answerBy: number | undefined,
  ): Promise<PairCacheState[]> | undefined {
    const cache = this.deps.cache;
    if (cache === undefined || cache.shared !== true || cache.prefetch === undefined) return undefined;
    const { query, passages } = call;
    const requests: CacheRequest[] = [];
    for (const tier of tiers) {
      if (!tier.cacheable) continue;
      const open: Passage[] = [];
      for (let i = 0; i < passages.length; i++)
        if (tier.inline ? state[i] === 'miss' : state[i] !== 'final') open.push(passages[i]);
      if (open.length === 0) continue;
      requests.push({
        scorerId: tier.spec.scorer.id,
        metadataKeys: tier.spec.scorer.metadataKeys,
        query,
        passages: open,
      });
    }
    if (requests.length === 0) return undefined;
    call.prefetched = true;
    // A read ahead is worth a small share of the call's time: it waits for Redis at most the L2
    // timeout and a quarter of the time left (less when the cache halves a short budget).
    const now = Date.now();
    const options = answerBy === undefined ? {} : { deadline: now + (answerBy - now) / PREFETCH_SHARE };
    return cache.prefetch(requests, options).then(
      (found) => (found > 0 ? this.probeCache(call, tiers) : state),
      () => state,
    );
  }

  /**
   * Scores the `indices` without a fallback yet on the inline tier into `call.fallback` (through
   * the cache when the tier is cacheable); failures leave holes (those pairs may end unscored).
   */
  async runInline(
    tier: TierState,
    call: CallState,
    allIndices: readonly number[],
    limits: ScoreOptions = NO_LIMITS,
  ): Promise<void> {
    const { query, passages, fallback } = call;
    const indices = allIndices.filter((i) => fallback.results[i] === undefined);
    if (indices.length === 0) return;
    const subset = indices.length === passages.length ? passages : indices.map((i) => passages[i]);
    const score = async (ps: readonly Passage[]): Promise<ReadonlyArray<ScorerPairResult>> => {
      const sub = tier.model.begin(ps.length, performance.now());
      try {
        const results = await traced(
          TIER_SPAN,
          () => tierAttributes(tier.name, ps.length),
          () => tier.spec.scorer.score(query, ps, limits),
        );
        if (!Array.isArray(results) || results.length !== ps.length)
          throw new InvalidArgumentError(`tier ${tier.name} returned a wrong result count`);
        tier.model.complete(sub, performance.now());
        return results.map((r) => (isUsablePairResult(r) ? r : null));
      } catch (error) {
        tier.model.fail(sub, performance.now());
        throw error;
      }
    };
    let results: ReadonlyArray<ScorerPairResult>;
    let cached: readonly CachedMark[] | undefined;
    try {
      const cache = this.deps.cache;
      if (cache !== undefined && tier.cacheable) {
        const resolution = await cache.resolve(
          {
            scorerId: tier.spec.scorer.id,
            metadataKeys: tier.spec.scorer.metadataKeys,
            query,
            passages: subset,
            // A slow tier run inline (fixed mode without an inline tier) reads and leases as usual.
            ...(tier.inline ? { l2: call.prefetched === true ? INLINE_L2_PREFETCHED : INLINE_L2 } : {}),
          },
          (miss) => score(miss.map((j) => subset[j])),
          limits,
        );
        results = resolution.results;
        cached = resolution.cached;
      } else results = await score(subset);
    } catch {
      return;
    }
    for (let j = 0; j < indices.length; j++) {
      const r = results[j];
      if (isUsablePairResult(r)) {
        fallback.results[indices[j]] = r;
        if (cached?.[j] === true) fallback.cached[indices[j]] = 1;
      }
    }
  }

  /** Answers `indices` from the inline tier's scores (null where there is none). */
  answerInline(call: CallState, indices: readonly number[], tier: TierName, reason: DegradeReason | undefined): void {
    for (const i of indices) call.out[i] = call.fallback.answer(i, tier, reason);
  }

  /**
   * Runs the slow-tier jobs and, alongside them, the inline fallback of their pairs; waits until
   * both are done or until answerBy, whichever is first. At answerBy nothing more is awaited: pairs
   * without a slow-tier answer get the inline fallback computed so far (labelled, counted as
   * degraded) or stay null, and late answers are dropped.
   */
  async runJobs(
    call: CallState,
    jobs: Job[],
    callerSignal: AbortSignal | undefined,
    answerBy: number | undefined,
    mode: RoutingMode,
    belowBest: DegradeReason | undefined,
  ): Promise<void> {
    const { query, passages, out, fallback } = call;
    const c = call.counters;
    const controller = new AbortController();
    const onCallerAbort = (): void => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    // Fixed routing has no fallback: pairs its tier does not answer stay null.
    const fallbackTier = mode === 'fixed' ? undefined : this.deps.inline;
    const pendingWork = jobs.map((job) => this.startJob(query, passages, job, controller.signal, answerBy));
    // The fallback is computed while the slow tier works, under the same answer time.
    const fallbackDone =
      fallbackTier === undefined
        ? Promise.resolve()
        : this.runInline(
            fallbackTier,
            call,
            jobs.flatMap((j) => j.indices),
            answerLimits(callerSignal, answerBy),
          );
    // Why each pair has no slow-tier answer; the fallback is applied once, when the call answers.
    const degraded = new Map<number, DegradeReason>();
    let firstError: unknown;
    let answered = 0;
    const collected = new Promise<void>((resolve) => {
      let open = jobs.length;
      if (open === 0) resolve();
      const settled = (): void => {
        if (--open === 0) resolve();
      };
      jobs.forEach((job, k) => {
        pendingWork[k].then(
          (results) => {
            if (job.done) return;
            job.done = true;
            let failed = 0;
            for (let j = 0; j < job.indices.length; j++) {
              const i = job.indices[j];
              const r = results[j];
              if (r === undefined) {
                failed++;
                degraded.set(i, 'error');
              } else {
                out[i] = r.cached
                  ? labelled(r.result, CACHE_TIER, undefined, job.tier.name)
                  : labelled(r.result, job.tier.name, job.degraded ?? belowBest);
                answered++;
              }
            }
            c.errorPairs += failed;
            settled();
          },
          (error: unknown) => {
            if (job.done) return;
            job.done = true;
            firstError ??= error;
            if (!controller.signal.aborted) {
              // The tier's own deadline timer may fire a moment before ours: same outcome.
              const reason: DegradeReason =
                error instanceof OverloadedError
                  ? 'shed'
                  : error instanceof DeadlineExceededError
                    ? 'deadline'
                    : 'error';
              const pending = job.indices.filter((i) => out[i] === null);
              if (reason === 'shed') c.shedPairs += pending.length;
              else if (reason === 'deadline') {
                c.deadlinePairs += pending.length;
                c.cancelledPairs += pending.length;
              } else c.errorPairs += pending.length;
              for (const i of pending) degraded.set(i, reason);
            }
            settled();
          },
        );
      });
    });
    // The fallback is waited for only when some pair needs it.
    const outcome = await raceAnswer(
      collected.then(() => (degraded.size > 0 ? fallbackDone : undefined)),
      callerSignal,
      answerBy,
      this.deps.clock,
    );
    if (outcome === TIMED_OUT) {
      // Answer time: stop waiting, cancel what has not started, answer from the fallback.
      for (const job of jobs) {
        if (job.done) continue;
        job.done = true;
        const pending = job.indices.filter((i) => out[i] === null);
        c.deadlinePairs += pending.length;
        c.cancelledPairs += pending.length;
        for (const i of pending) degraded.set(i, 'deadline');
        if (job.tier === this.deps.best)
          this.deps.noteBelowBest?.(
            query,
            pending.map((i) => passages[i]),
          );
      }
      controller.abort(new DeadlineExceededError('router deadline'));
    }
    callerSignal?.removeEventListener('abort', onCallerAbort);
    if (outcome === ABORTED || callerSignal?.aborted)
      throw new AbortedError('the operation was aborted', { cause: callerSignal?.reason });
    if (fallbackTier !== undefined)
      for (const [i, reason] of degraded) if (out[i] === null) out[i] = fallback.answer(i, fallbackTier.name, reason);
    // Fixed routing with nothing to show: surface the tier's error to the caller (the gate records it).
    if (mode === 'fixed' && firstError !== undefined && answered === 0 && out.every((r) => r === null))
      throw firstError;
  }

  /**
   * Starts one job: through the cache (single-flight, store) when the tier is cacheable, else
   * straight to the tier. Resolves per index to { result, cached } or undefined (invalid result).
   */
  startJob(
    query: string,
    passages: readonly Passage[],
    job: Job,
    signal: AbortSignal,
    answerBy: number | undefined,
  ): Promise<JobAnswer[]> {
    const tier = job.tier;
    const subset = job.indices.map((i) => passages[i]);
    const options = answerBy === undefined ? { signal } : { signal, deadline: answerBy };
    const measured = (ps: readonly Passage[]): Promise<ReadonlyArray<ScorerPairResult>> => {
      const sub: Submission = tier.model.begin(ps.length, performance.now());
      // A synchronous throw of the scorer comes back as the rejection.
      const pending = traced(
        TIER_SPAN,
        () => tierAttributes(tier.name, ps.length),
        () => tier.spec.scorer.score(query, ps, options),
      );
      return pending.then(
        (results) => {
          if (!Array.isArray(results) || results.length !== ps.length) {
            tier.model.fail(sub, performance.now());
            throw new InvalidArgumentError(
              `tier ${tier.name} returned ${Array.isArray(results) ? results.length : typeof results} results for ${ps.length} passages`,
            );
          }
          tier.model.complete(sub, performance.now());
          // Invalid results go back as null so the cache never stores them.
          return results.map((r) => (isUsablePairResult(r) ? r : null));
        },
        (error: unknown) => {
          tier.model.fail(sub, performance.now());
          throw error;
        },
      );
    };
    const cache = this.deps.cache;
    if (cache !== undefined && tier.cacheable) {
      return cache
        .resolve(
          { scorerId: tier.spec.scorer.id, metadataKeys: tier.spec.scorer.metadataKeys, query, passages: subset },
          (missIndices) => measured(missIndices.map((j) => subset[j])),
          options,
        )
        .then((resolution) =>
          resolution.results.map((r, j) =>
            isUsablePairResult(r) ? { result: r, cached: resolution.cached[j] === true } : undefined,
          ),
        );
    }
    return measured(subset).then((results) =>
      results.map((r) => (r === null ? undefined : { result: r, cached: false })),
    );
  }
}
