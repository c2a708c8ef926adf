/**
 * Operating points stored for one model: what `relevance-gate fit-points` writes after fitting
 * `precise` / `balanced` / `related` on a user's own judged collections, and what a gate loads to
 * decide by them (`createGate({ scorer, policy: { operatingPoints: await loadOperatingPoints(file, scorer) } })`,
 * or a server model's `operatingPoints` file).
 *
 * Points are fitted on one scorer's probabilities, so the file names the model (the scorer id before
 * `@`: the fast path's corpus statistics may differ) and is refused for any other
 * (OperatingPointsModelMismatchError), like a calibrated threshold. The shipped fast-path model
 * carries its own beside its files (`operating-points.json`, read at load).
 *
 * Format `relevance-gate/operating-points@1`:
 *   { format, model, gateK, points: { precise, balanced, related } of { beta, shift, floor, sufficiency? },
 *     scoreCalibration?: { pair, weights, bias },
 *     fittedOn: [{ collection, fingerprint, queries }],
 *     heldOut?: [{ collection, point, precision, recall, f1Ratio, nothingKeptShare, keptPerQuery,
 *                  junkNothingKeptShare? }] }
 * `heldOut` is what each point measured on each collection with points fitted on the others
 * (leave-one-collection-out): the documented meaning of the points, carried with them.
 */
import { readFile } from 'node:fs/promises';
import { OperatingPointsFormatError, OperatingPointsModelMismatchError } from './errors.js';
import { type FieldErrorFactory, parseOperatingPoints, parseScoreCalibration } from './parse.js';
import {
  type ModelDecisions,
  modelIdOf,
  OPERATING_POINT_NAMES,
  type OperatingPointName,
  type OperatingPoints,
  type ScoreCalibration,
} from './types.js';

export { OperatingPointsFormatError, OperatingPointsModelMismatchError } from './errors.js';

export const OPERATING_POINTS_FORMAT = 'relevance-gate/operating-points@1';

/** The name a model folder ships its operating points under (read by the fast path at load). */
export const OPERATING_POINTS_FILE = 'operating-points.json';

/** One judged collection the points were fitted on. */
export interface OperatingPointsFittedOn {
  readonly collection: string;
  /** sha256 of the collection's docs.jsonl + queries.jsonl. */
  readonly fingerprint: string;
  readonly queries: number;
}

/** One point measured on one collection with points fitted on the OTHER collections. */
export interface OperatingPointsHeldOut {
  readonly collection: string;
  readonly point: OperatingPointName;
  readonly precision: number | null;
  readonly recall: number | null;
  /** F1 of the kept set / F1 of keeping all gateK. */
  readonly f1Ratio: number;
  /** Of the queries with a relevant candidate, the share that got nothing kept (null: none had one). */
  readonly nothingKeptShare: number | null;
  readonly keptPerQuery: number;
  /** Of the lists that hold nothing relevant (other collections' queries over this corpus), the share left empty. */
  readonly junkNothingKeptShare?: number | null;
}

