/**
 * Loads a judged test collection in the `../shared/data` layout:
 *   docs.jsonl     {"id": str, "title": str, "text": str} per line
 *   queries.jsonl  {"id": str, "text": str} per line
 *   qrels.tsv      header `query-id<TAB>corpus-id<TAB>score`, then judged pairs (score > 0 = relevant)
 *   qrels_train.tsv (optional, SciFact): the collection's official training judgments, same format
 * Every line is validated; a malformed file fails with the file, line and reason, never a partial load.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { CollectionFormatError } from './errors.js';

export { CollectionFormatError } from './errors.js';

export interface CollectionDoc {
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

export interface CollectionQuery {
  readonly id: string;
  readonly text: string;
}

/** query id → (doc id → grade). Only listed pairs are judged; unlisted pairs count as grade 0. */
export type Qrels = ReadonlyMap<string, ReadonlyMap<string, number>>;

export interface Collection {
  /** Folder name, e.g. `med`. */
  readonly name: string;
  readonly dir: string;
  readonly docs: readonly CollectionDoc[];
  readonly docById: ReadonlyMap<string, CollectionDoc>;
  readonly queries: readonly CollectionQuery[];
  readonly queryById: ReadonlyMap<string, CollectionQuery>;
  /** Judgments of `qrels.tsv`. */
  readonly qrels: Qrels;
  /** Judgments of `qrels_train.tsv` when the collection ships an official training split (SciFact), else null. */
  readonly trainQrels: Qrels | null;
  /** sha256 of docs.jsonl + queries.jsonl bytes: identifies the collection independently of its folder name. */
  readonly fingerprint: string;
}

/** The text a reranker sees for a document: title and body joined, as the data README prescribes. */
export function docPassage(doc: CollectionDoc): string {
  return `${doc.title} ${doc.text}`.trim();
}

/** All judgments of a query across qrels.tsv and qrels_train.tsv (a query appears in at most one in practice). */
export function judgmentsOf(collection: Collection, queryId: string): ReadonlyMap<string, number> {
  const a = collection.qrels.get(queryId);
  const b = collection.trainQrels?.get(queryId);
  if (a && b) return new Map([...b, ...a]);
  return a ?? b ?? new Map();
}

/** Ids of queries with at least one relevant (grade > 0) judgment in the given qrels, sorted for determinism. */
export function judgedQueryIds(qrels: Qrels): string[] {
  const ids: string[] = [];
  for (const [qid, judged] of qrels) {
    for (const grade of judged.values()) {
      if (grade > 0) {
        ids.push(qid);
        break;
      }
    }
  }
  return ids.sort(compareIds);
}

