/**
 * Approximate reuse (createScoreCache's `approximate` option, docs/cache.md *Approximate query
 * cache*): for the pairs of a request that neither L1 nor L2 holds, the scores a near-identical
 * earlier query got for the same passages (same scorer, same approximate scope), taken from L1
 * and marked `'approximate'`. Nothing reused is stored under the new query's key, so a wrong reuse
 * never spreads to exact hits. The query embedding comes from the request or from the `embed`
 * function; any problem with it (a throw, a bad vector, no answer in time) means the pairs are
 * scored, never an error.
 */
import { InvalidArgumentError } from '../../errors.js';
import { tokenize } from '../../features/tokenize.js';
import type { ScoreOptions } from '../../types.js';
import { rejectUnknownKeys } from '../../util/option-keys.js';
import { invalidArgument, nonEmptyString, positiveNumber } from '../../util/validate-options.js';
import type { CacheRequest } from '../cache-port.js';
import type { CallState } from '../call.js';
import { hasAnySignal } from '../entry.js';
import type { L1Cache } from '../l1-cache.js';
import { SCOPE_CHARS } from '../keys.js';
import type { PendingPair } from '../single-flight.js';
import type { CacheCounters } from '../stats.js';
import { QueryIndex, type QueryIndexOptions, type QueryIndexStats, unitVector } from './query-index.js';

/** Embeds a query for the approximate cache (e.g. an embedding scorer's `embed([q], { as: 'query' })`). */
export type EmbedQuery = (query: string, options: ScoreOptions) => Promise<Float32Array | readonly number[]>;

/** createScoreCache's `approximate` option: reuse of near-identical queries' scores (off unless given). */
export interface ApproximateCacheOptions extends QueryIndexOptions {
  /**
   * Cosine between two query embeddings at or above which the earlier query's scores are reused.
   * Default DEFAULT_APPROXIMATE_THRESHOLD (measured, docs/cache.md).
   */
  readonly threshold?: number;
  /**
   * Embeds a query. Without it only requests that carry their own embedding (the gate's
   * `queryEmbedding` option) take part.
   */
  readonly embed?: EmbedQuery;
  /**
   * The embedding model's name: vectors are only compared within one model. Requests' own
   * embeddings must come from this model too. Default 'default'.
   */
  readonly model?: string;
  /** Longest wait for `embed` before the pairs are scored instead (also at most half the time to the deadline). Default 50 ms. */
  readonly embedTimeoutMs?: number;
  /**
   * Least share of content terms (stemmed words without stop words, as the fast path tokenizes)
   * two queries must have in common, |A ∩ B| / |A ∪ B|, besides the cosine. Default 1: the same
   * content words in any order. Embeddings put a typo or an antonym ("increases" / "decreases")
   * at cosine 0.97–0.99 while a lexical scorer decides differently (docs/cache.md). 0: cosine only.
   */
  readonly minTermOverlap?: number;
}

/**
 * The lowest threshold at which false reuse (a reused pair decided differently than when scored
 * fresh) was ≤ 1 % on every collection of bench/approximate-cache.ts, with the default term guard
 * (docs/cache.md, *Approximate query cache*).
 */
export const DEFAULT_APPROXIMATE_THRESHOLD = 0.96;
export const DEFAULT_EMBED_TIMEOUT_MS = 50;
export const DEFAULT_MIN_TERM_OVERLAP = 1;

/** The query's content terms, or undefined when they cannot be had (no reuse then). */
function contentTerms(query: string): ReadonlySet<string> | undefined {
  try {
    return new Set(tokenize(query));
  } catch {
    return undefined;
  }
}

/** |a ∩ b| / |a ∪ b|; two empty sets (queries of stop words only) count as equal. */
function termOverlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

