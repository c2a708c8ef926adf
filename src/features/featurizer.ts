/**
 * The one place that turns `Passage`s into feature rows, used by training and by the fast-path
 * scorer alike so both see identical features. Passthrough features come from
 * `passage.features` (a name → number record: retrieval_score, retrieval_rank,
 * embedding_similarity); a dense `passage.features` vector of NUM_FEATURES values is taken as the
 * complete row (the caller computed the features itself, in schema order).
 */
import { InvalidArgumentError } from '../errors.js';
import { nonNegativeLimit, positiveInteger } from '../util/validate-options.js';
import type { Passage } from '../types.js';
import type { CorpusStats } from './corpus-stats.js';
import { featuresAddon } from './native.js';
import { FEATURE_NAMES, FEATURE_SCHEMA_VERSION, NUM_FEATURES, PASSTHROUGH_FEATURES } from './schema.js';
import { describe } from './tokenize.js';

export interface LexicalFeaturizerOptions {
  /**
   * Batches whose text (query + passages, in UTF-16 code units) exceeds this run on a libuv worker
   * thread in featurizeAsync; smaller ones run inline (default 262144, about 200 passages of
   * 200 words). featurize() always runs inline.
   */
  readonly asyncThresholdChars?: number;
  /**
   * Characters (UTF-16 code units) of a passage's text, and of its title, that the features read;
   * longer ones are cut at a word boundary before they reach the native extractor (default
   * 65536, about 10,000 words: far beyond any passage a retriever returns, so the cut only bounds
   * the cost of an abnormal input). Features of text within the limit are unchanged.
   */
  readonly maxPassageChars?: number;
  /** Characters of one request (query + titles + texts, after cutting); more is an InvalidArgumentError (default 16,777,216). */
  readonly maxRequestChars?: number;
}

export const DEFAULT_FEATURE_PASSAGE_CHARS = 65_536;
export const DEFAULT_FEATURE_REQUEST_CHARS = 16_777_216;
/** How far back from the limit a cut looks for a word boundary. */
const CUT_LOOKBACK = 256;

/**
 * `text` cut to at most `max` UTF-16 units: at the last whitespace within CUT_LOOKBACK units of
 * the limit when there is one (no half word becomes a term), never between a surrogate pair.
 * V8 makes the slice without copying the characters, so cutting a huge string costs nothing.
 */
export function boundText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  for (let i = max; i > max - CUT_LOOKBACK && i > 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d) {
      end = i;
      break;
    }
  }
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // keep a surrogate pair whole
  return text.slice(0, end);
}

const WIDTH = PASSTHROUGH_FEATURES.length;

export class LexicalFeaturizer {
  readonly featureNames: readonly string[] = FEATURE_NAMES;
  readonly schemaVersion = FEATURE_SCHEMA_VERSION;
  readonly stats: CorpusStats;
  readonly #asyncThreshold: number;
  readonly #maxPassageChars: number;
  readonly #maxRequestChars: number;

