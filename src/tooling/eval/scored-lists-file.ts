/**
 * The scored lists of a fit as a file (`fit-points --scores-out` / `--scores-in`): every
 * collection's judged gate lists and junk lists with the scores one model gave them, so the points
 * can be fitted again (another recall floor, another objective, a subset of collections) without
 * scoring again; a cross-encoder takes most of an hour to score five collections on two cores.
 * Reading validates every field: a file edited by hand or cut short is an error, not a wrong fit.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { JudgedGateList } from './operating-points.js';
import type { JunkList } from './run-eval.js';
import type { ScoredCollection } from './fit-scorer-points.js';

/** The `format` field of a scored-lists file: a reader refuses any other. */
export const SCORED_LISTS_FORMAT = 'relevance-gate scored lists 1';

interface ListJson {
  readonly docIds: readonly string[];
  readonly relevances: readonly number[];
  readonly relevant: readonly boolean[];
  readonly order?: readonly number[];
}

/** The file's text for these scored collections. */
export function serializeScoredLists(collections: readonly ScoredCollection[]): string {
  const listJson = (l: JudgedGateList | JunkList): ListJson => ({
    docIds: l.docIds,
    relevances: l.relevances,
    relevant: l.relevant,
    ...(l.order === undefined ? {} : { order: l.order }),
  });
  return `${JSON.stringify({
    format: SCORED_LISTS_FORMAT,
    collections: collections.map((c) => ({
      name: c.name,
      fingerprint: c.fingerprint,
      model: c.model,
      gateK: c.gateK,
      lists: c.lists.map((l) => ({ ...listJson(l), judgments: [...l.judgments] })),
      junk: (c.junk ?? []).map((l) => ({ source: l.source, queryId: l.queryId, ...listJson(l) })),
    })),
  })}\n`;
}

function fail(where: string, what: string): never {
  throw new InvalidArgumentError(`scored lists ${where}: ${what}`);
}

function objectAt(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(where, 'not an object');
  return value as Record<string, unknown>;
}

function stringAt(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length === 0) fail(where, 'not a non-empty string');
  return value;
}

function arrayAt(value: unknown, where: string, length?: number): unknown[] {
  if (!Array.isArray(value)) fail(where, 'not an array');
  if (length !== undefined && value.length !== length) fail(where, `${value.length} entries, expected ${length}`);
  return value;
}

function listOf(value: unknown, where: string, gateK: number): ListJson {
  const o = objectAt(value, where);
  const docIds = arrayAt(o.docIds, `${where}.docIds`).map((d, i) => stringAt(d, `${where}.docIds[${i}]`));
  // A query the first stage finds nothing for has an empty list; it still counts (e.g. as left empty).
  if (docIds.length > gateK) fail(`${where}.docIds`, `${docIds.length} candidates, gateK is ${gateK}`);
  const n = docIds.length;
  const relevances = arrayAt(o.relevances, `${where}.relevances`, n).map((r, i) => {
    if (typeof r !== 'number' || !(r >= 0 && r <= 1)) fail(`${where}.relevances[${i}]`, 'not a probability in [0, 1]');
    return r;
  });
  const relevant = arrayAt(o.relevant, `${where}.relevant`, n).map((r, i) => {
    if (typeof r !== 'boolean') fail(`${where}.relevant[${i}]`, 'not a boolean');
    return r;
  });
  if (o.order === undefined) return { docIds, relevances, relevant };
  const order = arrayAt(o.order, `${where}.order`, n).map((r, i) => {
    if (typeof r !== 'number' || !Number.isFinite(r)) fail(`${where}.order[${i}]`, 'not a finite number');
    return r;
  });
  return { docIds, relevances, relevant, order };
}

/** Parses and validates the file's text (what serializeScoredLists wrote). */
export function parseScoredLists(text: string, source = 'file'): ScoredCollection[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    fail(source, `not JSON (${(err as Error).message})`);
  }
  const root = objectAt(raw, source);
  if (root.format !== SCORED_LISTS_FORMAT)
    fail(source, `format ${JSON.stringify(root.format)}, expected ${JSON.stringify(SCORED_LISTS_FORMAT)}`);
  return arrayAt(root.collections, `${source}.collections`).map((value, ci): ScoredCollection => {
    const where = `${source}.collections[${ci}]`;
    const c = objectAt(value, where);
    const gateK = c.gateK;
    if (typeof gateK !== 'number' || !Number.isInteger(gateK) || gateK < 1)
      fail(`${where}.gateK`, 'not a positive integer');
    const lists = arrayAt(c.lists, `${where}.lists`).map((lv, li): JudgedGateList => {
      const at = `${where}.lists[${li}]`;
      const list = listOf(lv, at, gateK);
      const judgments = new Map<string, number>();
      for (const [ji, pair] of arrayAt(objectAt(lv, at).judgments, `${at}.judgments`).entries()) {
        const [id, grade] = arrayAt(pair, `${at}.judgments[${ji}]`, 2);
        if (typeof grade !== 'number' || !Number.isFinite(grade)) fail(`${at}.judgments[${ji}]`, 'grade not a number');
        judgments.set(stringAt(id, `${at}.judgments[${ji}]`), grade);
      }
      return { ...list, judgments };
    });
    const junk = arrayAt(c.junk ?? [], `${where}.junk`).map((lv, li): JunkList => {
      const at = `${where}.junk[${li}]`;
      const o = objectAt(lv, at);
      const list = listOf(lv, at, gateK);
      if (list.relevant.some(Boolean)) fail(`${at}.relevant`, 'a junk list holds nothing relevant');
      return { ...list, source: stringAt(o.source, `${at}.source`), queryId: stringAt(o.queryId, `${at}.queryId`) };
    });
    return {
      name: stringAt(c.name, `${where}.name`),
      fingerprint: stringAt(c.fingerprint, `${where}.fingerprint`),
      model: stringAt(c.model, `${where}.model`),
      gateK,
      lists,
      junk,
    };
  });
}
