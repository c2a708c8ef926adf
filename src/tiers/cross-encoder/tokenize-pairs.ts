/**
 * (query, passage) pair tokenization with the Rust `tokenizers` library.
 *
 * Every pair goes through `tokenizer.encode(query, passage)` on a tokenizer whose truncation is set
 * to (maxLength, strategy): that IS the reference pair encoding, so ids, type ids and special tokens
 * are identical to it by construction (the parity test checks it on real data anyway). We measured
 * the alternative (query once + `encodeBatch(passages)` + `postProcess`) and it was slower on this
 * machine (≈600 µs vs ≈350 µs per 280-token pair: encodeBatch's rayon fan-out fights the ONNX
 * threads for 2 cores), and pre-truncating parts is NOT equivalent for longest-first when both
 * sides exceed the limit (the tie-break depends on the untruncated lengths).
 *
 * `encode` is an async task on libuv's thread pool, so pairs of one call run in parallel.
 * Results are packed into flat typed arrays so they can be transferred between threads.
 */
import { Tokenizer, type TruncationOptions } from 'tokenizers';
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, ModelFormatError } from '../../errors.js';
import { TokenizationError } from './errors.js';

/** HF truncation strategies supported for pairs: cut the longer side first, or only the passage. */
export type TruncationMode = 'longest_first' | 'only_second';

export const DEFAULT_MAX_LENGTH = 512;

/** Token ids of several pairs, concatenated; pair i spans [offsets[i], offsets[i] + lengths[i]). */
export interface EncodedPairs {
  readonly ids: Int32Array;
  readonly typeIds: Int32Array;
  readonly lengths: Int32Array;
  readonly offsets: Int32Array;
}

export interface PairTokenizerOptions {
  readonly tokenizerPath: string;
  /** Effective max length (already clamped to the model limits by `resolveMaxLength`). */
  readonly maxLength: number;
  readonly truncation: TruncationMode;
}

/** Limits a model folder declares (config.json / tokenizer_config.json); absent → unknown. */
export interface ModelLengthLimits {
  readonly maxPositionEmbeddings?: number;
  readonly tokenizerModelMaxLength?: number;
}

/** HF writes huge sentinels (1e30) for "no limit" in tokenizer_config.json; ignore those. */
const SENTINEL_LIMIT = 1_000_000;

/**
 * The max length actually used: the requested one (default 512), never above the model's position
 * embeddings or the tokenizer's model_max_length. An explicit request above a known limit is an error
 * (silently scoring with a shorter window would change scores without telling the caller).
 */
export function resolveMaxLength(requested: number | undefined, limits: ModelLengthLimits): number {
  const known = [limits.maxPositionEmbeddings, limits.tokenizerModelMaxLength].filter(
    (v): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0 && v < SENTINEL_LIMIT,
  );
  const modelLimit = known.length > 0 ? Math.min(...known) : Number.POSITIVE_INFINITY;
  if (requested === undefined) return Math.min(DEFAULT_MAX_LENGTH, modelLimit);
  if (!Number.isInteger(requested) || requested < 4) {
    throw new InvalidArgumentError(`maxLength must be an integer >= 4, got ${String(requested)}`);
  }
  if (requested > modelLimit) {
    throw new InvalidArgumentError(`maxLength ${requested} exceeds the model's limit of ${modelLimit} tokens`);
  }
  return requested;
}

/** Reads the length limits from an HF model folder's JSON files (missing files/fields → unknown). */
export function readModelLengthLimits(
  configPath: string | null,
  tokenizerConfigPath: string | null,
): ModelLengthLimits {
  const read = (path: string | null): Record<string, unknown> | null => {
    if (path === null) return null;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      return null;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
    } catch (cause) {
      throw new ModelFormatError(`${path} is not valid JSON`, { cause });
    }
  };
  const config = read(configPath);
  const tokConfig = read(tokenizerConfigPath);
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  return {
    maxPositionEmbeddings: num(config?.max_position_embeddings),
    tokenizerModelMaxLength: num(tokConfig?.model_max_length),
  };
}