  constructor(stats: CorpusStats, options: LexicalFeaturizerOptions = {}) {
    this.stats = stats;
    this.#asyncThreshold = nonNegativeLimit('asyncThresholdChars', options.asyncThresholdChars ?? 262_144);
    this.#maxPassageChars = positiveInteger(
      'maxPassageChars',
      options.maxPassageChars ?? DEFAULT_FEATURE_PASSAGE_CHARS,
    );
    this.#maxRequestChars = positiveInteger(
      'maxRequestChars',
      options.maxRequestChars ?? DEFAULT_FEATURE_REQUEST_CHARS,
    );
    featuresAddon();
  }

  /** k × NUM_FEATURES floats, row-major, computed inline. */
  featurize(query: string, passages: readonly Passage[]): Float32Array {
    const call = this.#prepare(query, passages);
    const rows = featuresAddon().featuresExtract(this.stats.native, query, call.titles, call.texts, call.passthrough);
    return applyDense(rows, call.dense);
  }

  /** featurize(), on a worker thread when the batch is large. */
  async featurizeAsync(query: string, passages: readonly Passage[]): Promise<Float32Array> {
    const call = this.#prepare(query, passages);
    const addon = featuresAddon();
    const rows =
      call.chars > this.#asyncThreshold
        ? await addon.featuresExtractAsync(this.stats.native, query, call.titles, call.texts, call.passthrough)
        : addon.featuresExtract(this.stats.native, query, call.titles, call.texts, call.passthrough);
    return applyDense(rows, call.dense);
  }

  #prepare(query: unknown, passages: unknown): Prepared {
    if (typeof query !== 'string') throw new InvalidArgumentError(`query must be a string, got ${describe(query)}`);
    if (!Array.isArray(passages))
      throw new InvalidArgumentError(`passages must be an array, got ${describe(passages)}`);
    const k = passages.length;
    const texts = new Array<string>(k);
    let titles: Array<string | undefined> | null = null;
    let passthrough: Float32Array | null = null;
    let dense: Array<ArrayLike<number> | undefined> | null = null;
    let chars = query.length;
    for (let i = 0; i < k; i++) {
      const p: unknown = passages[i];
      if (typeof p !== 'object' || p === null)
        throw new InvalidArgumentError(`passages[${i}] must be an object, got ${describe(p)}`);
      const { text, title, features } = p as Passage;
      if (typeof text !== 'string')
        throw new InvalidArgumentError(`passages[${i}].text must be a string, got ${describe(text)}`);
      const boundedText = boundText(text, this.#maxPassageChars);
      texts[i] = boundedText;
      chars += boundedText.length;
      if (title !== undefined && title !== null) {
        if (typeof title !== 'string')
          throw new InvalidArgumentError(`passages[${i}].title must be a string, got ${describe(title)}`);
        titles ??= new Array<string | undefined>(k).fill(undefined);
        const boundedTitle = boundText(title, this.#maxPassageChars);
        titles[i] = boundedTitle;
        chars += boundedTitle.length;
      }
      if (chars > this.#maxRequestChars)
        throw new InvalidArgumentError(
          `the request has more than maxRequestChars (${this.#maxRequestChars}) characters of query and passages after each passage was cut to ${this.#maxPassageChars}`,
        );
      if (features === undefined || features === null) continue;
      if (Array.isArray(features) || isNumericTypedArray(features)) {
        // Any numeric typed array is a dense row; its values are read as numbers (the row is float32).
        const vec = features as ArrayLike<number>;
        if (vec.length !== NUM_FEATURES) {
          throw new InvalidArgumentError(
            `passages[${i}].features is a dense vector of ${vec.length} values; this model takes ${NUM_FEATURES} (${FEATURE_SCHEMA_VERSION}) or a record of ${PASSTHROUGH_FEATURES.join(', ')}`,
          );
        }
        for (let j = 0; j < NUM_FEATURES; j++) checkValue(vec[j], `passages[${i}].features[${j}]`);
        dense ??= new Array<ArrayLike<number> | undefined>(k).fill(undefined);
        dense[i] = vec;
        continue;
      }
      if (typeof features !== 'object' || ArrayBuffer.isView(features) || !isPlainRecord(features))
        throw new InvalidArgumentError(
          `passages[${i}].features must be a record of ${PASSTHROUGH_FEATURES.join(', ')} or a dense vector of ${NUM_FEATURES} numbers, got ${describe(features)}`,
        );
      const rec = features as Readonly<Record<string, unknown>>;
      for (const key of Object.keys(rec)) {
        if (!PASSTHROUGH_NAMES.has(key))
          throw new InvalidArgumentError(
            `passages[${i}].features.${key} is not a feature this model reads; a record may hold ${PASSTHROUGH_FEATURES.join(', ')}`,
          );
      }
      for (let j = 0; j < WIDTH; j++) {
        const name = PASSTHROUGH_FEATURES[j]!;
        const v = rec[name];
        if (v === undefined || v === null) continue;
        checkValue(v, `passages[${i}].features.${name}`);
        passthrough ??= new Float32Array(k * WIDTH).fill(Number.NaN);
        passthrough[i * WIDTH + j] = v as number;
      }
    }
    return { titles, texts, passthrough, dense, chars };
  }
}

interface Prepared {
  readonly titles: Array<string | undefined> | null;
  readonly texts: string[];
  readonly passthrough: Float32Array | null;
  readonly dense: Array<ArrayLike<number> | undefined> | null;
  readonly chars: number;
}

const PASSTHROUGH_NAMES: ReadonlySet<string> = new Set(PASSTHROUGH_FEATURES);

function isNumericTypedArray(value: unknown): value is ArrayLike<number> {
  return (
    ArrayBuffer.isView(value) &&
    !(value instanceof DataView) &&
    !(value instanceof BigInt64Array) &&
    !(value instanceof BigUint64Array)
  );
}

function isPlainRecord(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function checkValue(v: unknown, where: string): void {
  if (typeof v !== 'number' || (!Number.isNaN(v) && !Number.isFinite(v))) {
    throw new InvalidArgumentError(`${where} must be a finite number or NaN, got ${describe(v)} ${String(v)}`);
  }
}

function applyDense(rows: Float32Array, dense: Array<ArrayLike<number> | undefined> | null): Float32Array {
  if (dense === null) return rows;
  for (let i = 0; i < dense.length; i++) {
    const vec = dense[i];
    if (vec === undefined) continue;
    for (let j = 0; j < NUM_FEATURES; j++) rows[i * NUM_FEATURES + j] = vec[j]!;
  }
  return rows;
}
