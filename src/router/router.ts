/**
 * The tier router: a Scorer that decides, per call and under the current load, which tier scores
 * which pairs so that the call's budget holds, and answers every pair with the best score
 * available when the budget runs out. See docs/router.md for the design and its guarantees.
 *
 * Life of a call:
 *   1. cache probe, best tier first: a pair cached from the cross-encoder is never rescored, and a
 *      cached cross-encoder score wins over a cached fast-path one;
 *   2. plan (fixed / budget / cascade) from the live cost models (cost-model.ts);
 *   3. slow-tier work is submitted with an AbortSignal and the call's deadline; the inline fast
 *      path provides a fallback score for every pair sent to a slow tier;
 *   4. at `deadline − returnMarginMs` the router stops waiting: pending slow-tier work is cancelled
 *      (the batcher drops pairs not yet started) and those pairs are answered from the fallback,
 *      labelled with the tier that produced them and counted as degraded.
 */
import { AbortedError, DeadlineExceededError, InvalidArgumentError, OverloadedError } from '../errors.js';
import { pairResultProblem } from '../gate/scoring.js';
import { isDetailedPairScore, type Passage, type Scorer, type ScorerPairResult, type TierName } from '../types.js';
import { BackgroundFillQueue } from './background-fill.js';
import { TierCostModel, type Submission } from './cost-model.js';
import { largestFitting, orderByThresholdDistance, readRelevance } from './select.js';
import type {
  DegradeReason,
  RoutedPairScore,
  Router,
  RouterCache,
  RouterConfig,
  RouterScoreOptions,
  RouterStats,
  RoutingMode,
  RoutingOptions,
  TierLoadStats,
  TierSpec,
} from './types.js';

export const DEFAULT_BUDGET_MS = 100;
export const DEFAULT_RETURN_MARGIN_MS = 2;
export const DEFAULT_HEADROOM = 0.8;
export const DEFAULT_MAX_QUEUED_PAIRS = 512;
export const DEFAULT_PROBE_INTERVAL_MS = 250;
export const CACHE_TIER: TierName = 'cache';
const DEFAULT_SIGNALS: readonly string[] = Object.freeze(['relevant']);
const MODES: ReadonlySet<RoutingMode> = new Set(['fixed', 'budget', 'cascade']);

interface TierState {
  readonly spec: TierSpec;
  readonly name: TierName;
  readonly inline: boolean;
  readonly cacheable: boolean;
  readonly maxQueuedPairs: number;
  readonly model: TierCostModel;
}

interface ResolvedRouting {
  readonly mode: RoutingMode;
  readonly fixed: TierState;
  readonly threshold: number;
  readonly signals: readonly string[];
}

interface Counters {
  calls: number;
  pairs: number;
  byTier: Record<string, number>;
  cacheHitsBySource: Record<string, number>;
  degradedPairs: number;
  shedPairs: number;
  deadlinePairs: number;
  errorPairs: number;
  cancelledPairs: number;
  unscoredPairs: number;
  lateCalls: number;
  backgroundPairs: number;
  backgroundSubmissions: number;
}

function newCounters(): Counters {
  return {
    calls: 0,
    pairs: 0,
    byTier: {},
    cacheHitsBySource: {},
    degradedPairs: 0,
    shedPairs: 0,
    deadlinePairs: 0,
    errorPairs: 0,
    cancelledPairs: 0,
    unscoredPairs: 0,
    lateCalls: 0,
    backgroundPairs: 0,
    backgroundSubmissions: 0,
  };
}

/** A pending piece of slow-tier work of one call. */
interface Job {
  readonly tier: TierState;
  readonly indices: readonly number[];
  done: boolean;
}

function isScorer(value: unknown): value is Scorer {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Scorer).id === 'string' &&
    (value as Scorer).id.length > 0 &&
    typeof (value as Scorer).score === 'function'
  );
}

function checkNumber(name: string, value: number | undefined, ok: (v: number) => boolean, what: string): void {
  if (value !== undefined && (typeof value !== 'number' || !ok(value)))
    throw new InvalidArgumentError(`${name} must be ${what}, got ${String(value)}`);
}

