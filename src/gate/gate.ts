/**
 * createGate: validates a request, scores it (through the cache when configured, in rank-order
 * chunks when early stopping), decides every pair from its stored signals, and returns the
 * grouped result with stats and timings. The hot path allocates one item per pair and little else.
 */
import type { CacheApproximateUse, PairScoreCache } from '../cache/cache-port.js';
import { InvalidArgumentError } from '../errors.js';
import type { Passage, Scorer, ScoreOptions } from '../types.js';
import { isScorer } from '../util/is-scorer.js';
import { rejectUnknownKeys } from '../util/option-keys.js';
import { loadTracing, type SpanAttributes, traced } from '../util/tracing.js';
import { positiveInteger } from '../util/validate-options.js';
import {
  DecisionState,
  decidePair,
  finalizeDecisions,
  markUnscored,
  newWorkingItem,
  reopenItem,
  type WorkingItem,
} from './decide.js';
import { selectThreshold } from './policies/adaptive.js';
import { EarlyStopWindow } from './policies/early-stop.js';
import { listCut } from './policies/operating-points.js';
import { compilePolicy, mergePolicy, type CompiledPolicy } from './policy.js';
import { policyFingerprint } from './policy-fingerprint.js';
import { scoreRange, type ScoringContext } from './scoring.js';
import { StreamChannel } from './stream-channel.js';
import type {
  FilterOptions,
  Gate,
  GateConfig,
  GateItem,
  GateMode,
  GatePolicy,
  GateResult,
  GateStream,
  OperatingPoint,
  RerouteOptions,
} from './types.js';
import { hasGateResultFields, resolveDeadline, validateOptions, validatePassages, validateQuery } from './validate.js';

export const DEFAULT_MAX_PASSAGES = 10_000;

const CONFIG_KEYS: ReadonlySet<string> = new Set(['scorer', 'policy', 'cache', 'clock', 'maxPassages', 'tierName']);
const NO_OPTIONS: FilterOptions = Object.freeze({});
const NO_SCORE_OPTIONS: ScoreOptions = Object.freeze({});

/** Receives included items as soon as their inclusion is final (streaming). */
class StreamSink<P extends Passage> {
  private readonly holdAll: boolean;
  private readonly holdUntil: number;
  private held: WorkingItem<P>[] | undefined;
  private readonly yielded = new Set<WorkingItem<P>>();

  constructor(
    policy: CompiledPolicy,
    private readonly channel: StreamChannel<GateItem<P>>,
  ) {
    // A bounded maxKept lets a later pair displace an earlier one: nothing is final until the end.
    this.holdAll = policy.maxKept !== Number.POSITIVE_INFINITY;
    // fallback 'none' retracts every inclusion while fewer than minKept passed.
    this.holdUntil = policy.fallback === 'none' ? policy.minKept : 0;
  }

  decided(item: WorkingItem<P>, state: DecisionState): void {
    if (this.holdAll || item.route !== 'included') return;
    if (state.passed < this.holdUntil) {
      if (this.held === undefined) this.held = [];
      this.held.push(item);
      return;
    }
    if (this.held !== undefined) {
      for (const h of this.held) this.emit(h);
      this.held = undefined;
    }
    this.emit(item);
  }

  finish(result: GateResult<P>): void {
    for (const item of result.included)
      if (!this.yielded.has(item as WorkingItem<P>)) this.emit(item as WorkingItem<P>);
    this.channel.close();
  }

  private emit(item: WorkingItem<P>): void {
    this.yielded.add(item);
    this.channel.push(item);
  }
}

interface PreparedCall<P extends Passage> {
  readonly t0: number;
  readonly query: string;
  readonly passages: readonly P[];
  readonly queryClass: string | undefined;
  readonly policy: CompiledPolicy;
  readonly threshold: number;
  readonly scoreOptions: ScoreOptions;
  readonly approximate: CacheApproximateUse | undefined;
}

class GateImpl implements Gate {
  readonly scorer: Scorer;
  private readonly cache: PairScoreCache | undefined;
  private readonly policySource: GatePolicy;
  private readonly policy: CompiledPolicy;
  private readonly now: () => number;
  private readonly maxPassages: number;
  private readonly defaultTier: string;
  /** The gate policy's fingerprint when the cache reuses similar queries' scores (they must share it). */
  private readonly approximateScope: string | undefined;
  /** The process's warm-up gates (warmDecisionPathOnce): their calls make no spans in the application's traces. */
  warmUp = false;

  get mode(): GateMode {
    return this.policy.mode;
  }

  get operatingPoint(): OperatingPoint | undefined {
    return this.policy.operatingPoint;
  }

