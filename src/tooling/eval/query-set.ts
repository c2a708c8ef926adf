/**
 * Which queries an evaluation uses, and the splits file a trained model ships (splits.json).
 *
 * splits.json: { version: 1, seed, method, collections: { <name>: { fingerprint, train, validation, test } } }
 * A collection is "one the model was trained on" when a splits entry has the SAME fingerprint
 * (sha256 of docs.jsonl + queries.jsonl), not merely the same folder name.
 *
 * Default query set: the model's TEST split for such a collection; otherwise every query with a relevant
 * judgment in qrels.tsv ("all"). For SciFact-like folders, qrels.tsv holds the official test judgments, so
 * "all" never includes the qrels_train.tsv queries. "heldout": the validation + test splits for such a
 * collection (what a model's operating points are fitted on), else "all".
 */
import { existsSync, readFileSync } from 'node:fs';
import { InvalidArgumentError, ModelFormatError } from '../../errors.js';
import { type Collection, judgedQueryIds } from './collection.js';
import type { QuerySplit } from './splits.js';

export const SPLITS_FILE = 'splits.json';

export interface CollectionSplitEntry extends QuerySplit {
  readonly fingerprint: string;
}

export interface SplitsFile {
  readonly version: 1;
  readonly seed: number;
  readonly method: string;
  readonly collections: Readonly<Record<string, CollectionSplitEntry>>;
}

export type QuerySetName = 'default' | 'test' | 'validation' | 'train' | 'heldout' | 'all';
export const QUERY_SET_NAMES: readonly QuerySetName[] = ['default', 'test', 'validation', 'train', 'heldout', 'all'];

export interface ResolvedQuerySet {
  readonly name: Exclude<QuerySetName, 'default'>;
  readonly queryIds: readonly string[];
  /** Why this set was chosen (printed by the CLI, stored in the report). */
  readonly reason: string;
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

export function parseSplitsFile(text: string, path: string): SplitsFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ModelFormatError(`${path}: invalid JSON`, { cause });
  }
  const v = value as Partial<SplitsFile> | null;
  if (!v || typeof v !== 'object' || v.version !== 1 || typeof v.collections !== 'object' || v.collections === null) {
    throw new ModelFormatError(`${path}: not a version-1 splits file`);
  }
  for (const [name, e] of Object.entries(v.collections)) {
    const entry = e as Partial<CollectionSplitEntry> | null;
    if (
      !entry ||
      typeof entry.fingerprint !== 'string' ||
      !isStringArray(entry.train) ||
      !isStringArray(entry.validation) ||
      !isStringArray(entry.test)
    ) {
      throw new ModelFormatError(`${path}: collection "${name}" needs fingerprint and train/validation/test id lists`);
    }
  }
  return v as SplitsFile;
}

/** Reads `<modelDir>/splits.json`, or null when the model ships none. */
export function readSplitsFile(path: string): SplitsFile | null {
  if (!existsSync(path)) return null;
  return parseSplitsFile(readFileSync(path, 'utf8'), path);
}

/** The split entry for this exact collection (matched by fingerprint), or null. */
export function findSplitEntry(
  splits: SplitsFile | null,
  collection: Collection,
): { name: string; entry: CollectionSplitEntry } | null {
  if (!splits) return null;
  for (const [name, entry] of Object.entries(splits.collections)) {
    if (entry.fingerprint === collection.fingerprint) return { name, entry };
  }
  return null;
}

export function resolveQuerySet(
  collection: Collection,
  requested: QuerySetName,
  splits: SplitsFile | null,
): ResolvedQuerySet {
  const match = findSplitEntry(splits, collection);
  const all = (): ResolvedQuerySet => ({
    name: 'all',
    queryIds: judgedQueryIds(collection.qrels),
    reason: match
      ? 'all queries judged in qrels.tsv (requested; includes queries the model was trained on)'
      : 'all queries judged in qrels.tsv (the model was not trained on this collection)',
  });
  if (requested === 'all') return all();
  if (requested === 'heldout') {
    // What operating points and thresholds are fitted on: queries the model did not train on.
    if (!match) return { ...all(), name: 'heldout' };
    return {
      name: 'heldout',
      queryIds: [...checkedIds(collection, match.entry.validation), ...checkedIds(collection, match.entry.test)],
      reason: `validation + test splits of "${match.name}" from the model's ${SPLITS_FILE} (the queries it did not train on)`,
    };
  }
  if (requested === 'default') {
    if (!match) return all();
    return {
      name: 'test',
      queryIds: match.entry.test,
      reason: `test split of "${match.name}" from the model's ${SPLITS_FILE}`,
    };
  }
  if (!match) {
    throw new InvalidArgumentError(
      `--queries ${requested}: the model's ${SPLITS_FILE} has no split for this collection (fingerprint ${collection.fingerprint.slice(0, 12)}…); use --queries all`,
    );
  }
  return {
    name: requested,
    queryIds: checkedIds(collection, match.entry[requested]),
    reason: `${requested} split of "${match.name}" from the model's ${SPLITS_FILE}`,
  };
}

/** A split's query ids, each checked to exist in the collection. */
function checkedIds(collection: Collection, ids: readonly string[]): readonly string[] {
  for (const id of ids) {
    if (!collection.queryById.has(id))
      throw new ModelFormatError(`${SPLITS_FILE}: query "${id}" is not in collection ${collection.name}`);
  }
  return ids;
}
