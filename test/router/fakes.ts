/**
 * Fake tiers for router tests: scorers with controllable latency that honour AbortSignal and
 * deadlines, and count the pairs they actually executed.
 */
import { AbortedError, DeadlineExceededError } from '../../src/errors.js';
import type { RoutedPairScore, TierSpec } from '../../src/router/types.js';
import type { Passage, Scorer, ScoreOptions, ScorerPairResult } from '../../src/types.js';

/** The inline fast-path tier of a two-tier router. */
export const fastPath = (s: Scorer): TierSpec => ({ name: 'fast-path', scorer: s, quality: 1, inline: true });

/** The slow cross-encoder tier of a two-tier router, with any other spec fields. */
export const ce = (s: Scorer, extra: Partial<TierSpec> = {}): TierSpec => ({
  name: 'cross-encoder',
  scorer: s,
  quality: 2,
  ...extra,
});

/** A router answer read with its routing fields (tier, degraded). */
export const routed = (r: unknown): RoutedPairScore => r as RoutedPairScore;

export function passages(k: number, prefix = 'p'): Passage[] {
  return Array.from({ length: k }, (_, i) => ({ id: `${prefix}${i}`, text: `passage text ${prefix} ${i}` }));
}

export interface CountingScorer extends Scorer {
  /** Passage ids per call, in call order. */
  readonly calls: string[][];
  /** Passage ids whose scoring actually ran (not cancelled before starting). */
  readonly executed: string[];
}

/** A tier that answers at once with `relevance(passage id)`, counting the pairs it scored. */
function answeringTier(
  id: string,
  tier: 'fast-path' | 'cross-encoder',
  raw: number,
  relevance: (id: string) => number,
): CountingScorer {
  const calls: string[][] = [];
  const executed: string[] = [];
  return {
    id,
    calls,
    executed,
    async score(_query, ps) {
      calls.push(ps.map((p) => p.id));
      executed.push(...ps.map((p) => p.id));
      return ps.map((p) => ({ probabilities: { relevant: relevance(p.id) }, raw: { relevant: raw }, tier }));
    },
  };
}

/** An inline fast tier: relevance from `relevance(passage index in its id)`, answered at once. */
export function fastTier(relevance: (id: string) => number, id = 'fake-fast-path'): CountingScorer {
  return answeringTier(id, 'fast-path', 0, relevance);
}

export interface SlowTierOptions {
  /** ms one call takes once it starts. */
  readonly latencyMs: number;
  /** Calls run one at a time, FIFO (a single worker); a call aborted while queued never runs. */
  readonly id?: string;
  readonly relevance?: (id: string) => number;
  readonly fail?: (ids: string[]) => Error | undefined;
}

/**
 * A slow tier with ONE worker: calls queue FIFO; a call whose signal fires or whose deadline passes
 * while queued is dropped without running; a running call is not interrupted (like a batch on a
 * worker) but its result is discarded when its caller has gone.
 */
export function slowTier(options: SlowTierOptions): CountingScorer {
  const calls: string[][] = [];
  const executed: string[] = [];
  const queue: Array<() => void> = [];
  let busy = false;
  const next = (): void => {
    if (busy) return;
    const run = queue.shift();
    if (run !== undefined) run();
  };
  return {
    id: options.id ?? 'fake-ce',
    calls,
    executed,
    score(_query, ps, opts?: ScoreOptions): Promise<ReadonlyArray<ScorerPairResult>> {
      const ids = ps.map((p) => p.id);
      calls.push(ids);
      return new Promise((resolve, reject) => {
        let settled = false;
        let started = false;
        const cancel = (error: Error): void => {
          if (settled) return;
          settled = true;
          if (!started) {
            const at = queue.indexOf(run);
            if (at >= 0) queue.splice(at, 1);
          }
          reject(error);
        };
        const onAbort = (): void => cancel(new AbortedError());
        opts?.signal?.addEventListener('abort', onAbort, { once: true });
        const timer =
          opts?.deadline === undefined
            ? undefined
            : setTimeout(() => cancel(new DeadlineExceededError()), Math.max(0, opts.deadline - Date.now()));
        const run = (): void => {
          started = true;
          busy = true;
          executed.push(...ids);
          setTimeout(() => {
            busy = false;
            if (timer !== undefined) clearTimeout(timer);
            opts?.signal?.removeEventListener('abort', onAbort);
            if (!settled) {
              settled = true;
              const error = options.fail?.(ids);
              if (error !== undefined) reject(error);
              else
                resolve(
                  ids.map((id) => ({
                    probabilities: { relevant: options.relevance?.(id) ?? 0.9 },
                    raw: { relevant: 2 },
                    tier: 'cross-encoder',
                  })),
                );
            }
            next();
          }, options.latencyMs);
        };
        queue.push(run);
        next();
      });
    },
  };
}

/** A tier that answers at once (a fast "slow tier"), counting pairs. */
export function instantTier(id = 'fake-ce', relevance: (id: string) => number = () => 0.9): CountingScorer {
  return answeringTier(id, 'cross-encoder', 1, relevance);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Index from an id like p7. */
export function indexOf(id: string): number {
  return Number(id.replace(/^\D+/, ''));
}

/** A slow tier whose calls never settle, recording the deadline each call was given. */
export function hangingTier(): Scorer & { deadlines: Array<number | undefined> } {
  const deadlines: Array<number | undefined> = [];
  return {
    id: 'hanging-ce',
    deadlines,
    score: (_q, _ps, options?: ScoreOptions) => {
      deadlines.push(options?.deadline);
      return new Promise<never>(() => undefined);
    },
  };
}