export interface OperatingPointsFile {
  readonly format: typeof OPERATING_POINTS_FORMAT;
  /** The model the points belong to: the scorer id before `@`. */
  readonly model: string;
  /** Candidates per query the points were fitted on (the first-stage top gateK). */
  readonly gateK: number;
  readonly points: OperatingPoints;
  /** How the rerank surfaces turn the model's signals into a calibrated score (policy `scoreCalibration`). */
  readonly scoreCalibration?: ScoreCalibration;
  readonly fittedOn: readonly OperatingPointsFittedOn[];
  /** Leave-one-collection-out measurement; absent when fitted on one collection. */
  readonly heldOut?: readonly OperatingPointsHeldOut[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field<T>(where: string, ok: (v: unknown) => v is T, value: unknown, requirement: string): T {
  if (!ok(value)) throw new OperatingPointsFormatError(`${where} must be ${requirement}, got ${JSON.stringify(value)}`);
  return value;
}

const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isShare = (v: unknown): v is number | null => v === null || (isFiniteNumber(v) && v >= 0 && v <= 1);
const isPointName = (v: unknown): v is OperatingPointName =>
  typeof v === 'string' && (OPERATING_POINT_NAMES as readonly string[]).includes(v);

function parseFittedOn(value: unknown, i: number): OperatingPointsFittedOn {
  const where = `fittedOn[${i}]`;
  if (!isRecord(value)) throw new OperatingPointsFormatError(`${where} must be an object`);
  return {
    collection: field(`${where}.collection`, isString, value.collection, 'a non-empty string'),
    fingerprint: field(`${where}.fingerprint`, isString, value.fingerprint, 'a non-empty string'),
    queries: field(`${where}.queries`, isCount, value.queries, 'a whole number ≥ 0'),
  };
}

function parseHeldOut(value: unknown, i: number): OperatingPointsHeldOut {
  const where = `heldOut[${i}]`;
  if (!isRecord(value)) throw new OperatingPointsFormatError(`${where} must be an object`);
  return {
    collection: field(`${where}.collection`, isString, value.collection, 'a non-empty string'),
    point: field(`${where}.point`, isPointName, value.point, `one of ${OPERATING_POINT_NAMES.join(', ')}`),
    precision: field(`${where}.precision`, isShare, value.precision, 'a number in [0, 1] or null'),
    recall: field(`${where}.recall`, isShare, value.recall, 'a number in [0, 1] or null'),
    f1Ratio: field(`${where}.f1Ratio`, (v): v is number => isFiniteNumber(v) && v >= 0, value.f1Ratio, 'a number ≥ 0'),
    nothingKeptShare: field(`${where}.nothingKeptShare`, isShare, value.nothingKeptShare, 'a number in [0, 1] or null'),
    keptPerQuery: field(
      `${where}.keptPerQuery`,
      (v): v is number => isFiniteNumber(v) && v >= 0,
      value.keptPerQuery,
      'a number ≥ 0',
    ),
    ...(value.junkNothingKeptShare === undefined
      ? {}
      : {
          junkNothingKeptShare: field(
            `${where}.junkNothingKeptShare`,
            isShare,
            value.junkNothingKeptShare,
            'a number in [0, 1] or null',
          ),
        }),
  };
}

/** Validates an operating-points file's content (parsed JSON). */
export function parseOperatingPointsFile(value: unknown): OperatingPointsFile {
  if (!isRecord(value)) throw new OperatingPointsFormatError('an operating-points file must hold a JSON object');
  if (value.format !== OPERATING_POINTS_FORMAT)
    throw new OperatingPointsFormatError(
      `format must be ${JSON.stringify(OPERATING_POINTS_FORMAT)}, got ${JSON.stringify(value.format)}`,
    );
  const fail: FieldErrorFactory = (where, problem) => new OperatingPointsFormatError(`${where} ${problem}`);
  const points = parseOperatingPoints(value.points, 'points', fail);
  const scoreCalibration =
    value.scoreCalibration === undefined
      ? undefined
      : parseScoreCalibration(value.scoreCalibration, 'scoreCalibration', fail);
  const fittedOn = field('fittedOn', Array.isArray, value.fittedOn, 'an array').map(parseFittedOn);
  const heldOut =
    value.heldOut === undefined
      ? undefined
      : field('heldOut', Array.isArray, value.heldOut, 'an array').map(parseHeldOut);
  return Object.freeze({
    format: OPERATING_POINTS_FORMAT,
    model: field('model', isString, value.model, 'a non-empty string'),
    gateK: field('gateK', (v): v is number => isCount(v) && v > 0, value.gateK, 'a whole number > 0'),
    points,
    ...(scoreCalibration === undefined ? {} : { scoreCalibration }),
    fittedOn: Object.freeze(fittedOn),
    ...(heldOut === undefined ? {} : { heldOut: Object.freeze(heldOut) }),
  });
}

/** The file's points for `scorerId`; refuses points fitted for another model. */
export function operatingPointsForScorer(file: OperatingPointsFile, scorerId: string): OperatingPoints {
  const model = modelIdOf(scorerId);
  if (file.model !== model) throw new OperatingPointsModelMismatchError(file.model, model);
  return file.points;
}

/** Reads and validates an operating-points file (parseOperatingPointsFile). */
export async function readOperatingPointsFile(path: string): Promise<OperatingPointsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new OperatingPointsFormatError(`cannot read operating points ${path}: ${(cause as Error).message}`, {
      cause,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new OperatingPointsFormatError(`${path}: invalid JSON`, { cause });
  }
  try {
    return parseOperatingPointsFile(value);
  } catch (err) {
    if (err instanceof OperatingPointsFormatError)
      throw new OperatingPointsFormatError(`${path}: ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * The operating points in `path`, checked against the scorer they will gate: pass the result as
 * `policy.operatingPoints` and the gate decides by `balanced` unless told otherwise.
 */
export async function loadOperatingPoints(path: string, scorer: { readonly id: string }): Promise<OperatingPoints> {
  return operatingPointsForScorer(await readOperatingPointsFile(path), scorer.id);
}

/** What a gate reads of a file (its points and score calibration), checked against the scorer. */
export function decisionsForScorer(file: OperatingPointsFile, scorerId: string): ModelDecisions {
  const operatingPoints = operatingPointsForScorer(file, scorerId);
  return file.scoreCalibration === undefined
    ? { operatingPoints }
    : { operatingPoints, scoreCalibration: file.scoreCalibration };
}

/**
 * Everything a gate reads of an operating-points file, checked against the scorer: pass both as
 * `policy.operatingPoints` and `policy.scoreCalibration` (the latter undefined when the file has none).
 */
export async function loadOperatingPointsPolicy(
  path: string,
  scorer: { readonly id: string },
): Promise<ModelDecisions> {
  return decisionsForScorer(await readOperatingPointsFile(path), scorer.id);
}

/** JSON of an operating-points file (validated first, so nothing malformed is ever written). */
export function serializeOperatingPointsFile(file: OperatingPointsFile): string {
  return `${JSON.stringify(parseOperatingPointsFile(file), null, 2)}\n`;
}
