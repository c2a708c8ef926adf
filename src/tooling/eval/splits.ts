/**
 * Query splits for training and evaluation. QUERIES are split, never documents: every split searches
 * the whole corpus. Deterministic: judged query ids are sorted (compareIds), then shuffled with a
 * seeded PRNG (mulberry32 seeded from FNV-1a of `${seed}:${collection name}`), then cut; each split
 * is returned sorted by id.
 *
 * - Collections with an official training split (qrels_train.tsv, i.e. SciFact): train + validation
 *   come from the official training queries (validation = `validationShareOfTrain`), test = the
 *   queries judged in qrels.tsv (the official test split).
 * - Others: judged queries of qrels.tsv cut `train : validation : test` by the given shares
 *   (default 60/20/20; rounding: test and validation get round(share × n), train the rest).
 */
import { InvalidArgumentError } from '../../errors.js';
import { fnv1a, mulberry32 as seededRandom } from '../../util/seeded-random.js';
import { type Collection, compareIds, judgedQueryIds } from './collection.js';

export interface QuerySplit {
  readonly train: readonly string[];
  readonly validation: readonly string[];
  readonly test: readonly string[];
}

export interface SplitOptions {
  readonly seed: number;
  /** Shares for collections without an official split. Must sum to 1. */
  readonly shares?: { readonly train: number; readonly validation: number; readonly test: number };
  /** Share of the official training queries held out for validation (SciFact). */
  readonly validationShareOfTrain?: number;
}

export type SplitName = keyof QuerySplit;

/** Seeds and the PRNG live in src/util/seeded-random.ts; re-exported for existing callers. */
export { fnv1a, seededRandom };

/** Fisher–Yates shuffle of a copy, driven by `random`. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export function splitQueries(collection: Collection, options: SplitOptions): QuerySplit {
  const shares = options.shares ?? { train: 0.6, validation: 0.2, test: 0.2 };
  const vShare = options.validationShareOfTrain ?? 0.2;
  const sum = shares.train + shares.validation + shares.test;
  if (Math.abs(sum - 1) > 1e-9 || shares.train <= 0 || shares.validation < 0 || shares.test < 0) {
    throw new InvalidArgumentError(`split shares must be non-negative, train > 0, and sum to 1 (got ${sum})`);
  }
  if (!(vShare >= 0 && vShare < 1))
    throw new InvalidArgumentError(`validationShareOfTrain must be in [0, 1), got ${vShare}`);
  if (!Number.isInteger(options.seed)) throw new InvalidArgumentError(`seed must be an integer, got ${options.seed}`);
  const random = seededRandom(fnv1a(`${options.seed}:${collection.name}`));

  if (collection.trainQrels) {
    const test = judgedQueryIds(collection.qrels);
    const testSet = new Set(test);
    const trainPool = shuffled(
      judgedQueryIds(collection.trainQrels).filter((q) => !testSet.has(q)),
      random,
    );
    const nVal = Math.round(vShare * trainPool.length);
    return {
      train: trainPool.slice(nVal).sort(compareIds),
      validation: trainPool.slice(0, nVal).sort(compareIds),
      test,
    };
  }
  const pool = shuffled(judgedQueryIds(collection.qrels), random);
  const nTest = Math.round(shares.test * pool.length);
  const nVal = Math.round(shares.validation * pool.length);
  return {
    test: pool.slice(0, nTest).sort(compareIds),
    validation: pool.slice(nTest, nTest + nVal).sort(compareIds),
    train: pool.slice(nTest + nVal).sort(compareIds),
  };
}
