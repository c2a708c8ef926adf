/**
 * The tier router: a Scorer that decides, per call and under the current load, which tier scores
 * which pairs so that the call's budget holds, and answers every pair with the best score
 * available when the budget runs out. See docs/router.md for the design and its guarantees.
 *
 * Life of a call (each step in its own module):
 *   1. cache probe, best tier first (execute.ts): a pair cached from the cross-encoder is never
 *      rescored, and a cached cross-encoder score wins over a cached fast-path one; with a shared
 *      L2 (Redis), what L1 lacks is read from it before planning (other instances' scores);
 *   2. plan (plan.ts, a pure function) for fixed / budget / cascade from the live cost models
 *      (cost-model.ts); in cascade mode the inline tier scores the open pairs first (the plan
 *      reads their relevance);
 *   3. slow-tier work is submitted with an AbortSignal and the call's deadline; the inline fast
 *      path provides a fallback score for every pair sent to a slow tier (execute.ts);
 *   4. at `deadline − returnMarginMs` the router stops waiting, whichever phase it is in (inline
 *      scoring, fallback or slow-tier work: answer-race.ts): pending slow-tier work is cancelled
 *      (the batcher drops pairs not yet started) and those pairs are answered from the fallback
 *      computed so far, labelled with the tier that produced it and counted as degraded
 *      (stats.ts); nothing still running is awaited, and its late results are dropped;
 *   5. idle-time refinement of what was answered below the best tier (background-fill.ts).
 */
import { AbortedError, DeadlineExceededError, InvalidArgumentError } from '../errors.js';
import { positiveNumber } from '../util/validate-options.js';
import { isDetailedPairScore, type Passage, type Scorer, type ScorerPairResult, type TierName } from '../types.js';
import { InlineScores } from './answers.js';
import { BackgroundFill, BackgroundFillQueue } from './background-fill.js';
import {
  type ResolvedConfig,
  type ResolvedRouting,
  resolveConfig,
  resolveRouting,
  signalUnion,
  type TierState,
} from './config.js';
import { ABORTED, TIMED_OUT } from '../scoring/race-limits.js';
import { AnswerLag } from './answer-lag.js';
import { raceAnswer } from './answer-race.js';
import { answerLimits, type CallState, type Job, TierExecutor } from './execute.js';
import { openPairs, type PlanTier, planRouting } from './plan.js';
import { readRelevance } from './select.js';
import { type Counters, newCounters, recordAnswers, snapshotStats } from './stats.js';
import type {
  RoutedPairScore,
  Router,
  RouterConfig,
  RouterScoreOptions,
  RouterStats,
  RouterWarmUp,
  RoutingOptions,
} from './types.js';

export {
  CACHE_TIER,
  DEFAULT_BUDGET_MS,
  DEFAULT_HEADROOM,
  DEFAULT_MAX_QUEUED_PAIRS,
  DEFAULT_PROBE_INTERVAL_MS,
  DEFAULT_RETURN_MARGIN_MS,
} from './config.js';

const WARM_UP_QUERY = 'how does the boundary layer of a swept wing change at high speed';
/** Eight passages of about 60 words: the shape of a real request, so the tiers allocate for it. */
const WARM_UP_PASSAGES: readonly Passage[] = Object.freeze(
  Array.from({ length: 8 }, (_, i) =>
    Object.freeze({
      id: `warm-up-${i}`,
      text: `Passage ${i}: measurements of the boundary layer on a swept wing show transition moving toward the leading edge as the speed rises; crossflow instability dominates at high sweep angles, while attachment line contamination and surface roughness trigger turbulence earlier. The same wind tunnel runs report skin friction, heat transfer and pressure distributions for each configuration tested.`,
    }),
  ),
);

/** A tier's warm-up batch is given this long at most (by default). */
const WARM_UP_TIMEOUT_MS = 30_000;

/** A background batch never waits long: a stuck tier must not pin it (or its pairs) forever. */
const BACKGROUND_DEADLINE_MS = 2000;