// `TruncationStrategy` is a const enum in the typings; its runtime values are these strings.
const STRATEGY = {
  longest_first: 'LongestFirst' as unknown as TruncationOptions['strategy'],
  only_second: 'OnlySecond' as unknown as TruncationOptions['strategy'],
};

function loadTokenizer(path: string, maxLength: number, mode: TruncationMode): Tokenizer {
  let tokenizer: Tokenizer;
  try {
    tokenizer = Tokenizer.fromFile(path);
  } catch (cause) {
    throw new ModelFormatError(`cannot load tokenizer ${path}: ${(cause as Error).message}`, { cause });
  }
  // The file may carry its own padding/truncation; ours replace them (padding is done per batch).
  tokenizer.disablePadding();
  tokenizer.setTruncation(maxLength, { strategy: STRATEGY[mode] });
  return tokenizer;
}

/**
 * With `only_second`, a query that alone does not fit leaves nothing to cut from the passage (HF
 * raises an error). Such pairs fall back to longest_first (documented; the pair is still scored,
 * with the query cut too) instead of failing the whole request.
 */
export class PairTokenizer {
  private readonly tokenizer: Tokenizer;
  private readonly fallback: Tokenizer | null;
  readonly maxLength: number;
  readonly truncation: TruncationMode;

  private constructor(tokenizer: Tokenizer, fallback: Tokenizer | null, maxLength: number, truncation: TruncationMode) {
    this.tokenizer = tokenizer;
    this.fallback = fallback;
    this.maxLength = maxLength;
    this.truncation = truncation;
  }

  static fromFile(options: PairTokenizerOptions): PairTokenizer {
    if (options.truncation !== 'longest_first' && options.truncation !== 'only_second') {
      throw new InvalidArgumentError(
        `truncation must be 'longest_first' or 'only_second', got ${String(options.truncation)}`,
      );
    }
    const tokenizer = loadTokenizer(options.tokenizerPath, options.maxLength, options.truncation);
    const fallback =
      options.truncation === 'only_second'
        ? loadTokenizer(options.tokenizerPath, options.maxLength, 'longest_first')
        : null;
    return new PairTokenizer(tokenizer, fallback, options.maxLength, options.truncation);
  }

  /** Vocabulary size including added tokens (ids are < this). */
  vocabSize(): number {
    return this.tokenizer.getVocabSize(true);
  }

  /** Encodes one pair exactly as `tokenizer.encode(query, passage)` with this tokenizer's truncation. */
  async encodePair(query: string, passage: string): Promise<{ ids: number[]; typeIds: number[] }> {
    const enc = await this.encodeRaw(query, passage);
    return { ids: enc.getIds(), typeIds: enc.getTypeIds() };
  }

  /** Encodes `query` with each passage; packed for transfer. */
  async encodePairs(query: string, passages: readonly string[]): Promise<EncodedPairs> {
    const encodings = await Promise.all(passages.map((p) => this.encodeRaw(query, p)));
    const n = encodings.length;
    const lengths = new Int32Array(n);
    const offsets = new Int32Array(n);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const len = encodings[i].getLength();
      lengths[i] = len;
      offsets[i] = total;
      total += len;
    }
    const ids = new Int32Array(total);
    const typeIds = new Int32Array(total);
    for (let i = 0; i < n; i++) {
      const enc = encodings[i];
      ids.set(enc.getIds(), offsets[i]);
      typeIds.set(enc.getTypeIds(), offsets[i]);
    }
    return { ids, typeIds, lengths, offsets };
  }

  private async encodeRaw(query: string, passage: string) {
    try {
      return await this.tokenizer.encode(query, passage);
    } catch (cause) {
      if (this.fallback !== null) {
        try {
          return await this.fallback.encode(query, passage);
        } catch {
          // report the original error below
        }
      }
      throw new TokenizationError(`tokenization failed: ${(cause as Error).message ?? String(cause)}`, { cause });
    }
  }
}