const OPTION_KEYS: Readonly<Record<keyof ApproximateCacheOptions, true>> = {
  threshold: true,
  embed: true,
  model: true,
  embedTimeoutMs: true,
  minTermOverlap: true,
  maxQueries: true,
  maxBytes: true,
  maxPassagesPerQuery: true,
  bands: true,
  bitsPerBand: true,
  seed: true,
  maxMatches: true,
};
const KEYS: ReadonlySet<string> = new Set(Object.keys(OPTION_KEYS));

export interface ApproximateSettings {
  readonly threshold: number;
  readonly embed: EmbedQuery | undefined;
  readonly model: string;
  readonly embedTimeoutMs: number;
  readonly minTermOverlap: number;
  readonly index: QueryIndexOptions;
}

export function resolveApproximateOptions(options: ApproximateCacheOptions): ApproximateSettings {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw invalidArgument('approximate', 'an object { threshold?, embed?, ... }', options);
  rejectUnknownKeys(options, KEYS, 'approximate');
  const threshold = options.threshold ?? DEFAULT_APPROXIMATE_THRESHOLD;
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1))
    throw invalidArgument('approximate.threshold', 'a cosine in (0, 1]', threshold);
  if (options.embed !== undefined && typeof options.embed !== 'function')
    throw invalidArgument('approximate.embed', 'a function (query, options) => Promise<Float32Array>', options.embed);
  const minTermOverlap = options.minTermOverlap ?? DEFAULT_MIN_TERM_OVERLAP;
  if (typeof minTermOverlap !== 'number' || !(minTermOverlap >= 0 && minTermOverlap <= 1))
    throw invalidArgument('approximate.minTermOverlap', 'a share in [0, 1]', minTermOverlap);
  const settings: ApproximateSettings = {
    minTermOverlap,
    threshold,
    embed: options.embed,
    model: nonEmptyString('approximate.model', options.model ?? 'default'),
    embedTimeoutMs: positiveNumber('approximate.embedTimeoutMs', options.embedTimeoutMs ?? DEFAULT_EMBED_TIMEOUT_MS),
    index: options,
  };
  // Builds (and so validates) the index options now, at creation.
  new QueryIndex(options);
  return settings;
}

/** What a request of the approximate path needs: its embedding (pending) and the index partition. */
export interface ApproximateCall {
  readonly embedding: Promise<Float32Array | undefined>;
  readonly partition: string;
  /** The query's content terms when minTermOverlap > 0 (undefined then: nothing is reused). */
  readonly terms: ReadonlySet<string> | undefined;
}

export class ApproximateReuse {
  private readonly index: QueryIndex;

  constructor(
    private readonly settings: ApproximateSettings,
    private readonly l1: L1Cache,
    private readonly counters: CacheCounters,
    private readonly clock: () => number,
  ) {
    this.index = new QueryIndex(settings.index);
  }

  stats(): QueryIndexStats {
    return this.index.stats();
  }

  clear(): void {
    this.index.clear();
  }