class RouterImpl implements Router {
  readonly id: string;
  readonly routing: RoutingOptions;
  readonly signals: readonly string[] | undefined;
  private readonly config: ResolvedConfig;
  private readonly executor: TierExecutor;
  private readonly refill: BackgroundFill | undefined;
  private counters: Counters = newCounters();
  private readonly lag: AnswerLag | undefined;

  constructor(config: ResolvedConfig) {
    this.config = config;
    this.id = config.id;
    this.routing = config.routing;
    this.signals = config.signals;
    this.lag = config.answerLag === undefined ? undefined : new AnswerLag(config.answerLag, config.clock);
    const best = config.ranked[0];
    this.refill =
      config.backgroundFill === undefined || config.cache === undefined
        ? undefined
        : this.backgroundFill(new BackgroundFillQueue(config.backgroundFill), best, config.cache);
    this.executor = new TierExecutor({
      cache: config.cache,
      clock: config.clock,
      best,
      inline: config.inline,
      noteBelowBest: this.refill === undefined ? undefined : (query, ps) => this.refill?.note(query, ps),
    });
  }

  private backgroundFill(
    queue: BackgroundFillQueue,
    best: TierState,
    cache: NonNullable<ResolvedConfig['cache']>,
  ): BackgroundFill {
    return new BackgroundFill(queue, {
      bestTierBusy: () => best.model.outstanding > 0 || (best.spec.pendingPairs?.() ?? 0) > 0,
      uncached: (query, ps) => {
        const hits = cache.lookup({ scorerId: best.spec.scorer.id, query, passages: ps });
        return ps.filter((_, j) => hits[j] === undefined);
      },
      submit: (query, ps) => {
        const job: Job = { tier: best, indices: ps.map((_, i) => i), done: false };
        const deadline = this.config.clock() + BACKGROUND_DEADLINE_MS;
        return this.executor.startJob(query, ps, job, new AbortController().signal, deadline);
      },
      counted: (pairs) => {
        this.counters.backgroundSubmissions++;
        this.counters.backgroundPairs += pairs;
      },
    });
  }

  view(routing: Partial<RoutingOptions>): Scorer {
    const resolved = resolveRouting(this.config, this.config.defaultRouting, routing);
    // A fixed view answers from one tier (and that tier's cache entries) only.
    const signals = resolved.mode === 'fixed' ? signalUnion([resolved.fixed]) : this.signals;
    return {
      id: this.id,
      signals,
      score: (query, passages, options) => this.scoreWith(query, passages, options ?? {}, resolved),
    };
  }

  predictMs(tier: TierName, pairs: number): number {
    const state = this.config.byName.get(tier);
    if (state === undefined) throw new InvalidArgumentError(`unknown tier ${JSON.stringify(tier)}`);
    return state.model.predict(pairs);
  }

  score(
    query: string,
    passages: readonly Passage[],
    options: RouterScoreOptions = {},
  ): Promise<ReadonlyArray<ScorerPairResult>> {
    const routing =
      options.routing === undefined
        ? this.config.defaultRouting
        : resolveRouting(this.config, this.config.defaultRouting, options.routing);
    return this.scoreWith(query, passages, options, routing);
  }