/** Numeric ids in numeric order, others lexicographically (stable, locale-independent). */
export function compareIds(a: string, b: string): number {
  const na = /^\d+$/.test(a);
  const nb = /^\d+$/.test(b);
  if (na && nb) {
    const d = a.length - b.length;
    if (d !== 0) return d;
  } else if (na !== nb) {
    return na ? -1 : 1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

function readRequired(path: string): Buffer {
  if (!existsSync(path)) throw new CollectionFormatError(`missing file ${path}`);
  try {
    return readFileSync(path);
  } catch (cause) {
    throw new CollectionFormatError(`cannot read ${path}: ${String(cause)}`, { cause });
  }
}

function* lines(text: string): Generator<[lineNo: number, line: string]> {
  const parts = text.split('\n');
  for (let i = 0; i < parts.length; i++) {
    const line = parts[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    yield [i + 1, line];
  }
}

function parseJsonLine(path: string, lineNo: number, line: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (cause) {
    throw new CollectionFormatError(`${path}:${lineNo}: invalid JSON (${(cause as Error).message})`, { cause });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CollectionFormatError(`${path}:${lineNo}: expected a JSON object`);
  }
  return value as Record<string, unknown>;
}

function stringField(
  path: string,
  lineNo: number,
  obj: Record<string, unknown>,
  key: string,
  required: boolean,
): string {
  const v = obj[key];
  if (v === undefined && !required) return '';
  if (typeof v !== 'string') {
    throw new CollectionFormatError(
      `${path}:${lineNo}: field "${key}" must be a string, got ${v === undefined ? 'nothing' : typeof v}`,
    );
  }
  return v;
}

function parseDocs(path: string, text: string): CollectionDoc[] {
  const docs: CollectionDoc[] = [];
  const seen = new Set<string>();
  for (const [lineNo, line] of lines(text)) {
    const obj = parseJsonLine(path, lineNo, line);
    const id = stringField(path, lineNo, obj, 'id', true);
    if (id === '') throw new CollectionFormatError(`${path}:${lineNo}: empty document id`);
    if (seen.has(id)) throw new CollectionFormatError(`${path}:${lineNo}: duplicate document id "${id}"`);
    seen.add(id);
    docs.push({
      id,
      title: stringField(path, lineNo, obj, 'title', false),
      text: stringField(path, lineNo, obj, 'text', false),
    });
  }
  if (docs.length === 0) throw new CollectionFormatError(`${path}: no documents`);
  return docs;
}

function parseQueries(path: string, text: string): CollectionQuery[] {
  const queries: CollectionQuery[] = [];
  const seen = new Set<string>();
  for (const [lineNo, line] of lines(text)) {
    const obj = parseJsonLine(path, lineNo, line);
    const id = stringField(path, lineNo, obj, 'id', true);
    if (id === '') throw new CollectionFormatError(`${path}:${lineNo}: empty query id`);
    if (seen.has(id)) throw new CollectionFormatError(`${path}:${lineNo}: duplicate query id "${id}"`);
    seen.add(id);
    queries.push({ id, text: stringField(path, lineNo, obj, 'text', true) });
  }
  if (queries.length === 0) throw new CollectionFormatError(`${path}: no queries`);
  return queries;
}

function parseQrels(
  path: string,
  text: string,
  queryIds: ReadonlySet<string>,
  docIds: ReadonlySet<string>,
): Map<string, Map<string, number>> {
  const qrels = new Map<string, Map<string, number>>();
  let header = true;
  for (const [lineNo, line] of lines(text)) {
    const cols = line.split('\t');
    if (header) {
      header = false;
      if (cols[0] === 'query-id') {
        if (cols.length !== 3 || cols[1] !== 'corpus-id' || cols[2] !== 'score') {
          throw new CollectionFormatError(`${path}:${lineNo}: header must be "query-id<TAB>corpus-id<TAB>score"`);
        }
        continue;
      }
      throw new CollectionFormatError(`${path}:${lineNo}: missing header "query-id<TAB>corpus-id<TAB>score"`);
    }
    if (cols.length !== 3)
      throw new CollectionFormatError(`${path}:${lineNo}: expected 3 tab-separated columns, got ${cols.length}`);
    const [qid, did, scoreText] = cols as [string, string, string];
    if (!/^-?\d+$/.test(scoreText))
      throw new CollectionFormatError(`${path}:${lineNo}: score "${scoreText}" is not an integer`);
    if (!queryIds.has(qid)) throw new CollectionFormatError(`${path}:${lineNo}: unknown query id "${qid}"`);
    if (!docIds.has(did)) throw new CollectionFormatError(`${path}:${lineNo}: unknown document id "${did}"`);
    let judged = qrels.get(qid);
    if (!judged) {
      judged = new Map();
      qrels.set(qid, judged);
    }
    if (judged.has(did)) throw new CollectionFormatError(`${path}:${lineNo}: duplicate pair (${qid}, ${did})`);
    judged.set(did, Number(scoreText));
  }
  if (header) throw new CollectionFormatError(`${path}: empty file`);
  return qrels;
}

/** Reads and validates a collection folder. Throws CollectionFormatError on any problem. */
export function loadCollection(dir: string): Collection {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new CollectionFormatError(`collection folder not found: ${root}`);
  }
  const docsPath = join(root, 'docs.jsonl');
  const queriesPath = join(root, 'queries.jsonl');
  const qrelsPath = join(root, 'qrels.tsv');
  const trainQrelsPath = join(root, 'qrels_train.tsv');
  const docsBytes = readRequired(docsPath);
  const queriesBytes = readRequired(queriesPath);
  const qrelsBytes = readRequired(qrelsPath);

  const docs = parseDocs(docsPath, docsBytes.toString('utf8'));
  const queries = parseQueries(queriesPath, queriesBytes.toString('utf8'));
  const docById = new Map(docs.map((d) => [d.id, d]));
  const queryById = new Map(queries.map((q) => [q.id, q]));
  const docIds = new Set(docById.keys());
  const queryIds = new Set(queryById.keys());
  const qrels = parseQrels(qrelsPath, qrelsBytes.toString('utf8'), queryIds, docIds);
  const trainQrels = existsSync(trainQrelsPath)
    ? parseQrels(trainQrelsPath, readRequired(trainQrelsPath).toString('utf8'), queryIds, docIds)
    : null;
  if (judgedQueryIds(qrels).length === 0)
    throw new CollectionFormatError(`${qrelsPath}: no query has a relevant (score > 0) judgment`);

  const fingerprint = createHash('sha256').update(docsBytes).update(queriesBytes).digest('hex');
  return { name: basename(root), dir: root, docs, docById, queries, queryById, qrels, trainQrels, fingerprint };
}
