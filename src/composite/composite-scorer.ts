/**
 * One tier assembled from several models: `createCompositeScorer` runs every member on the same
 * pairs concurrently (each batched by its own tier, e.g. a cross-encoder's dynamic batcher) and
 * merges their signals per pair, in input order. A member that throws, is cancelled or has not
 * answered by the answer time leaves its own signals missing for that call; the other members'
 * signals are kept and the gate's rules for a missing signal decide (fail closed by default).
 * With a cache, each member's answers are looked up and stored under that member's scorer id,
 * so adding or changing one member leaves the others' entries valid. See docs/signal-composition.md.
 */
import { createHash } from 'node:crypto';
import type { PairScoreCache } from '../cache/cache-port.js';
import { AbortedError, DeadlineExceededError, InvalidArgumentError } from '../errors.js';
import { isUsablePairResult } from '../scoring/pair-result.js';
import { ABORTED, type RaceOutcome, raceLimits, TIMED_OUT } from '../scoring/race-limits.js';
import {
  type DetailedPairScore,
  isDetailedPairScore,
  type Passage,
  type Scorer,
  type ScoreOptions,
  type ScorerPairResult,
} from '../types.js';
import { rejectUnknownKeys } from '../util/option-keys.js';
import { CompositeConfigError, CompositeMemberResultError } from './errors.js';
import { type MemberAnswers, mergePair } from './merge.js';
import { type CompiledMember, type CompositeMember, compileMembers } from './members.js';

export interface CompositeScorerOptions {
  /** The models, each feeding some product signals; a product signal comes from exactly one member. */
  readonly members: readonly CompositeMember[];
  /**
   * Per-member score cache (e.g. `createScoreCache({ maxBytes })`): each member's answers are
   * stored under its scorer id, as the member returned them (all its labels); an entry is served
   * and stored when it carries one of the member's mapped labels. Give this cache to the
   * composite, not to the gate (which would store merged results under the composite's id).
   */
  readonly cache?: PairScoreCache;
  /**
   * The composite answers this long before the caller's deadline, with whatever members have
   * answered, so the answer reaches the caller (and the gate's own deadline race) in time. Default 2 ms.
   */
  readonly returnMarginMs?: number;
}

export interface CompositeMemberStats {
  readonly id: string;
  readonly scorerId: string;
  /** Calls of the member's score() (with a cache: one per composite call that had misses for it). */
  readonly calls: number;
  /** Pairs the member was asked to score. */
  readonly pairsScored: number;
  /** Pairs the cache answered for this member. */
  readonly cacheHits: number;
  /** Composite calls in which the member (or its cache lookup) threw: its signals were missing for the call. */
  readonly failures: number;
  /** Composite calls in which the member had not answered by the answer time, or rejected with a deadline error. */
  readonly timeouts: number;
  /** Pairs of answered calls with no usable answer from the member (null, an invalid value, or none of its mapped labels). */
  readonly unusablePairs: number;
  /** Message of the member's last failure. */
  readonly lastError: string | undefined;
}

export interface CompositeStats {
  /** score() calls that reached the members. */
  readonly calls: number;
  readonly members: readonly CompositeMemberStats[];
}

export interface CompositeMemberInfo {
  readonly id: string;
  readonly scorerId: string;
  /** Product signal → member label. */
  readonly signals: Readonly<Record<string, string>>;
}

/** A Scorer whose signals are the union of its members'. */
export interface CompositeScorer extends Scorer {
  /** `composite:` + a hash of every member's scorer id, id and signal map (changes when any of them does). */
  readonly id: string;
  /** The product signals, member by member in the order given. */
  readonly signals: readonly string[];
  readonly members: readonly CompositeMemberInfo[];
  score(query: string, passages: readonly Passage[], options?: ScoreOptions): Promise<Array<DetailedPairScore | null>>;
  /** Counters since creation (a copy). */
  stats(): CompositeStats;
}

export const DEFAULT_COMPOSITE_RETURN_MARGIN_MS = 2;

const OPTION_KEYS: ReadonlySet<string> = new Set(['members', 'cache', 'returnMarginMs']);

type MutableMemberStats = { -readonly [K in keyof CompositeMemberStats]: CompositeMemberStats[K] };

/** How one member's part of a call ended. */
type MemberOutcome =
  | { readonly kind: 'answered'; readonly results: ReadonlyArray<ScorerPairResult> }
  | { readonly kind: 'failed'; readonly error: unknown };