  private async scoreWith(
    query: string,
    passages: readonly Passage[],
    options: RouterScoreOptions,
    routing: ResolvedRouting,
  ): Promise<ReadonlyArray<ScorerPairResult>> {
    if (typeof query !== 'string') throw new InvalidArgumentError('query must be a string');
    if (!Array.isArray(passages)) throw new InvalidArgumentError('passages must be an array of Passage');
    const { signal } = options;
    if (signal?.aborted) throw new AbortedError('the operation was aborted', { cause: signal.reason });
    const n = passages.length;
    const out: Array<RoutedPairScore | null> = new Array<RoutedPairScore | null>(n).fill(null);
    if (n === 0) return out;
    const cfg = this.config;
    const c = this.counters;
    c.calls++;
    c.pairs += n;
    const start = cfg.clock();
    const mode = routing.mode;
    let deadline = options.deadline;
    if (deadline !== undefined && (typeof deadline !== 'number' || Number.isNaN(deadline)))
      throw new InvalidArgumentError('deadline must be a number (ms on the Date.now() clock)');
    if (deadline === undefined && mode !== 'fixed') deadline = start + cfg.defaultBudgetMs;
    const answerBy = deadline === undefined ? undefined : deadline - cfg.returnMarginMs - this.lagAt(start, deadline);
    const call: CallState = { query, passages, out, fallback: new InlineScores(n), counters: c };
    const ex = this.executor;

    // 1. Cache, best tier first. Inline-tier hits become the fallback: the pair can still go up a tier.
    // With a shared L2, what L1 lacks is read from it first: the plan then knows what other
    // instances scored (a pair scored there is not sent to a tier again, nor shed below its score).
    const probed = mode === 'fixed' ? [routing.fixed] : cfg.ranked;
    let cacheState = ex.probeCache(call, probed);
    const shared = ex.prefetchShared(call, probed, cacheState, answerBy);
    if (shared !== undefined) cacheState = await shared;

    // Inline work runs under the answer time too: past it, the call answers with what it has.
    const limits = answerLimits(signal, answerBy);

    // 2. Plan. Cascade reads the inline tier's relevance of the open pairs, so it scores them first.
    let relevance: Float64Array | undefined;
    if (mode === 'cascade' && cfg.inline !== undefined) {
      const open = openPairs(cacheState);
      if (open.length > 0) {
        const inline = cfg.inline;
        const outcome = await raceAnswer(ex.runInline(inline, call, open, limits), signal, answerBy, cfg.clock);
        if (outcome !== undefined) return this.answerNow(call, outcome, open, inline, answerBy, signal);
      }
      relevance = relevanceOf(call.fallback, open, routing.signals, n);
    }
    const plan = planRouting({
      mode,
      tiers: cfg.ranked.map((t) => planTier(t, cfg.probeIntervalMs)),
      fixedTier: routing.fixed.name,
      cascadeTier: routing.cascade.name,
      ...(routing.cascadeStages.length === 0 ? {} : { cascadeStages: routing.cascadeStages.map((t) => t.name) }),
      cache: cacheState,
      relevance,
      threshold: routing.threshold,
      answerBy,
      now: cfg.clock(),
      headroom: cfg.headroom,
    });

    // 3. Execute it.
    if (plan.probe !== undefined) (cfg.byName.get(plan.probe) as TierState).model.probes++;
    if (plan.shed.length > 0) {
      c.shedPairs += plan.shed.length;
      this.refill?.note(
        query,
        plan.shed.map((i) => passages[i]),
      );
    }
    // Pairs answered inline: by the inline tier, or (fixed mode) by the fixed tier when it is inline.
    const inlineTier = cfg.inline ?? routing.fixed;
    if (plan.inlineScore.length > 0) {
      const outcome = await raceAnswer(
        ex.runInline(inlineTier, call, plan.inlineScore, limits),
        signal,
        answerBy,
        cfg.clock,
      );
      if (outcome !== undefined) return this.answerNow(call, outcome, plan.inlineScore, inlineTier, answerBy, signal);
    }
    if (plan.inlineAnswer.length > 0) ex.answerInline(call, plan.inlineAnswer, inlineTier.name, plan.inlineDegraded);
    if (plan.submissions.length > 0) {
      const jobs: Job[] = plan.submissions.map((s) => ({
        tier: cfg.byName.get(s.tier) as TierState,
        indices: s.indices,
        done: false,
        ...(s.degraded === undefined ? {} : { degraded: s.degraded }),
      }));
      await ex.runJobs(call, jobs, signal, answerBy, mode, plan.submissionDegraded);
    }

    this.refill?.pump();

    // 4. Bookkeeping.
    this.answered(out, answerBy);
    return out;
  }

  /** The answer-lag allowance for a call started at `start`: at most a quarter of its budget. */
  private lagAt(start: number, deadline: number): number {
    if (this.lag === undefined) return 0;
    return Math.min(this.lag.current(start), Math.max(0, (deadline - start) / 4));
  }

  private answered(out: ReadonlyArray<RoutedPairScore | null>, answerBy: number | undefined): void {
    const end = this.config.clock();
    recordAnswers(this.counters, out, answerBy, end);
    if (answerBy !== undefined) this.lag?.observe(answerBy, end);
  }