  constructor(config: GateConfig) {
    if (typeof config !== 'object' || config === null)
      throw new InvalidArgumentError('createGate needs a config object { scorer, policy?, cache? }');
    rejectUnknownKeys(config, CONFIG_KEYS, 'config', 'a gate option');
    if (!isScorer(config.scorer))
      throw new InvalidArgumentError(
        'config.scorer must be { id: non-empty string, score(query, passages, options), signals?: string[] }',
      );
    if (
      config.cache !== undefined &&
      (typeof config.cache !== 'object' || config.cache === null || typeof config.cache.resolve !== 'function')
    ) {
      throw new InvalidArgumentError('config.cache must implement PairScoreCache.resolve');
    }
    if (config.clock !== undefined && typeof config.clock !== 'function')
      throw new InvalidArgumentError('config.clock must be a function returning ms');
    const maxPassages = positiveInteger('config.maxPassages', config.maxPassages ?? DEFAULT_MAX_PASSAGES);
    if (config.tierName !== undefined && (typeof config.tierName !== 'string' || config.tierName.length === 0))
      throw new InvalidArgumentError('config.tierName must be a non-empty string');
    this.scorer = config.scorer;
    this.cache = config.cache;
    this.policySource = config.policy ?? {};
    this.policy = compilePolicy(this.policySource, this.scorer);
    this.now = config.clock ?? Date.now;
    this.maxPassages = maxPassages;
    this.defaultTier = config.tierName ?? this.scorer.id;
    this.approximateScope = this.cache?.approximate === true ? policyFingerprint(this.policySource) : undefined;
  }

  async filter<P extends Passage>(
    query: string,
    passages: readonly P[],
    options: FilterOptions = NO_OPTIONS,
  ): Promise<GateResult<P>> {
    const call = this.prepare(query, passages, options, undefined);
    return this.traced(call, () => this.execute(call, undefined));
  }

  stream<P extends Passage>(query: string, passages: readonly P[], options: FilterOptions = NO_OPTIONS): GateStream<P> {
    validateOptions(options);
    const controller = new AbortController();
    const signal =
      options.signal === undefined ? controller.signal : AbortSignal.any([options.signal, controller.signal]);
    const call = this.prepare(query, passages, options, signal);
    const channel = new StreamChannel<GateItem<P>>(() => controller.abort());
    const sink = new StreamSink<P>(call.policy, channel);
    const result = this.traced(call, () => this.execute(call, sink)).then(
      (r) => {
        sink.finish(r);
        return r;
      },
      (error: unknown) => {
        channel.close({ error });
        throw error;
      },
    );
    result.catch(() => undefined); // the iterator reports the failure too; do not leave this unhandled
    return { result, [Symbol.asyncIterator]: () => channel };
  }

  reroute<P extends Passage>(previous: GateResult<P>, policy?: GatePolicy, options?: RerouteOptions): GateResult<P> {
    const compiled =
      policy === undefined ? this.policy : compilePolicy(mergePolicy(this.policySource, policy), this.scorer);
    return rerouteCompiled(previous, compiled, options, this.defaultTier);
  }

  /** The call inside its span (src/util/tracing.ts), except for the process's warm-up gates. */
  private traced<P extends Passage>(call: PreparedCall<P>, run: () => Promise<GateResult<P>>): Promise<GateResult<P>> {
    if (this.warmUp) return run();
    const attributes = (): SpanAttributes => {
      const deadline = call.scoreOptions.deadline;
      return {
        'relevance_gate.scorer': this.scorer.id,
        'relevance_gate.passages': call.passages.length,
        ...(deadline === undefined ? {} : { 'relevance_gate.budget_ms': Math.max(0, deadline - this.now()) }),
      };
    };
    return traced(GATE_SPAN, attributes, run, resultAttributes);
  }

  private prepare<P extends Passage>(
    query: string,
    passages: readonly P[],
    options: FilterOptions,
    signalOverride: AbortSignal | undefined,
  ): PreparedCall<P> {
    const t0 = performance.now();
    validateOptions(options);
    validateQuery(query);
    validatePassages(passages, this.maxPassages);
    const merged = options.policy === undefined ? undefined : mergePolicy(this.policySource, options.policy);
    const policy = merged === undefined ? this.policy : compilePolicy(merged, this.scorer);
    const threshold = selectThreshold(policy, query, options.queryClass);
    const deadline = resolveDeadline(options, this.now);
    const signal = signalOverride ?? options.signal;
    const scoreOptions = signal === undefined && deadline === undefined ? NO_SCORE_OPTIONS : { signal, deadline };
    let approximate: CacheApproximateUse | undefined;
    if (this.approximateScope !== undefined) {
      const policyScope = merged === undefined ? this.approximateScope : policyFingerprint(merged);
      const scope = `${policyScope}\u0000${options.queryClass ?? ''}`;
      approximate = options.queryEmbedding === undefined ? { scope } : { scope, embedding: options.queryEmbedding };
    }
    return { t0, query, passages, queryClass: options.queryClass, policy, threshold, scoreOptions, approximate };
  }