export function createCompositeScorer(options: CompositeScorerOptions): CompositeScorer {
  if (typeof options !== 'object' || options === null)
    throw new CompositeConfigError('options', 'createCompositeScorer needs { members, cache?, returnMarginMs? }');
  rejectUnknownKeys(
    options,
    OPTION_KEYS,
    '',
    'an option of createCompositeScorer',
    (field, problem) => new CompositeConfigError(field, problem),
  );
  const members = compileMembers(options.members);
  const cache = options.cache;
  if (cache !== undefined && (typeof cache !== 'object' || cache === null || typeof cache.resolve !== 'function'))
    throw new CompositeConfigError('cache', 'must be a score cache (an object with resolve(), e.g. createScoreCache)');
  const margin = options.returnMarginMs ?? DEFAULT_COMPOSITE_RETURN_MARGIN_MS;
  if (typeof margin !== 'number' || !Number.isFinite(margin) || margin < 0)
    throw new CompositeConfigError('returnMarginMs', `must be a finite number ≥ 0, got ${String(margin)}`);
  return new Composite(members, cache, margin);
}

function compositeId(members: readonly CompiledMember[]): string {
  const identity = JSON.stringify(members.map((m) => [m.scorer.id, m.id, m.mapping]));
  return `composite:${createHash('sha256').update(identity).digest('hex').slice(0, 16)}`;
}