  /**
   * Starts obtaining the query embedding of a request that takes part (it says `approximate`);
   * undefined when it does not, or when no embedding can be had. The promise never rejects.
   */
  begin(request: CacheRequest, options: ScoreOptions): ApproximateCall | undefined {
    const use = request.approximate;
    if (use === undefined) return undefined;
    const partition = `${request.scorerId.length}:${request.scorerId}|${(request.metadataKeys ?? []).join('\u0001')}|${use.scope.length}:${use.scope}|${this.settings.model}`;
    const terms = this.settings.minTermOverlap > 0 ? contentTerms(request.query) : undefined;
    if (use.embedding !== undefined) {
      const vector = unitVector(use.embedding);
      if (vector === undefined) this.counters.approximateEmbedFailures++;
      return { embedding: Promise.resolve(vector), partition, terms };
    }
    const embed = this.settings.embed;
    if (embed === undefined) return undefined;
    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(embed(request.query, { signal: options.signal, deadline: options.deadline }));
    } catch (error) {
      pending = Promise.reject(error);
    }
    const embedding = pending.then(
      (value) => {
        const vector = unitVector(value);
        if (vector === undefined) this.counters.approximateEmbedFailures++;
        return vector;
      },
      () => {
        this.counters.approximateEmbedFailures++;
        return undefined;
      },
    );
    return { embedding, partition, terms };
  }

  /**
   * Serves what it can of `pairs` (this call's pairs that L1 and L2 did not have) from the
   * scores of similar earlier queries in L1, into `call`, and returns the pairs still to score
   * and the ones served (whose flights and leases the caller ends: nothing is stored for them).
   */
  async serve(
    state: CallState,
    pairs: PendingPair[],
    call: ApproximateCall,
    scope: string,
    options: ScoreOptions,
  ): Promise<{ rest: PendingPair[]; served: PendingPair[] }> {
    const none = { rest: pairs, served: [] };
    const vector = await this.wait(call.embedding, options);
    if (vector === undefined) return none;
    const partition = `${call.partition}|${vector.length}`;
    this.counters.approximateLookups++;
    const near = this.index.find(partition, vector, this.settings.threshold, scope);
    const min = this.settings.minTermOverlap;
    const matches =
      min === 0
        ? near
        : near.filter(
            (m) =>
              call.terms !== undefined && m.query.terms !== undefined && termOverlap(call.terms, m.query.terms) >= min,
          );
    if (matches.length === 0) return none;
    const now = this.clock();
    const rest: PendingPair[] = [];
    const served: PendingPair[] = [];
    for (const pair of pairs) {
      const passage = pair.key.slice(SCOPE_CHARS);
      let found = false;
      for (const match of matches) {
        if (!match.query.passages.has(passage)) continue;
        const entry = this.l1.get(match.query.scope + passage, now);
        if (entry === undefined) {
          this.index.forgetPassage(partition, match.query, passage);
          continue;
        }
        if (!hasAnySignal(entry.result, state.required)) continue;
        state.results[pair.index] = entry.result;
        state.cached[pair.index] = 'approximate';
        this.counters.approximateHits++;
        this.index.touch(partition, match.query);
        found = true;
        break;
      }
      (found ? served : rest).push(pair);
    }
    return { rest, served };
  }

  /**
   * Remembers the call's query with the passages whose scores L1 now holds under its scope
   * (`keys`: full cache keys), once its embedding is there; never waits, never throws.
   */
  remember(call: ApproximateCall, scope: string, keys: readonly string[]): void {
    if (keys.length === 0) return;
    call.embedding.then((vector) => {
      if (vector === undefined) return;
      this.index.remember(
        `${call.partition}|${vector.length}`,
        scope,
        vector,
        keys.map((key) => key.slice(SCOPE_CHARS)),
        call.terms,
      );
    });
  }

  /** The embedding if it comes within the wait bound (embedTimeoutMs, half the time to the deadline), else undefined. */
  private async wait(
    embedding: Promise<Float32Array | undefined>,
    options: ScoreOptions,
  ): Promise<Float32Array | undefined> {
    let bound = this.settings.embedTimeoutMs;
    if (options.deadline !== undefined) bound = Math.min(bound, (options.deadline - Date.now()) / 2);
    if (!(bound >= 1) || options.signal?.aborted) {
      this.counters.approximateEmbedTimeouts++;
      return undefined;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = Symbol('late');
    const outcome = await Promise.race([
      embedding,
      new Promise<typeof late>((resolve) => {
        timer = setTimeout(() => resolve(late), bound);
      }),
    ]);
    clearTimeout(timer);
    if (outcome === late) {
      this.counters.approximateEmbedTimeouts++;
      return undefined;
    }
    return outcome;
  }
}

/** Whether `value` is a usable request embedding (the gate checks the caller's before any scoring). */
export function checkQueryEmbedding(value: unknown, name: string): void {
  if (unitVector(value) === undefined)
    throw new InvalidArgumentError(
      `${name} must be a Float32Array or an array of finite numbers, not all zero, of at most 16384 values`,
    );
}