  private async execute<P extends Passage>(
    call: PreparedCall<P>,
    sink: StreamSink<P> | undefined,
  ): Promise<GateResult<P>> {
    const { passages, policy } = call;
    const k = passages.length;
    const items: WorkingItem<P>[] = new Array(k);
    for (let i = 0; i < k; i++) items[i] = newWorkingItem(passages[i], i);
    let state = new DecisionState(policy, call.threshold);
    const ctx: ScoringContext = {
      scorer: this.scorer,
      cache: this.cache,
      query: call.query,
      options: call.scoreOptions,
      now: this.now,
      defaultTier: this.defaultTier,
      approximate: call.approximate,
      errors: undefined,
    };
    const scoringStart = performance.now();
    const earlyStop = policy.earlyStop;
    if (earlyStop === undefined) {
      await scoreRange(ctx, passages, items, 0, k);
      // An operating point chooses the call's threshold from the scored list (never with earlyStop).
      if (policy.operatingPoint !== undefined) {
        const cut = listCut(policy, items, call.threshold);
        state = new DecisionState(policy, cut.threshold, cut.rankingCut, cut.sufficiency);
      }
      for (let i = 0; i < k; i++) {
        decidePair(items[i], state);
        sink?.decided(items[i], state);
      }
    } else {
      const window = new EarlyStopWindow(earlyStop);
      const { signal, deadline } = call.scoreOptions;
      let next = 0;
      while (next < k) {
        const end = Math.min(k, next + earlyStop.chunk);
        await scoreRange(ctx, passages, items, next, end);
        for (let i = next; i < end; i++) {
          window.record(decidePair(items[i], state));
          sink?.decided(items[i], state);
        }
        const start = next;
        next = end;
        if (next >= k) break;
        // Out of time: the rest is unscored for that reason, not "stopped early". The chunk's own
        // outcome counts too: the deadline timer may fire a fraction of a millisecond before
        // now() reaches the deadline (timers run in whole milliseconds), and a scorer may give up
        // at the deadline itself; either way that chunk came back 'timeout' and the window must
        // not read those pairs as a falling pass rate.
        const limit = signal?.aborted
          ? 'aborted'
          : (limitOfChunk(items, start, end) ??
            (deadline !== undefined && this.now() >= deadline ? 'timeout' : undefined));
        if (limit !== undefined) {
          for (let i = next; i < k; i++) markUnscored(items[i], limit);
        } else if (!window.shouldStop()) continue;
        // Remaining pairs: skipped by early stop (no signals, no reason) or failed for the limit.
        for (let i = next; i < k; i++) decidePair(items[i], state);
        break;
      }
    }
    const scoringMs = performance.now() - scoringStart;
    const result = finalizeDecisions({
      query: call.query,
      queryClass: call.queryClass,
      items,
      state,
      scorerId: this.scorer.id,
      defaultTier: this.defaultTier,
      timings: { scoringMs, totalMs: performance.now() - call.t0 },
      errors: ctx.errors,
    });
    return result;
  }
}

/** The span of a gate call (src/util/tracing.ts): its decision in counts. */
const GATE_SPAN = 'relevance-gate.gate';

function resultAttributes(result: GateResult<Passage>): SpanAttributes {
  return {
    'relevance_gate.included': result.included.length,
    'relevance_gate.conflicting': result.conflicting.length,
    'relevance_gate.excluded': result.excluded.length,
    'relevance_gate.unscored': result.stats.unscored,
    'relevance_gate.insufficient_context': result.stats.insufficientContext,
  };
}

/** 'aborted' or 'timeout' when some pair of items[start, end) came back unscored for that limit. */
function limitOfChunk(
  items: readonly WorkingItem<Passage>[],
  start: number,
  end: number,
): 'aborted' | 'timeout' | undefined {
  let limit: 'timeout' | undefined;
  for (let i = start; i < end; i++) {
    const reason = items[i]!.reason;
    if (reason === 'aborted') return 'aborted';
    if (reason === 'timeout') limit = 'timeout';
  }
  return limit;
}

/** Reroute rebuilds the decision from every item list, the tier and the errors of the previous result. */
function isGateResult(value: unknown): value is GateResult {
  return hasGateResultFields(value, ['included', 'conflicting', 'excluded', 'errors'], ['tier']);
}

