/**
 * Batch feature extraction: one query against k passages → a row-major Float32Array of
 * k × NUM_FEATURES (column order: FEATURE_NAMES). The query is tokenised once per call.
 * `extractFeatures` runs inline (k = 20 takes microseconds); `extractFeaturesAsync` runs on a libuv
 * worker thread, for large batches or very long passages.
 */
import { InvalidArgumentError } from '../errors.js';
import { CorpusStats } from './corpus-stats.js';
import { featuresAddon } from './native.js';
import { NUM_FEATURES, PASSTHROUGH_FEATURES, type PassthroughFeatureName } from './schema.js';
import { describe } from './tokenize.js';

/** What the extractor reads of a passage. */
export interface FeaturePassage {
  readonly title?: string | null;
  readonly text: string;
}

/** Caller-supplied features for one passage; missing or NaN → NaN in the row. */
export type PassthroughValues = Partial<Readonly<Record<PassthroughFeatureName, number>>>;

/**
 * Per-passage passthrough values: an array parallel to `passages` (records or undefined), or a
 * Float32Array of k × 3 in PASSTHROUGH_FEATURES order.
 */
export type PassthroughInput = ReadonlyArray<PassthroughValues | undefined | null> | Float32Array;

interface PreparedCall {
  readonly titles: Array<string | undefined> | null;
  readonly texts: string[];
  readonly passthrough: Float32Array | null;
}

function prepare(stats: unknown, query: unknown, passages: unknown, passthrough: unknown): PreparedCall {
  if (!(stats instanceof CorpusStats))
    throw new InvalidArgumentError(`stats must be a CorpusStats, got ${describe(stats)}`);
  if (typeof query !== 'string') throw new InvalidArgumentError(`query must be a string, got ${describe(query)}`);
  if (!Array.isArray(passages)) throw new InvalidArgumentError(`passages must be an array, got ${describe(passages)}`);
  const k = passages.length;
  const texts = new Array<string>(k);
  let titles: Array<string | undefined> | null = null;
  for (let i = 0; i < k; i++) {
    const p: unknown = passages[i];
    if (typeof p !== 'object' || p === null)
      throw new InvalidArgumentError(`passages[${i}] must be an object, got ${describe(p)}`);
    const { text, title } = p as { text?: unknown; title?: unknown };
    if (typeof text !== 'string')
      throw new InvalidArgumentError(`passages[${i}].text must be a string, got ${describe(text)}`);
    texts[i] = text;
    if (title !== undefined && title !== null) {
      if (typeof title !== 'string')
        throw new InvalidArgumentError(`passages[${i}].title must be a string, got ${describe(title)}`);
      if (titles === null) titles = new Array<string | undefined>(k).fill(undefined);
      titles[i] = title;
    }
  }
  return { titles, texts, passthrough: passthroughRows(passthrough, k) };
}

function passthroughRows(input: unknown, k: number): Float32Array | null {
  if (input === undefined || input === null) return null;
  const width = PASSTHROUGH_FEATURES.length;
  if (input instanceof Float32Array) {
    if (input.length !== k * width) {
      throw new InvalidArgumentError(
        `passthrough Float32Array must hold ${width} values per passage (${k * width}), got ${input.length}`,
      );
    }
    for (let i = 0; i < input.length; i++) {
      const v = input[i]!;
      if (!Number.isNaN(v) && !Number.isFinite(v))
        throw new InvalidArgumentError(`passthrough[${i}] must be finite or NaN, got ${v}`);
    }
    return input;
  }
  if (!Array.isArray(input))
    throw new InvalidArgumentError(`passthrough must be an array or Float32Array, got ${describe(input)}`);
  if (input.length !== k)
    throw new InvalidArgumentError(`passthrough must have one entry per passage (${k}), got ${input.length}`);
  const out = new Float32Array(k * width).fill(Number.NaN);
  for (let i = 0; i < k; i++) {
    const rec: unknown = input[i];
    if (rec === undefined || rec === null) continue;
    if (typeof rec !== 'object')
      throw new InvalidArgumentError(`passthrough[${i}] must be an object, got ${describe(rec)}`);
    for (let j = 0; j < width; j++) {
      const name = PASSTHROUGH_FEATURES[j]!;
      const v: unknown = (rec as Record<string, unknown>)[name];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'number' || (!Number.isNaN(v) && !Number.isFinite(v))) {
        throw new InvalidArgumentError(
          `passthrough[${i}].${name} must be a finite number or NaN, got ${describe(v)} ${String(v)}`,
        );
      }
      out[i * width + j] = v;
    }
  }
  return out;
}

/** Features of (query, passage) pairs, inline. Returns k × NUM_FEATURES floats, row-major. */
export function extractFeatures(
  stats: CorpusStats,
  query: string,
  passages: readonly FeaturePassage[],
  passthrough?: PassthroughInput,
): Float32Array {
  const call = prepare(stats, query, passages, passthrough);
  return featuresAddon().featuresExtract(stats.native, query, call.titles, call.texts, call.passthrough);
}

/** extractFeatures on a worker thread (inputs are copied first, so the caller may reuse them). */
export async function extractFeaturesAsync(
  stats: CorpusStats,
  query: string,
  passages: readonly FeaturePassage[],
  passthrough?: PassthroughInput,
): Promise<Float32Array> {
  const call = prepare(stats, query, passages, passthrough);
  return featuresAddon().featuresExtractAsync(stats.native, query, call.titles, call.texts, call.passthrough);
}

/** Row i of an extraction result as a name → value record (debugging, reports). */
export function featureRow(features: Float32Array, row: number, names: readonly string[]): Record<string, number> {
  const width = names.length;
  if (width !== NUM_FEATURES || features.length % width !== 0 || row < 0 || (row + 1) * width > features.length) {
    throw new InvalidArgumentError(`row ${row} is out of range for ${features.length / width} rows`);
  }
  const out: Record<string, number> = {};
  for (let j = 0; j < width; j++) out[names[j]!] = features[row * width + j]!;
  return out;
}