/** A valid scorer result re-labelled with the tier that produced it. */
function labelled(
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

class RouterImpl implements Router {
  readonly id: string;
  readonly routing: RoutingOptions;
  private readonly ranked: readonly TierState[];
  private readonly byName: ReadonlyMap<string, TierState>;
  private readonly inline: TierState | undefined;
  private readonly cache: RouterCache | undefined;
  private readonly defaultBudgetMs: number;
  private readonly returnMarginMs: number;
  private readonly headroom: number;
  private readonly probeIntervalMs: number;
  private readonly clock: () => number;
  private readonly defaultRouting: ResolvedRouting;
  private counters = newCounters();
  private readonly refill: BackgroundFillQueue | undefined;
  private refillRunning = false;
  private closed = false;

  constructor(config: RouterConfig) {
    if (typeof config !== 'object' || config === null)
      throw new InvalidArgumentError('createRouter needs a config object { tiers, routing?, cache? }');
    if (!Array.isArray(config.tiers) || config.tiers.length === 0)
      throw new InvalidArgumentError('config.tiers must be a non-empty array of tiers');
    const states: TierState[] = [];
    const names = new Set<string>();
    const qualities = new Set<number>();
    for (const [i, spec] of config.tiers.entries()) {
      if (typeof spec !== 'object' || spec === null) throw new InvalidArgumentError(`tiers[${i}] must be an object`);
      if (typeof spec.name !== 'string' || spec.name.length === 0 || spec.name === CACHE_TIER)
        throw new InvalidArgumentError(`tiers[${i}].name must be a non-empty string other than 'cache'`);
      if (names.has(spec.name))
        throw new InvalidArgumentError(`tier name ${JSON.stringify(spec.name)} is registered twice`);
      if (!isScorer(spec.scorer)) throw new InvalidArgumentError(`tiers[${i}].scorer must be a Scorer { id, score() }`);
      if (typeof spec.quality !== 'number' || !Number.isFinite(spec.quality))
        throw new InvalidArgumentError(`tiers[${i}].quality must be a finite number`);
      if (qualities.has(spec.quality))
        throw new InvalidArgumentError(`tiers[${i}].quality ${spec.quality} is not unique`);
      checkNumber(
        `tiers[${i}].maxQueuedPairs`,
        spec.maxQueuedPairs,
        (v) => Number.isInteger(v) && v >= 1,
        'an integer ≥ 1',
      );
      checkNumber(
        `tiers[${i}].initialMsPerPair`,
        spec.initialMsPerPair,
        (v) => Number.isFinite(v) && v >= 0,
        'a finite number ≥ 0',
      );
      if (spec.estimateMs !== undefined && typeof spec.estimateMs !== 'function')
        throw new InvalidArgumentError(`tiers[${i}].estimateMs must be a function`);
      if (spec.pendingPairs !== undefined && typeof spec.pendingPairs !== 'function')
        throw new InvalidArgumentError(`tiers[${i}].pendingPairs must be a function`);
      names.add(spec.name);
      qualities.add(spec.quality);
      const inline = spec.inline === true;
      states.push({
        spec,
        name: spec.name,
        inline,
        cacheable: spec.cache ?? !inline,
        maxQueuedPairs: spec.maxQueuedPairs ?? DEFAULT_MAX_QUEUED_PAIRS,
        model: new TierCostModel(spec),
      });
    }
    states.sort((a, b) => b.spec.quality - a.spec.quality);
    const inlineTiers = states.filter((s) => s.inline);
    if (inlineTiers.length > 1) throw new InvalidArgumentError('at most one tier may be inline');
    if (inlineTiers.length === 1 && states[states.length - 1] !== inlineTiers[0])
      throw new InvalidArgumentError('the inline tier must have the lowest quality');
    if (
      config.cache !== undefined &&
      (typeof config.cache !== 'object' ||
        config.cache === null ||
        typeof config.cache.lookup !== 'function' ||
        typeof config.cache.resolve !== 'function')
    ) {
      throw new InvalidArgumentError('config.cache must provide lookup() and resolve() (createScoreCache does)');
    }
    checkNumber(
      'defaultBudgetMs',
      config.defaultBudgetMs,
      (v) => Number.isFinite(v) && v > 0,
      'a positive number of ms',
    );
    checkNumber('returnMarginMs', config.returnMarginMs, (v) => Number.isFinite(v) && v >= 0, 'a number of ms ≥ 0');
    checkNumber(
      'probeIntervalMs',
      config.probeIntervalMs,
      (v) => v > 0,
      'a positive number of ms (Infinity disables probes)',
    );
    checkNumber('headroom', config.headroom, (v) => v > 0 && v <= 1, 'in (0, 1]');
    if (config.clock !== undefined && typeof config.clock !== 'function')
      throw new InvalidArgumentError('config.clock must be a function');
    if (config.id !== undefined && (typeof config.id !== 'string' || config.id.length === 0))
      throw new InvalidArgumentError('config.id must be a non-empty string');
    this.ranked = states;
    this.byName = new Map(states.map((s) => [s.name, s]));
    this.inline = inlineTiers[0];
    this.cache = config.cache;
    const bestTier = states[0];
    if (
      config.backgroundFill !== undefined &&
      config.backgroundFill !== false &&
      config.cache !== undefined &&
      bestTier.cacheable &&
      !bestTier.inline
    ) {
      this.refill = new BackgroundFillQueue(config.backgroundFill === true ? {} : config.backgroundFill);
    }
    this.defaultBudgetMs = config.defaultBudgetMs ?? DEFAULT_BUDGET_MS;
    this.returnMarginMs = config.returnMarginMs ?? DEFAULT_RETURN_MARGIN_MS;
    this.headroom = config.headroom ?? DEFAULT_HEADROOM;
    this.probeIntervalMs = config.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    this.clock = config.clock ?? Date.now;
    this.id = config.id ?? `router(${states.map((s) => `${s.name}=${s.spec.scorer.id}`).join(',')})`;
    this.routing = Object.freeze({ ...(config.routing ?? { mode: states.length > 1 ? 'cascade' : 'fixed' }) });
    this.defaultRouting = this.resolveRouting(this.routing, undefined);
  }

  private resolveRouting(
    base: RoutingOptions | ResolvedRouting,
    override: Partial<RoutingOptions> | undefined,
  ): ResolvedRouting {
    const merged: { -readonly [K in keyof RoutingOptions]?: RoutingOptions[K] } = {
      ...(base as RoutingOptions),
      ...(override ?? {}),
    };
    if ('fixed' in base && override?.fixedTier === undefined) merged.fixedTier = (base as ResolvedRouting).fixed.name;
    if ('signals' in base && override?.signal === undefined) merged.signal = (base as ResolvedRouting).signals;
    const mode = merged.mode;
    if (mode === undefined || !MODES.has(mode))
      throw new InvalidArgumentError(`routing.mode must be 'fixed', 'budget' or 'cascade', got ${String(mode)}`);
    const fixedName = merged.fixedTier ?? this.ranked[0].name;
    const fixed = this.byName.get(fixedName);
    if (fixed === undefined)
      throw new InvalidArgumentError(
        `routing.fixedTier ${JSON.stringify(fixedName)} is not a registered tier (${[...this.byName.keys()].join(', ')})`,
      );
    const threshold = merged.threshold ?? 0.5;
    if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1))
      throw new InvalidArgumentError(`routing.threshold must be a probability in [0, 1], got ${String(threshold)}`);
    const signal = merged.signal ?? DEFAULT_SIGNALS;
    const signals = typeof signal === 'string' ? [signal] : signal;
    if (
      !Array.isArray(signals) ||
      signals.length === 0 ||
      !signals.every((s) => typeof s === 'string' && s.length > 0)
    ) {
      throw new InvalidArgumentError('routing.signal must be a signal name or a non-empty list of names');
    }
    return { mode, fixed, threshold, signals };
  }

  view(routing: Partial<RoutingOptions>): Scorer {
    const resolved = this.resolveRouting(this.defaultRouting, routing);
    return {
      id: this.id,
      score: (query, passages, options) => this.scoreWith(query, passages, options ?? {}, resolved),
    };
  }

  predictMs(tier: TierName, pairs: number): number {
    const state = this.byName.get(tier);
    if (state === undefined) throw new InvalidArgumentError(`unknown tier ${JSON.stringify(tier)}`);
    return state.model.predict(pairs);
  }

  score(
    query: string,
    passages: readonly Passage[],
    options: RouterScoreOptions = {},
  ): Promise<ReadonlyArray<ScorerPairResult>> {
    const routing =
      options.routing === undefined ? this.defaultRouting : this.resolveRouting(this.defaultRouting, options.routing);
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
    const c = this.counters;
    c.calls++;
    c.pairs += n;
    const start = this.clock();
    const mode = routing.mode;
    let deadline = options.deadline;
    if (deadline !== undefined && (typeof deadline !== 'number' || Number.isNaN(deadline)))
      throw new InvalidArgumentError('deadline must be a number (ms on the Date.now() clock)');
    if (deadline === undefined && mode !== 'fixed') deadline = start + this.defaultBudgetMs;
    const answerBy = deadline === undefined ? undefined : deadline - this.returnMarginMs;

    // 1. Cache, best tier first. Inline-tier hits become the fallback: the pair can still go up a tier.
    const fallback = new InlineScores(n);
    const rest = this.probeCache(query, passages, out, fallback, mode === 'fixed' ? [routing.fixed] : this.ranked);

    // 2. Plan.
    const jobs: Job[] = [];
    const best = this.ranked[0];
    const inlineName = this.inline?.name ?? routing.fixed.name;
    const answerInline = (indices: readonly number[], reason: DegradeReason | undefined): void => {
      for (const i of indices) out[i] = fallback.answer(i, inlineName, reason);
    };
    if (rest.length > 0) {
      if (mode === 'fixed') {
        if (routing.fixed.inline) {
          await this.runInline(routing.fixed, query, passages, rest, fallback);
          answerInline(rest, undefined);
        } else jobs.push({ tier: routing.fixed, indices: rest, done: false });
      } else if (mode === 'cascade') {
        if (this.inline !== undefined) await this.runInline(this.inline, query, passages, rest, fallback);
        if (best.inline) answerInline(rest, undefined);
        else {
          const relevance = new Float64Array(n).fill(Number.NaN);
          for (const i of rest) {
            const f = fallback.results[i];
            if (f !== undefined)
              relevance[i] = readRelevance(
                isDetailedPairScore(f) ? f.probabilities : (f as Readonly<Record<string, number>>),
                routing.signals,
              );
          }
          const order = orderByThresholdDistance(rest, relevance, routing.threshold);
          // A cascade probe is one pair: enough to refresh the model, cheap if the model was right.
          const m = this.fitting(best, order.length, answerBy, 1);
          const chosen = order.slice(0, m);
          const shed = order.slice(m);
          if (chosen.length > 0) jobs.push({ tier: best, indices: chosen, done: false });
          if (shed.length > 0) {
            c.shedPairs += shed.length;
            answerInline(shed, 'shed');
            this.refill?.note(
              query,
              shed.map((i) => passages[i]),
            );
          }
        }
      } else {
        // budget: the best tier predicted to fit; the inline tier always fits.
        let chosen: TierState | undefined;
        for (const tier of this.ranked) {
          if (tier.inline || this.fitting(tier, rest.length, answerBy, rest.length) === rest.length) {
            chosen = tier;
            break;
          }
        }
        chosen ??= this.ranked[this.ranked.length - 1];
        if (chosen !== best) {
          c.shedPairs += rest.length;
          this.refill?.note(
            query,
            rest.map((i) => passages[i]),
          );
        }
        if (chosen.inline) {
          await this.runInline(chosen, query, passages, rest, fallback);
          answerInline(rest, chosen === best ? undefined : 'shed');
        } else {
          jobs.push({ tier: chosen, indices: rest, done: false });
        }
      }
    }

    // 3. Slow-tier work, bounded by the deadline.
    if (jobs.length > 0) {
      const degradedLabel = chosenBelowBest(jobs[0].tier, best, mode) ? 'shed' : undefined;
      await this.runJobs(query, passages, jobs, out, fallback, signal, answerBy, mode, degradedLabel);
    }

    if (this.refill !== undefined) this.pumpRefill();

    // 4. Bookkeeping.
    const end = this.clock();
    if (answerBy !== undefined && end > answerBy + 1) c.lateCalls++;
    for (let i = 0; i < n; i++) {
      const r = out[i];
      if (r === null) {
        c.unscoredPairs++;
        continue;
      }
      c.byTier[r.tier] = (c.byTier[r.tier] ?? 0) + 1;
      if (r.sourceTier !== undefined) c.cacheHitsBySource[r.sourceTier] = (c.cacheHitsBySource[r.sourceTier] ?? 0) + 1;
      if (r.degraded !== undefined) c.degradedPairs++;
    }
    return out;
  }

  /**
   * Fills `out` with cache hits of slow tiers (label 'cache') and `fallback` with cache hits of the
   * inline tier; returns the indices not answered (inline hits included: they may still go up).
   */
  private probeCache(
    query: string,
    passages: readonly Passage[],
    out: Array<RoutedPairScore | null>,
    fallback: InlineScores,
    tiers: readonly TierState[],
  ): number[] {
    let rest: number[] = Array.from({ length: passages.length }, (_, i) => i);
    const cache = this.cache;
    if (cache === undefined) return rest;
    for (const tier of tiers) {
      if (!tier.cacheable || rest.length === 0) continue;
      const subset = rest.length === passages.length ? passages : rest.map((i) => passages[i]);
      const hits = cache.lookup({ scorerId: tier.spec.scorer.id, query, passages: subset });
      const next: number[] = [];
      for (let j = 0; j < rest.length; j++) {
        const hit = hits[j];
        if (hit === undefined || pairResultProblem(hit) !== undefined) next.push(rest[j]);
        else if (tier.inline) {
          fallback.results[rest[j]] = hit;
          fallback.cached[rest[j]] = 1;
          next.push(rest[j]);
        } else out[rest[j]] = labelled(hit, CACHE_TIER, undefined, tier.name);
      }
      rest = next;
    }
    return rest;
  }

  /**
   * How many of `wanted` pairs the tier is predicted to finish (and may queue) before answerBy.
   * When none fit but the tier is idle and its model stale, a probe of `probePairs` is allowed.
   */
  private fitting(tier: TierState, wanted: number, answerBy: number | undefined, probePairs: number): number {
    if (tier.inline) return wanted;
    const room = Math.max(0, Math.min(wanted, tier.maxQueuedPairs - tier.model.outstanding));
    if (answerBy === undefined) return room;
    const remaining = answerBy - this.clock();
    const fit = largestFitting(room, remaining * this.headroom, (pairs) => tier.model.predict(pairs));
    if (
      fit < Math.min(room, probePairs) &&
      remaining > 0 &&
      tier.model.mayProbe(performance.now(), this.probeIntervalMs)
    ) {
      tier.model.probes++;
      return Math.min(room, probePairs);
    }
    return fit;
  }

  /**
   * Scores the `indices` without a fallback yet on the inline tier into `fallback` (through the
   * cache when the tier is cacheable); failures leave holes (those pairs may end unscored).
   */
  private async runInline(
    tier: TierState,
    query: string,
    passages: readonly Passage[],
    allIndices: readonly number[],
    fallback: InlineScores,
  ): Promise<void> {
    const indices = allIndices.filter((i) => fallback.results[i] === undefined);
    if (indices.length === 0) return;
    const subset = indices.length === passages.length ? passages : indices.map((i) => passages[i]);
    const score = async (ps: readonly Passage[]): Promise<ReadonlyArray<ScorerPairResult>> => {
      const sub = tier.model.begin(ps.length, performance.now());
      try {
        const results = await tier.spec.scorer.score(query, ps, {});
        if (!Array.isArray(results) || results.length !== ps.length)
          throw new InvalidArgumentError(`tier ${tier.name} returned a wrong result count`);
        tier.model.complete(sub, performance.now());
        return results.map((r) => (pairResultProblem(r) === undefined ? r : null));
      } catch (error) {
        tier.model.fail(sub, performance.now());
        throw error;
      }
    };
    let results: ReadonlyArray<ScorerPairResult>;
    let cached: readonly boolean[] | undefined;
    try {
      if (this.cache !== undefined && tier.cacheable) {
        const resolution = await this.cache.resolve(
          { scorerId: tier.spec.scorer.id, query, passages: subset },
          (miss) => score(miss.map((j) => subset[j])),
        );
        results = resolution.results;
        cached = resolution.cached;
      } else results = await score(subset);
    } catch {
      return;
    }
    for (let j = 0; j < indices.length; j++) {
      const r = results[j];
      if (r !== null && r !== undefined && pairResultProblem(r) === undefined) {
        fallback.results[indices[j]] = r;
        if (cached?.[j] === true) fallback.cached[indices[j]] = 1;
      }
    }
  }

  /**
   * Runs the slow-tier jobs; waits until they finish or until answerBy, whichever is first. Pairs
   * without a slow-tier answer get the inline fallback (labelled, counted as degraded) or stay null.
   */
  private async runJobs(
    query: string,
    passages: readonly Passage[],
    jobs: Job[],
    out: Array<RoutedPairScore | null>,
    fallback: InlineScores,
    callerSignal: AbortSignal | undefined,
    answerBy: number | undefined,
    mode: RoutingMode,
    belowBest: DegradeReason | undefined,
  ): Promise<void> {
    const c = this.counters;
    const controller = new AbortController();
    const onCallerAbort = (): void => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    const useFallback = mode !== 'fixed' && this.inline !== undefined;
    const pendingWork = jobs.map((job) => this.startJob(query, passages, job, controller.signal, answerBy));
    // The fallback is computed while the slow tier works (it is microseconds on the main thread).
    if (useFallback) {
      await this.runInline(
        this.inline as TierState,
        query,
        passages,
        jobs.flatMap((j) => j.indices),
        fallback,
      );
    }
    const fallBack = (indices: readonly number[], reason: DegradeReason): void => {
      if (!useFallback) return;
      for (const i of indices)
        if (out[i] === null) out[i] = fallback.answer(i, (this.inline as TierState).name, reason);
    };
    let firstError: unknown;
    let answered = 0;
    await new Promise<void>((resolve) => {
      let open = jobs.length;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        if (timer !== undefined) clearTimeout(timer);
        resolve();
      };
      if (answerBy !== undefined) {
        timer = setTimeout(
          () => {
            // Deadline: stop waiting, cancel what has not started, answer from the fallback.
            for (const job of jobs) {
              if (job.done) continue;
              job.done = true;
              const pending = job.indices.filter((i) => out[i] === null);
              c.deadlinePairs += pending.length;
              c.cancelledPairs += pending.length;
              fallBack(pending, 'deadline');
              if (job.tier === this.ranked[0])
                this.refill?.note(
                  query,
                  pending.map((i) => passages[i]),
                );
            }
            controller.abort(new DeadlineExceededError('router deadline'));
            finish();
          },
          Math.max(0, answerBy - this.clock()),
        );
      }
      const onAbort = (): void => finish();
      controller.signal.addEventListener('abort', onAbort, { once: true });
      jobs.forEach((job, k) => {
        pendingWork[k].then(
          (results) => {
            if (job.done) return;
            job.done = true;
            const failed: number[] = [];
            for (let j = 0; j < job.indices.length; j++) {
              const i = job.indices[j];
              const r = results[j];
              if (r === undefined) failed.push(i);
              else {
                out[i] = r.cached
                  ? labelled(r.result, CACHE_TIER, undefined, job.tier.name)
                  : labelled(r.result, job.tier.name, belowBest);
                answered++;
              }
            }
            if (failed.length > 0) {
              c.errorPairs += failed.length;
              fallBack(failed, 'error');
            }
            if (--open === 0) finish();
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
              fallBack(pending, reason);
            }
            if (--open === 0) finish();
          },
        );
      });
    });
    callerSignal?.removeEventListener('abort', onCallerAbort);
    if (callerSignal?.aborted) throw new AbortedError('the operation was aborted', { cause: callerSignal.reason });
    // Fixed routing with nothing to show: surface the tier's error to the caller (the gate records it).
    if (mode === 'fixed' && firstError !== undefined && answered === 0 && out.every((r) => r === null))
      throw firstError;
  }

  /**
   * Starts one job: through the cache (single-flight, store) when the tier is cacheable, else
   * straight to the tier. Resolves per index to { result, cached } or undefined (invalid result).
   */
  private startJob(
    query: string,
    passages: readonly Passage[],
    job: Job,
    signal: AbortSignal,
    answerBy: number | undefined,
  ): Promise<Array<{ result: NonNullable<ScorerPairResult>; cached: boolean } | undefined>> {
    const tier = job.tier;
    const subset = job.indices.map((i) => passages[i]);
    const options = answerBy === undefined ? { signal } : { signal, deadline: answerBy };
    const measured = (ps: readonly Passage[]): Promise<ReadonlyArray<ScorerPairResult>> => {
      const sub: Submission = tier.model.begin(ps.length, performance.now());
      let pending: Promise<ReadonlyArray<ScorerPairResult>>;
      try {
        pending = Promise.resolve(tier.spec.scorer.score(query, ps, options));
      } catch (error) {
        pending = Promise.reject(error);
      }
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
          return results.map((r) => (pairResultProblem(r) === undefined ? r : null));
        },
        (error: unknown) => {
          tier.model.fail(sub, performance.now());
          throw error;
        },
      );
    };
    const cache = this.cache;
    if (cache !== undefined && tier.cacheable) {
      return cache
        .resolve(
          { scorerId: tier.spec.scorer.id, query, passages: subset },
          (missIndices) => measured(missIndices.map((j) => subset[j])),
          options,
        )
        .then((resolution) =>
          resolution.results.map((r, j) =>
            r === null || r === undefined || pairResultProblem(r) !== undefined
              ? undefined
              : { result: r, cached: resolution.cached[j] === true },
          ),
        );
    }
    return measured(subset).then((results) =>
      results.map((r) => (r === null ? undefined : { result: r, cached: false })),
    );
  }

  stats(): RouterStats {
    const c = this.counters;
    const tiers: TierLoadStats[] = this.ranked.map((t) => ({
      name: t.name,
      quality: t.spec.quality,
      inline: t.inline,
      outstandingPairs: t.model.outstanding,
      msPerPair: t.model.msPerPair,
      overheadMs: t.model.overheadMs,
      residualMs: Math.sqrt(t.model.residualVar),
      samples: t.model.samples,
      predictionRatio: t.model.ratio,
      predictedMsFor20: t.model.predict(20),
      submittedPairs: t.model.submittedPairs,
      completedPairs: t.model.completedPairs,
      failedPairs: t.model.failedPairs,
      calls: t.model.calls,
      probes: t.model.probes,
    }));
    return { ...c, byTier: { ...c.byTier }, cacheHitsBySource: { ...c.cacheHitsBySource }, tiers };
  }

  /**
   * Background fill (background-fill.ts): when the best tier is idle, send one small batch of
   * remembered shed pairs through the cache. One submission at a time; re-pumped on completion.
   */
  private pumpRefill(): void {
    if (this.closed) return;
    try {
      this.pumpRefillUnsafe();
    } catch {
      // Background work is best effort: it never fails a caller or the process.
      this.refillRunning = false;
    }
  }

  private pumpRefillUnsafe(): void {
    const refill = this.refill as BackgroundFillQueue;
    const best = this.ranked[0];
    if (this.refillRunning || best.model.outstanding > 0 || (best.spec.pendingPairs?.() ?? 0) > 0) return;
    let work: { query: string; passages: Passage[] } | undefined;
    // Skip pairs that reached the cache meanwhile (scored by a later request or an earlier batch).
    for (let tries = 0; tries < 4; tries++) {
      const next = refill.take();
      if (next === undefined) return;
      const hits = (this.cache as RouterCache).lookup({
        scorerId: best.spec.scorer.id,
        query: next.query,
        passages: next.passages,
      });
      const missing = next.passages.filter((_, j) => hits[j] === undefined);
      if (missing.length > 0) {
        work = { query: next.query, passages: missing };
        break;
      }
    }
    if (work === undefined) return;
    this.refillRunning = true;
    const c = this.counters;
    c.backgroundSubmissions++;
    c.backgroundPairs += work.passages.length;
    const job: Job = { tier: best, indices: work.passages.map((_, i) => i), done: false };
    const controller = new AbortController();
    // A background batch never waits long: a stuck tier must not pin it (or its pairs) forever.
    const deadline = this.clock() + 2000;
    this.startJob(work.query, work.passages, job, controller.signal, deadline).then(
      () => {
        this.refillRunning = false;
        this.pumpRefill();
      },
      () => {
        this.refillRunning = false;
      },
    );
  }

  close(): void {
    this.closed = true;
  }

  resetStats(): void {
    this.counters = newCounters();
  }
}

/** The inline tier's score per pair (fresh or from the cache): the fallback of every pair. */
class InlineScores {
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

function chosenBelowBest(tier: TierState, best: TierState, mode: RoutingMode): boolean {
  return mode !== 'fixed' && tier !== best;
}

/** Creates a tier router (a Scorer). Give the cache to the router, not to the gate. */
export function createRouter(config: RouterConfig): Router {
  return new RouterImpl(config);
}