function unionMetadataKeys(members: readonly CompiledMember[]): readonly string[] | undefined {
  const keys = new Set<string>();
  for (const m of members) for (const key of m.scorer.metadataKeys ?? []) keys.add(key);
  return keys.size === 0 ? undefined : Object.freeze([...keys].sort());
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isDeadlineError(error: unknown): boolean {
  return error instanceof DeadlineExceededError || (error instanceof Error && error.name === 'TimeoutError');
}

const CALL_OPTION_KEYS: ReadonlySet<string> = new Set(['signal', 'deadline']);

function validateCall(query: unknown, passages: unknown, options: ScoreOptions | undefined): ScoreOptions {
  if (typeof query !== 'string') throw new InvalidArgumentError(`query must be a string, got ${typeof query}`);
  if (!Array.isArray(passages)) throw new InvalidArgumentError('passages must be an array of Passage');
  for (let i = 0; i < passages.length; i++) {
    const p = passages[i] as Partial<Passage> | null;
    if (typeof p !== 'object' || p === null || typeof p.id !== 'string' || typeof p.text !== 'string')
      throw new InvalidArgumentError(`passages[${i}] must be a Passage with string id and text`);
    if (p.title !== undefined && typeof p.title !== 'string')
      throw new InvalidArgumentError(`passages[${i}].title must be a string when given`);
  }
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw new InvalidArgumentError(`options must be an object, got ${typeof options}`);
  rejectUnknownKeys(options, CALL_OPTION_KEYS, 'options');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new InvalidArgumentError('options.signal must be an AbortSignal');
  if (options.deadline !== undefined && (typeof options.deadline !== 'number' || Number.isNaN(options.deadline)))
    throw new InvalidArgumentError('options.deadline must be a number (ms on the Date.now() clock)');
  return options;
}

class Composite implements CompositeScorer {
  readonly id: string;
  readonly signals: readonly string[];
  readonly metadataKeys: readonly string[] | undefined;
  readonly members: readonly CompositeMemberInfo[];
  private calls = 0;
  private readonly memberStats: MutableMemberStats[];

  constructor(
    private readonly compiled: readonly CompiledMember[],
    private readonly cache: PairScoreCache | undefined,
    private readonly returnMarginMs: number,
  ) {
    this.id = compositeId(compiled);
    this.signals = Object.freeze(compiled.flatMap((m) => m.mapping.map(([signal]) => signal)));
    this.metadataKeys = unionMetadataKeys(compiled);
    this.members = Object.freeze(
      compiled.map((m) =>
        Object.freeze({ id: m.id, scorerId: m.scorer.id, signals: Object.freeze(Object.fromEntries(m.mapping)) }),
      ),
    );
    this.memberStats = compiled.map((m) => ({
      id: m.id,
      scorerId: m.scorer.id,
      calls: 0,
      pairsScored: 0,
      cacheHits: 0,
      failures: 0,
      timeouts: 0,
      unusablePairs: 0,
      lastError: undefined,
    }));
  }

  async score(
    query: string,
    passages: readonly Passage[],
    callOptions?: ScoreOptions,
  ): Promise<Array<DetailedPairScore | null>> {
    const { signal, deadline } = validateCall(query, passages, callOptions);
    if (signal?.aborted) throw new AbortedError('the operation was aborted', { cause: signal.reason });
    const n = passages.length;
    if (n === 0) return [];
    const answerBy = deadline === undefined ? undefined : deadline - this.returnMarginMs;
    if (answerBy !== undefined && Date.now() >= answerBy)
      throw new DeadlineExceededError('the deadline left no time to score (composite return margin included)');
    this.calls++;

    // Members get their own signal: aborted when the caller aborts, and at the answer time, so
    // work still queued in a member's tier is cancelled instead of run for nobody.
    const controller = new AbortController();
    const onCallerAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    const memberOptions: ScoreOptions =
      answerBy === undefined ? { signal: controller.signal } : { signal: controller.signal, deadline: answerBy };

    const outcomes = new Array<MemberOutcome | undefined>(this.compiled.length);
    const work = this.compiled.map((member, k) =>
      this.runMember(member, query, passages, memberOptions).then(
        (results) => {
          outcomes[k] ??= { kind: 'answered', results };
        },
        (error: unknown) => {
          outcomes[k] ??= { kind: 'failed', error };
        },
      ),
    );
    let race: RaceOutcome<unknown>;
    try {
      race = await raceLimits(Promise.all(work), signal, answerBy, Date.now);
    } finally {
      signal?.removeEventListener('abort', onCallerAbort);
    }
    if (race === ABORTED || signal?.aborted) {
      controller.abort(signal?.reason);
      throw new AbortedError('the operation was aborted', { cause: signal?.reason });
    }
    if (race === TIMED_OUT) {
      // Answer time: what has not answered now is missing for this call (a late answer is dropped).
      const late = new DeadlineExceededError('the member had not answered by the answer time');
      for (let k = 0; k < outcomes.length; k++) outcomes[k] ??= { kind: 'failed', error: late };
      controller.abort(late);
    }
    return this.merge(outcomes as MemberOutcome[], n);
  }

  stats(): CompositeStats {
    return { calls: this.calls, members: this.memberStats.map((s) => ({ ...s })) };
  }

  /** One member's answers for the call: through the cache when there is one, else straight to the member. */
  private async runMember(
    member: CompiledMember,
    query: string,
    passages: readonly Passage[],
    options: ScoreOptions,
  ): Promise<ReadonlyArray<ScorerPairResult>> {
    const stats = this.memberStats[member.index];
    const scoreSome = async (
      subset: readonly Passage[],
      subOptions: ScoreOptions,
    ): Promise<ReadonlyArray<ScorerPairResult>> => {
      stats.calls++;
      stats.pairsScored += subset.length;
      const results: unknown = await member.scorer.score(query, subset, subOptions);
      if (!Array.isArray(results) || results.length !== subset.length)
        throw new CompositeMemberResultError(
          member.id,
          `returned ${Array.isArray(results) ? `${results.length} results` : typeof results} for ${subset.length} passages`,
        );
      // Unusable answers go on as null, so the cache never stores them.
      return (results as ScorerPairResult[]).map((r) => (isUsablePairResult(r) ? r : null));
    };
    const cache = this.cache;
    if (cache === undefined) return scoreSome(passages, options);
    const resolution = await cache.resolve(
      {
        scorerId: member.scorer.id,
        metadataKeys: member.scorer.metadataKeys,
        query,
        passages,
        // The member's own labels, not the cache's default ['relevant']: an NLI or injection
        // member's entries carry no relevance signal and must still be cached and served.
        requiredSignals: member.requiredLabels,
      },
      (missIndices, missOptions) =>
        scoreSome(
          missIndices.map((i) => passages[i]),
          missOptions,
        ),
      options,
    );
    for (const hit of resolution.cached) if (hit) stats.cacheHits++;
    return resolution.results;
  }

  private merge(outcomes: readonly MemberOutcome[], n: number): Array<DetailedPairScore | null> {
    const answers: MemberAnswers[] = new Array(outcomes.length);
    let firstError: unknown;
    let allTimedOut = true;
    for (let k = 0; k < outcomes.length; k++) {
      const outcome = outcomes[k];
      const stats = this.memberStats[k];
      if (outcome.kind === 'failed') {
        answers[k] = undefined;
        stats.lastError = errorMessage(outcome.error);
        if (isDeadlineError(outcome.error)) stats.timeouts++;
        else {
          stats.failures++;
          allTimedOut = false;
        }
        firstError ??= outcome.error;
        continue;
      }
      allTimedOut = false;
      answers[k] = outcome.results;
      const mapping = this.compiled[k].mapping;
      for (const result of outcome.results) {
        if (!isUsablePairResult(result)) {
          stats.unusablePairs++;
          continue;
        }
        const probabilities = isDetailedPairScore(result) ? result.probabilities : result;
        if (!mapping.some(([, label]) => Object.hasOwn(probabilities, label))) stats.unusablePairs++;
      }
    }
    // Nobody answered: say why (a deadline, or the first member's error) instead of n empty pairs.
    if (answers.every((a) => a === undefined)) {
      if (allTimedOut) throw new DeadlineExceededError('no member of the composite answered by the answer time');
      throw firstError;
    }
    const out = new Array<DetailedPairScore | null>(n);
    for (let i = 0; i < n; i++) out[i] = mergePair(this.compiled, answers, i);
    return out;
  }
}