function rerouteCompiled<P extends Passage>(
  previous: GateResult<P>,
  policy: CompiledPolicy,
  options: RerouteOptions | undefined,
  defaultTier: string,
): GateResult<P> {
  const t0 = performance.now();
  if (!isGateResult(previous))
    throw new InvalidArgumentError('reroute needs a GateResult returned by filter/stream/reroute');
  const k = previous.included.length + previous.conflicting.length + previous.excluded.length;
  const items: WorkingItem<P>[] = new Array(k);
  for (const group of [previous.included, previous.conflicting, previous.excluded]) {
    for (const item of group) {
      if (!Number.isInteger(item.rank) || item.rank < 0 || item.rank >= k || items[item.rank] !== undefined) {
        throw new InvalidArgumentError(
          `reroute: result item ${JSON.stringify(item.id)} has an invalid or repeated rank ${String(item.rank)}`,
        );
      }
      items[item.rank] = reopenItem(item);
    }
  }
  const queryClass = options?.queryClass ?? previous.queryClass;
  const cut = listCut(policy, items, selectThreshold(policy, previous.query, queryClass));
  const state = new DecisionState(policy, cut.threshold, cut.rankingCut, cut.sufficiency);
  for (let i = 0; i < k; i++) decidePair(items[i], state);
  return finalizeDecisions({
    query: previous.query,
    queryClass,
    items,
    state,
    scorerId: previous.tier.scorer,
    defaultTier,
    timings: { scoringMs: 0, totalMs: performance.now() - t0 },
    errors: previous.errors.length === 0 ? undefined : [...previous.errors],
  });
}

/**
 * Re-decides a previous result under `policy` (a complete policy, not an override) without any
 * scoring. Pairs skipped by early stop or unscored stay so; only stored signals are re-read.
 */
export function rerouteResult<P extends Passage>(
  previous: GateResult<P>,
  policy: GatePolicy,
  options?: RerouteOptions,
): GateResult<P> {
  if (!isGateResult(previous))
    throw new InvalidArgumentError('reroute needs a GateResult returned by filter/stream/reroute');
  return rerouteCompiled(previous, compilePolicy(policy, { id: previous.tier.scorer }), options, previous.tier.scorer);
}

export function createGate(config: GateConfig): Gate {
  const gate = new GateImpl(config);
  warmDecisionPathOnce();
  return gate;
}

let decisionPathWarm = false;

/**
 * The first call of a process otherwise pays for compiling the whole decision path (validation,
 * the deadline race, the list cut, the decisions, the result), about 2 ms: once per process, the
 * first createGate runs one small call of each mode through it with a stand-in scorer, so a
 * request's first call is answered by its budget like every later one. The OpenTelemetry API is
 * looked up here too (~25 ms when installed), not in the first traced call.
 */
function warmDecisionPathOnce(): void {
  if (decisionPathWarm) return;
  decisionPathWarm = true;
  loadTracing();
  const scorer: Scorer = {
    id: 'relevance-gate/warm-up',
    score: async (_query, passages) =>
      passages.map((_, i) => ({
        probabilities: { relevant: 1 / (2 + i), ranking: 1 / (1.5 + i) },
        raw: { relevant: -i, ranking: -i },
      })),
  };
  const weights = { maxRelevance: 1, top3Relevance: 0, maxRanking: 0, top3Ranking: 0 };
  const point = { beta: 2, shift: 0, floor: 0.01, sufficiency: { weights, bias: 2 } };
  const policies: GatePolicy[] = [
    {
      operatingPoints: { precise: point, balanced: point, related: point },
      scoreCalibration: { pair: 1, weights, bias: 0 },
    },
    { threshold: 0.3, maxKept: 4 },
  ];
  const passages = Array.from({ length: 20 }, (_, i) => ({ id: `warm-up-${i}`, text: `warm-up passage ${i}` }));
  for (const policy of policies) {
    const gate = new GateImpl({ scorer, policy });
    gate.warmUp = true;
    // Synchronously, the decision itself (the list cut, each pair, the result) over stored
    // signals, as a reroute runs it; then, as soon as the event loop turns, a whole call.
    const compiled = compilePolicy(policy, scorer);
    const items = passages.map((p, i) => {
      const item = newWorkingItem(p, i);
      item.signals = { relevant: 1 / (2 + i), ranking: 1 / (1.5 + i) };
      item.raw = { relevant: -i, ranking: -i };
      item.tier = 'warm-up';
      return item;
    });
    const cut = listCut(compiled, items, selectThreshold(compiled, 'warm-up query', undefined));
    const state = new DecisionState(compiled, cut.threshold, cut.rankingCut, cut.sufficiency);
    for (const item of items) decidePair(item, state);
    finalizeDecisions({
      query: 'warm-up query',
      queryClass: undefined,
      items,
      state,
      scorerId: scorer.id,
      defaultTier: 'warm-up',
      timings: { scoringMs: 0, totalMs: 0 },
      errors: undefined,
    });
    gate
      .filter('warm-up query', passages, { budgetMs: 60_000 })
      .then((result) => gate.reroute(result))
      .catch(() => undefined);
  }
}