  /**
   * The answer time (or the caller's abort) came while inline work was still running: nothing more
   * is awaited. The `pending` pairs are answered from what the inline tier has so far (cached
   * scores), labelled 'deadline', or stay null; the late work's results are dropped.
   */
  private answerNow(
    call: CallState,
    outcome: typeof TIMED_OUT | typeof ABORTED,
    pending: readonly number[],
    inline: TierState,
    answerBy: number | undefined,
    signal: AbortSignal | undefined,
  ): ReadonlyArray<ScorerPairResult> {
    if (outcome === ABORTED) throw new AbortedError('the operation was aborted', { cause: signal?.reason });
    const { out, counters: c } = call;
    const unanswered = pending.filter((i) => out[i] === null);
    c.deadlinePairs += unanswered.length;
    for (const i of unanswered) out[i] = call.fallback.answer(i, inline.name, 'deadline');
    this.answered(out, answerBy);
    return out;
  }

  stats(): RouterStats {
    return snapshotStats(this.counters, this.config.ranked, this.lag?.current(this.config.clock()) ?? 0);
  }

  close(): void {
    this.refill?.close();
    this.lag?.close();
  }

  resetStats(): void {
    this.counters = newCounters();
  }

  async warmUp(options?: { readonly tiers?: readonly TierName[]; readonly timeoutMs?: number }): Promise<RouterWarmUp> {
    const names = options?.tiers;
    const timeoutMs = positiveNumber('warmUp: timeoutMs', options?.timeoutMs ?? WARM_UP_TIMEOUT_MS);
    if (names !== undefined) {
      if (!Array.isArray(names)) throw new InvalidArgumentError('warmUp: tiers must be a list of tier names');
      for (const name of names)
        if (!this.config.byName.has(name))
          throw new InvalidArgumentError(`warmUp: unknown tier ${JSON.stringify(name)}`);
    }
    const tiers: Array<{ name: TierName; ms: number; error?: string }> = [];
    for (const tier of this.config.ranked) {
      if (names !== undefined && !names.includes(tier.name)) continue;
      const t0 = performance.now();
      try {
        // A tier that does not answer must not hold the warm-up (and the server start) forever.
        const deadline = Date.now() + timeoutMs;
        let pending: Promise<unknown>;
        try {
          pending = Promise.resolve(tier.spec.scorer.score(WARM_UP_QUERY, WARM_UP_PASSAGES, { deadline }));
        } catch (error) {
          pending = Promise.reject(error);
        }
        pending.catch(() => undefined);
        const outcome = await raceAnswer(pending, undefined, deadline, Date.now);
        if (outcome === TIMED_OUT) throw new DeadlineExceededError(`no answer within ${timeoutMs} ms`);
        tiers.push({ name: tier.name, ms: performance.now() - t0 });
      } catch (error) {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        tiers.push({ name: tier.name, ms: performance.now() - t0, error: message });
      }
    }
    return { tiers };
  }
}

/** What the planner sees of a tier right now. */
function planTier(tier: TierState, probeIntervalMs: number): PlanTier {
  const model = tier.model;
  return {
    name: tier.name,
    inline: tier.inline,
    maxQueuedPairs: tier.maxQueuedPairs,
    outstandingPairs: model.outstanding,
    predictMs: (pairs) => model.predict(pairs),
    mayProbe: !tier.inline && model.mayProbe(performance.now(), probeIntervalMs),
  };
}

/** The inline tier's relevance of the `open` pairs (NaN where it has none). */
function relevanceOf(
  fallback: InlineScores,
  open: readonly number[],
  signals: readonly string[],
  n: number,
): Float64Array {
  const relevance = new Float64Array(n).fill(Number.NaN);
  for (const i of open) {
    const f = fallback.results[i];
    if (f !== undefined)
      relevance[i] = readRelevance(
        isDetailedPairScore(f) ? f.probabilities : (f as Readonly<Record<string, number>>),
        signals,
      );
  }
  return relevance;
}

/** Creates a tier router (a Scorer). Give the cache to the router, not to the gate. */
export function createRouter(config: RouterConfig): Router {
  return new RouterImpl(resolveConfig(config));
}
