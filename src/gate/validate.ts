/**
 * Request validation: the gate refuses malformed input with typed errors before any scoring, so
 * a bad request can never produce a silently wrong decision.
 */
import { InvalidArgumentError } from '../errors.js';
import type { Passage } from '../types.js';
import { checkQueryEmbedding } from '../cache/approximate/approximate-reuse.js';
import { checkPassage } from '../scoring/passages.js';
import { nonNegativeLimit } from '../util/validate-options.js';
import { DuplicatePassageIdError } from './errors.js';
import type { FilterOptions, GateResult } from './types.js';

export function validateQuery(query: unknown): asserts query is string {
  if (typeof query !== 'string')
    throw new InvalidArgumentError(`query must be a string, got ${query === null ? 'null' : typeof query}`);
  if (query.trim().length === 0) throw new InvalidArgumentError('query must not be empty or only whitespace');
}

/** Validates shape, size bound and id uniqueness. */
export function validatePassages(passages: unknown, maxPassages: number): asserts passages is readonly Passage[] {
  if (!Array.isArray(passages)) throw new InvalidArgumentError('passages must be an array');
  const k = passages.length;
  if (k > maxPassages) throw new InvalidArgumentError(`too many passages: ${k} > maxPassages ${maxPassages}`);
  if (k <= 16) {
    // Small k: pairwise comparison beats building a Set (the common k = 10..20 case).
    for (let i = 0; i < k; i++) {
      checkPassage(passages[i], i);
      const id = (passages[i] as Passage).id;
      for (let j = 0; j < i; j++) if ((passages[j] as Passage).id === id) throw new DuplicatePassageIdError(id, j, i);
    }
    return;
  }
  const seen = new Map<string, number>();
  for (let i = 0; i < k; i++) {
    checkPassage(passages[i], i);
    const id = (passages[i] as Passage).id;
    const first = seen.get(id);
    if (first !== undefined) throw new DuplicatePassageIdError(id, first, i);
    seen.set(id, i);
  }
}

/** The call's absolute deadline (the earlier of `deadline` and now + `budgetMs`), or undefined. */
export function resolveDeadline(options: FilterOptions, now: () => number): number | undefined {
  const { deadline, budgetMs } = options;
  if (deadline !== undefined && (typeof deadline !== 'number' || Number.isNaN(deadline)))
    throw new InvalidArgumentError(`deadline must be a number (ms on the Date.now() clock), got ${String(deadline)}`);
  if (budgetMs !== undefined) nonNegativeLimit('budgetMs', budgetMs);
  if (budgetMs === undefined) return deadline === Number.POSITIVE_INFINITY ? undefined : deadline;
  const fromBudget = now() + budgetMs;
  return deadline === undefined || fromBudget < deadline ? fromBudget : deadline;
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  'signal',
  'deadline',
  'budgetMs',
  'policy',
  'queryClass',
  'queryEmbedding',
]);

export function validateOptions(options: unknown): asserts options is FilterOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options must be an object');
  // A misspelt budget (e.g. `timeoutMs`) must not silently mean "no deadline".
  for (const key in options)
    if (!OPTION_KEYS.has(key))
      throw new InvalidArgumentError(
        `options.${key} is not a filter option (signal, deadline, budgetMs, policy, queryClass, queryEmbedding)`,
      );
  const { signal, queryClass } = options as FilterOptions;
  if (
    signal !== undefined &&
    (typeof signal !== 'object' ||
      signal === null ||
      typeof signal.aborted !== 'boolean' ||
      typeof signal.addEventListener !== 'function')
  ) {
    throw new InvalidArgumentError('options.signal must be an AbortSignal');
  }
  if (queryClass !== undefined && typeof queryClass !== 'string')
    throw new InvalidArgumentError('options.queryClass must be a string');
  const { queryEmbedding } = options as FilterOptions;
  if (queryEmbedding !== undefined) checkQueryEmbedding(queryEmbedding, 'options.queryEmbedding');
}

/**
 * Whether `value` has a GateResult's string `query` and the array and object fields a consumer
 * reads (each consumer names its own, so it refuses exactly what it could not use).
 */
export function hasGateResultFields(
  value: unknown,
  arrays: ReadonlyArray<keyof GateResult>,
  objects: ReadonlyArray<keyof GateResult>,
): value is GateResult {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<keyof GateResult, unknown>;
  return (
    typeof r.query === 'string' &&
    arrays.every((key) => Array.isArray(r[key])) &&
    objects.every((key) => typeof r[key] === 'object' && r[key] !== null)
  );
}
