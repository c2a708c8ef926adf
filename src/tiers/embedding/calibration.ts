/**
 * The embedding tier's `relevant` signal: Platt scaling over the cosine similarity,
 * P(relevant | cos) = σ(a·cos + b) (src/calibration/platt.ts, the engine's one convention).
 *
 * The parameters: the `calibration` option of createEmbeddingScorer when given; else the model
 * folder's `calibration.json` when it has one (written by `relevance-gate fit-points --tier
 * embedding`, fitted on judged pairs of a collection); else DEFAULT_EMBEDDING_CALIBRATION.
 *
 *   { "format": 1, "kind": "embedding-calibration", "calibration": { "type": "platt", "a": 9.1, "b": -5.2 },
 *     "modelId": "...", "fittedOn": { ... } }
 */
import { readFileSync } from 'node:fs';
import type { PlattParameters } from '../../calibration/platt.js';
import { EmbeddingModelError } from './errors.js';

/**
 * Used when the folder has no calibration file: σ(10·cos − 5), i.e. probability 0.5 at cosine 0.5,
 * 0.27 at 0.4, 0.73 at 0.6. Sentence-transformers bi-encoders (all-MiniLM-L6-v2 and kin) put
 * related texts at cosines of about 0.4–0.8 and unrelated ones at 0–0.3, so this is a neutral
 * guess, not a fit: fit the model's own with `relevance-gate fit-points --tier embedding`.
 */
export const DEFAULT_EMBEDDING_CALIBRATION: PlattParameters = Object.freeze({ type: 'platt', a: 10, b: -5 });

export const CALIBRATION_FORMAT = 1;
export const CALIBRATION_KIND = 'embedding-calibration';

/** What `calibration.json` holds. */
export interface EmbeddingCalibrationFile {
  readonly format: typeof CALIBRATION_FORMAT;
  readonly kind: typeof CALIBRATION_KIND;
  readonly calibration: PlattParameters;
  /** The model the parameters were fitted for (`scorer.modelId`), for the record. */
  readonly modelId?: string;
  /** What the fit saw (collection, pairs, positives), for the record. */
  readonly fittedOn?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks Platt parameters (finite a > 0, finite b); `fail` throws. */
export function checkPlatt(value: unknown, fail: (why: string) => never): PlattParameters {
  if (!isRecord(value)) return fail(`calibration must be an object { type: 'platt', a, b }, got ${String(value)}`);
  const { type, a, b } = value;
  if (type !== undefined && type !== 'platt') return fail(`calibration type must be 'platt', got ${String(type)}`);
  if (typeof a !== 'number' || !Number.isFinite(a) || a <= 0) {
    return fail(`calibration a must be a finite number > 0 (higher cosine = more relevant), got ${String(a)}`);
  }
  if (typeof b !== 'number' || !Number.isFinite(b))
    return fail(`calibration b must be a finite number, got ${String(b)}`);
  return { type: 'platt', a, b };
}

/** Reads the calibration file of a model folder. */
export function readCalibrationFile(dir: string, path: string): PlattParameters {
  const fail = (why: string): never => {
    throw new EmbeddingModelError(dir, `${path}: ${why}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new EmbeddingModelError(dir, `${path} is not readable JSON`, { cause });
  }
  if (!isRecord(parsed)) return fail('must hold a JSON object');
  if (parsed.kind !== CALIBRATION_KIND)
    return fail(`kind must be "${CALIBRATION_KIND}", got ${JSON.stringify(parsed.kind)}`);
  if (parsed.format !== CALIBRATION_FORMAT) {
    return fail(`format ${JSON.stringify(parsed.format)} is not one this version reads (${CALIBRATION_FORMAT})`);
  }
  return checkPlatt(parsed.calibration, fail);
}

/** The JSON of a calibration file (what fit-points writes). */
export function calibrationFileJson(calibration: PlattParameters, modelId: string, fittedOn: unknown): string {
  const file: EmbeddingCalibrationFile = {
    format: CALIBRATION_FORMAT,
    kind: CALIBRATION_KIND,
    calibration: { type: 'platt', a: calibration.a, b: calibration.b },
    modelId,
    fittedOn,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}
