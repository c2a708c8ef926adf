/**
 * (query, passage) pair tokenization with the Rust `tokenizers` library, at a cost bounded by the
 * window, not by the input.
 *
 * Each side is encoded on its own (no special tokens, no truncation), truncated to the lengths
 * HF's pair truncation gives (`pairTruncation`, a transcription of tokenizers' LongestFirst /
 * OnlySecond rules), and joined by the tokenizer's own post-processor (`postProcess`), so special
 * tokens and type ids come from the tokenizer file. This is what `encode(query, passage)` does
 * internally; the parity tests check ids and type ids against it on real and adversarial texts.
 *
 * Bounded cost: a text longer than the window can use is CUT before tokenization. Only tokens of
 * words (pre-tokens) that end before the cut are trusted (the last word may be split by the cut);
 * when the trusted tokens fill what the truncation keeps, the ids are identical to the uncut
 * text's. When they do not (long runs of skipped characters, one giant word, text without word
 * boundaries), the cut grows ×4 and the text is encoded again, up to the whole text; that worst
 * case is bounded by the per-passage character limit the encoder enforces (docs/cross-encoder.md).
 *
 * Chunking (optional, `PairChunking`): a passage longer than its share of the window gives several
 * pairs, the truncated one first, then further windows of its tokens with the same query part and
 * special tokens; the cut then trusts up to maxChunks windows of tokens instead of one.
 */
import { Tokenizer, type Encoding } from 'tokenizers';
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, ModelFormatError } from '../../errors.js';
import { TokenizationError } from './errors.js';
// fairseq's convention: positions start after the padding index, so max_position_embeddings counts
// pad_token_id + 1 positions no token can use.
import { PADDING_OFFSET_MODEL_TYPES } from './model-contract.js';
import { packEncodings, type PairInput } from './pair-input.js';
import { isVocabTxtPath, wordPieceTokenizerJson } from './vocab-tokenizer.js';

/** HF truncation strategies supported for pairs: cut the longer side first, or only the passage. */
export type TruncationMode = 'longest_first' | 'only_second';

export const DEFAULT_MAX_LENGTH = 512;

/** Token ids of several pairs, concatenated; pair i spans [offsets[i], offsets[i] + lengths[i]). */
export interface EncodedPairs {
  readonly ids: Int32Array;
  readonly typeIds: Int32Array;
  readonly lengths: Int32Array;
  readonly offsets: Int32Array;
  /**
   * With chunking: pairs per passage (≥ 1), in passage order; the pairs of passage i are
   * consecutive. Absent without chunking (one pair per passage).
   */
  readonly chunks?: Int32Array;
}

/**
 * Long passages as several windows instead of one truncated pair (see `PairTokenizer.encodePairs`).
 * `stride`: tokens each window repeats from the previous one (HF's overflow `stride`), at most half
 * a window; `maxChunks`: windows kept per passage, the rest of the passage is not read.
 */
export interface PairChunking {
  readonly stride: number;
  readonly maxChunks: number;
}

export const DEFAULT_CHUNK_STRIDE = 32;
export const DEFAULT_MAX_CHUNKS_PER_PASSAGE = 16;
/** Upper bound of maxChunksPerPassage: keeps a passage's cost (and cut) bounded. */
export const MAX_CHUNKS_PER_PASSAGE_LIMIT = 256;

export interface PairTokenizerOptions {
  readonly tokenizerPath: string;
  /** Effective max length (already clamped to the model limits by `resolveMaxLength`). */
  readonly maxLength: number;
  readonly truncation: TruncationMode;
  /** Cut long passages into windows (absent: truncate, one pair per passage). */
  readonly chunking?: PairChunking;
}

/** Checks chunking options (integers, stride ≥ 0, 1 ≤ maxChunks ≤ MAX_CHUNKS_PER_PASSAGE_LIMIT). */
export function resolveChunking(stride: unknown, maxChunks: unknown): PairChunking {
  const s = stride ?? DEFAULT_CHUNK_STRIDE;
  const m = maxChunks ?? DEFAULT_MAX_CHUNKS_PER_PASSAGE;
  if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 0) {
    throw new InvalidArgumentError(`chunkStride must be an integer >= 0, got ${String(s)}`);
  }
  if (typeof m !== 'number' || !Number.isSafeInteger(m) || m < 1 || m > MAX_CHUNKS_PER_PASSAGE_LIMIT) {
    throw new InvalidArgumentError(
      `maxChunksPerPassage must be an integer in 1..${MAX_CHUNKS_PER_PASSAGE_LIMIT}, got ${String(m)}`,
    );
  }
  return { stride: s, maxChunks: m };
}

/**
 * Token ranges [start, end) of the windows of a passage of `length` tokens, `size` tokens each
 * (the last may be shorter), each repeating `stride` tokens of the previous one (clamped to half
 * a window so windows always advance), at most `maxChunks` of them. The ranges HF's
 * `Encoding.truncate(size, stride)` gives with its overflowing encodings.
 */
export function chunkRanges(length: number, size: number, stride: number, maxChunks: number): Array<[number, number]> {
  if (size <= 0 || length <= size) return [[0, Math.max(0, Math.min(length, size))]];
  const step = size - Math.min(stride, Math.floor(size / 2));
  const ranges: Array<[number, number]> = [];
  for (let start = 0; ranges.length < maxChunks; start += step) {
    const end = Math.min(start + size, length);
    ranges.push([start, end]);
    if (end === length) break;
  }
  return ranges;
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
  if (!Number.isSafeInteger(requested) || requested < 4) {
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
  const positions = num(config?.max_position_embeddings);
  const modelType = typeof config?.model_type === 'string' ? config.model_type : '';
  // RoBERTa-style embeddings number positions from pad_token_id + 1: 514 positions hold 512 tokens.
  const offset = PADDING_OFFSET_MODEL_TYPES.includes(modelType) ? (num(config?.pad_token_id) ?? 1) + 1 : 0;
  return {
    maxPositionEmbeddings: positions === undefined ? undefined : positions - offset,
    tokenizerModelMaxLength: num(tokConfig?.model_max_length),
  };
}

/**
 * A tokenizer.json, or a slow-tokenizer `vocab.txt` (WordPiece built from it and the folder's
 * tokenizer_config.json / special_tokens_map.json: vocab-tokenizer.ts).
 */
function loadTokenizer(path: string): Tokenizer {
  let tokenizer: Tokenizer;
  try {
    tokenizer = isVocabTxtPath(path)
      ? Tokenizer.fromString(wordPieceTokenizerJson(path).json)
      : Tokenizer.fromFile(path);
  } catch (cause) {
    if (cause instanceof ModelFormatError) throw cause;
    throw new ModelFormatError(`cannot load tokenizer ${path}: ${(cause as Error).message}`, { cause });
  }
  // The file may carry its own padding/truncation: truncation is ours (pairTruncation), padding is
  // done per batch.
  tokenizer.disablePadding();
  tokenizer.disableTruncation();
  return tokenizer;
}

/**
 * Token lengths (query, passage) after HF pair truncation to `window` tokens (max length minus the
 * pair's special tokens), as tokenizers 0.23 computes them from the two `seenLength`s: the shorter
 * side keeps all it has when the longer can take the rest, otherwise the window is split (the odd
 * token to the second side unless the first is longer). only_second with a query that alone fills
 * the window is an error in HF; we fall back to longest_first (documented: the pair is still
 * scored, with the query cut too). Checked against tokenizers on every length pair up to 40 at odd
 * and even windows (test/cross-encoder/tokenize-pairs.test.ts).
 */
export function pairTruncation(q: number, p: number, window: number, mode: TruncationMode): [number, number] {
  if (q + p <= window) return [q, p];
  if (window <= 0) return [0, 0];
  if (mode === 'only_second' && q < window) return [q, window - q];
  let n1 = q;
  let n2 = p;
  const swap = n1 > n2;
  if (swap) [n1, n2] = [n2, n1];
  n2 = n1 > window ? n1 : Math.max(n1, window - n1);
  if (n1 + n2 > window) {
    n1 = Math.floor(window / 2);
    n2 = n1 + (window % 2);
  }
  return swap ? [n2, n1] : [n1, n2];
}

/**
 * The length tokenizers' truncation sees for a sequence: with truncation enabled it stops encoding
 * a sequence after the first word (pre-token) that brings it to ≥ maxLength tokens, so a long side
 * counts as maxLength plus the rest of that word (measured: `x ×126 + xylophone` is seen as 129).
 * Returns undefined when the stop point is not within the first `trusted` tokens (a cut encoding
 * must grow) and the encoding is not the whole text.
 */
export function seenLength(
  wordIds: ReadonlyArray<number | null | undefined>,
  maxLength: number,
  trusted: number,
  whole: boolean,
): number | undefined {
  const n = wordIds.length;
  for (let i = maxLength - 1; i < n; i++) {
    const w = wordIds[i];
    const endsWord = i === n - 1 || w === null || w === undefined || wordIds[i + 1] !== w;
    if (!endsWord) continue;
    const seen = i + 1;
    return seen <= trusted || whole ? seen : undefined;
  }
  return whole ? n : undefined;
}

/** One side of a pair: its encoding (of the whole text or of a cut prefix) and its seen length. */
interface SideEncoding {
  readonly enc: Encoding;
  readonly seen: number;
  /** Leading tokens that are the whole text's (all of them when the whole text was encoded). */
  readonly usable: number;
}

/** One pair's ids and type ids (post-processed). */
interface PairPieces {
  readonly ids: readonly number[];
  readonly typeIds: readonly number[];
}

/** Generous characters per token for the first cut (WordPiece/BPE average ≈ 4–5 on English). */
const CHARS_PER_TOKEN_GUESS = 8;
const MIN_CUT_CHARS = 256;
const CUT_GROWTH = 4;
const NO_SPECIALS = { addSpecialTokens: false } as const;
// The binding's default direction is 'left' (keeps the END of the sequence): always say 'right'.
const RIGHT = 'right';

/** Index of the first token of the encoding's last word: tokens before it survive any cut. */
function trustedTokens(wordIds: ReadonlyArray<number | null | undefined>): number {
  const n = wordIds.length;
  if (n === 0) return 0;
  const last = wordIds[n - 1];
  if (last === null || last === undefined) return n - 1;
  let i = n - 1;
  while (i > 0 && wordIds[i - 1] === last) i--;
  return i;
}

/** Cut position ≤ `at` that does not split a surrogate pair. */
function cutAt(text: string, at: number): number {
  if (at >= text.length) return text.length;
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

export interface PairTokenizerStats {
  /** Sides encoded from a cut prefix (the text was longer than the window could use). */
  cutTexts: number;
  /** Cut sides that had to be encoded again with a longer cut. */
  regrownCuts: number;
  /** Passages scored as more than one window (chunking). */
  chunkedPassages: number;
  /** Pairs produced for chunked passages. */
  chunkPairs: number;
}

/**
 * Pair tokenizer of one worker. `encodePairs` never tokenizes more of a text than the window can
 * use, except for the regrowth described in the module comment.
 */
export class PairTokenizer {
  private readonly tokenizer: Tokenizer;
  readonly maxLength: number;
  readonly truncation: TruncationMode;
  /** Max tokens of query + passage without the pair's special tokens; set by `ready()`. */
  private window = -1;
  readonly stats: PairTokenizerStats = { cutTexts: 0, regrownCuts: 0, chunkedPassages: 0, chunkPairs: 0 };
  readonly chunking: PairChunking | undefined;

  private constructor(
    tokenizer: Tokenizer,
    maxLength: number,
    truncation: TruncationMode,
    chunking: PairChunking | undefined,
  ) {
    this.tokenizer = tokenizer;
    this.maxLength = maxLength;
    this.truncation = truncation;
    this.chunking = chunking;
  }

  static fromFile(options: PairTokenizerOptions): PairTokenizer {
    if (options.truncation !== 'longest_first' && options.truncation !== 'only_second') {
      throw new InvalidArgumentError(
        `truncation must be 'longest_first' or 'only_second', got ${String(options.truncation)}`,
      );
    }
    if (!Number.isSafeInteger(options.maxLength) || options.maxLength < 4) {
      throw new InvalidArgumentError(`maxLength must be an integer >= 4, got ${String(options.maxLength)}`);
    }
    const chunking =
      options.chunking === undefined ? undefined : resolveChunking(options.chunking.stride, options.chunking.maxChunks);
    return new PairTokenizer(loadTokenizer(options.tokenizerPath), options.maxLength, options.truncation, chunking);
  }

  /** Vocabulary size including added tokens. */
  vocabSize(): number {
    return this.tokenizer.getVocabSize(true);
  }

  /** Largest id the tokenizer can emit (added tokens included): the model must embed ids up to it. */
  maxTokenId(): number {
    let max = -1;
    for (const id of Object.values(this.tokenizer.getVocab(true))) if (id > max) max = id;
    return max;
  }

  // ── Pair input order: passage first (NLI premise), or the passage alone (sequence classifier) ──

  /** Max tokens of a single sequence without the single template's special tokens (-1: not yet known). */
  private singleWindow = -1;

  /**
   * Encodes what the model reads for each (query, passage) as `pairInput` says: 'query-passage' is
   * `encodePairs`; 'passage-query' is `encode(passage, query)` (premise = passage, hypothesis =
   * query; 'only_second' still cuts only the passage, i.e. HF's OnlyFirst, falling back to
   * longest_first when the query alone fills the window); 'passage' is `encode(passage)` with the
   * single-sequence template (the query is not read). Same bounded-cost side encoding as pairs.
   */
  async encodeInputs(query: string, passages: readonly string[], pairInput: PairInput): Promise<EncodedPairs> {
    if (pairInput === 'query-passage') return this.encodePairs(query, passages);
    let encodings: Encoding[];
    try {
      if (pairInput === 'passage') {
        if (this.singleWindow < 0) {
          const empty = await this.tokenizer.encode('', null, NO_SPECIALS);
          this.singleWindow = Math.max(0, this.maxLength - this.tokenizer.postProcess(empty, null, true).getLength());
        }
        const window = this.singleWindow;
        encodings = await Promise.all(
          passages.map(async (passage) => {
            const p = await this.encodeSide(passage);
            if (window < p.enc.getLength()) p.enc.truncate(window, 0, RIGHT);
            return this.tokenizer.postProcess(p.enc, null, true);
          }),
        );
      } else {
        const window = await this.pairWindow();
        const q = await this.encodeSide(query);
        encodings = await Promise.all(
          passages.map(async (passage) => {
            const p = await this.encodeSide(passage);
            const [nq, np] = PairTokenizer.passageFirstTruncation(q.seen, p.seen, window, this.truncation);
            const qEnc = this.tokenizer.postProcess(q.enc, null, false);
            if (nq < qEnc.getLength()) qEnc.truncate(nq, 0, RIGHT);
            if (np < p.enc.getLength()) p.enc.truncate(np, 0, RIGHT);
            return this.tokenizer.postProcess(p.enc, qEnc, true);
          }),
        );
      }
    } catch (cause) {
      if (cause instanceof TokenizationError) throw cause;
      throw new TokenizationError(`tokenization failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    }
    return packEncodings(encodings);
  }

  /**
   * Each text alone with the single-sequence template (`[CLS] text [SEP]` for BERT), cut to
   * maxLength tokens (special tokens included): what a bi-encoder reads, as sentence-transformers'
   * encode tokenizes it. Same bounded-cost encoding as the passages of `encodeInputs(…, 'passage')`.
   */
  async encodeTexts(texts: readonly string[]): Promise<EncodedPairs> {
    return this.encodeInputs('', texts, 'passage');
  }

  /** [query, passage] lengths when the passage is the first sequence (see encodeInputs). */
  static passageFirstTruncation(q: number, p: number, window: number, mode: TruncationMode): [number, number] {
    if (mode === 'only_second' && q < window) return pairTruncation(q, p, window, 'only_second');
    const [np, nq] = pairTruncation(p, q, window, 'longest_first');
    return [nq, np];
  }

  // ── end of pair input order ──

  /** Special tokens the post-processor adds to a pair (e.g. 3 for BERT, 4 for RoBERTa). */
  private async pairWindow(): Promise<number> {
    if (this.window < 0) {
      const empty = await this.tokenizer.encode('', null, NO_SPECIALS);
      const specials = this.tokenizer.postProcess(empty, empty, true).getLength();
      this.window = Math.max(0, this.maxLength - specials);
    }
    return this.window;
  }

  /** Encodes one pair exactly as `tokenizer.encode(query, passage)` with this tokenizer's truncation. */
  async encodePair(query: string, passage: string): Promise<{ ids: number[]; typeIds: number[] }> {
    const enc = await this.encodePairs(query, [passage]);
    // With chunking the first pair is the truncated one; the others are further windows.
    const n = enc.lengths[0];
    return { ids: Array.from(enc.ids.subarray(0, n)), typeIds: Array.from(enc.typeIds.subarray(0, n)) };
  }

  /**
   * Encodes `query` with each passage; packed for transfer. Without chunking, one pair per passage,
   * identical to `encode(query, passage)` with truncation. With chunking, a passage whose tokens do
   * not fit gives several pairs: the first is exactly the truncated pair; the next ones keep the
   * same (possibly truncated) query and special tokens and hold the following windows of the
   * passage's tokens (`chunkRanges`), `chunks[i]` of them for passage i.
   */
  async encodePairs(query: string, passages: readonly string[]): Promise<EncodedPairs> {
    const window = await this.pairWindow();
    let pieces: PairPieces[][];
    try {
      const q = await this.encodeSide(query);
      pieces = await Promise.all(passages.map((p) => this.encodeOne(q, p, window)));
    } catch (cause) {
      if (cause instanceof TokenizationError) throw cause;
      throw new TokenizationError(`tokenization failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    }
    let pairs = 0;
    for (const list of pieces) pairs += list.length;
    const lengths = new Int32Array(pairs);
    const offsets = new Int32Array(pairs);
    let total = 0;
    let k = 0;
    for (const list of pieces) {
      for (const pair of list) {
        lengths[k] = pair.ids.length;
        offsets[k++] = total;
        total += pair.ids.length;
      }
    }
    const ids = new Int32Array(total);
    const typeIds = new Int32Array(total);
    k = 0;
    for (const list of pieces) {
      for (const pair of list) {
        ids.set(pair.ids, offsets[k]);
        typeIds.set(pair.typeIds, offsets[k++]);
      }
    }
    if (this.chunking === undefined) return { ids, typeIds, lengths, offsets };
    return { ids, typeIds, lengths, offsets, chunks: Int32Array.from(pieces, (list) => list.length) };
  }

  private async encodeOne(q: SideEncoding, passage: string, window: number): Promise<PairPieces[]> {
    const chunking = this.chunking;
    // With chunking the passage is read up to what maxChunks windows can use (bounded cost).
    const p = await this.encodeSide(passage, chunking === undefined ? this.maxLength : chunking.maxChunks * window);
    const [nq, np] = pairTruncation(q.seen, p.seen, window, this.truncation);
    const passageIds = chunking !== undefined && np < p.usable ? p.enc.getIds().slice(0, p.usable) : null;
    // The query encoding is shared by every pair of the call: truncate a copy.
    const qEnc = this.tokenizer.postProcess(q.enc, null, false);
    if (nq < qEnc.getLength()) qEnc.truncate(nq, 0, RIGHT);
    if (np < p.enc.getLength()) p.enc.truncate(np, 0, RIGHT);
    const first = this.tokenizer.postProcess(qEnc, p.enc, true);
    const firstPair = { ids: first.getIds(), typeIds: first.getTypeIds() };
    if (passageIds === null || chunking === undefined || np <= 0) return [firstPair];
    // The pair template around the passage: its tokens are the one run of sequence id 1.
    const seq = first.getSequenceIds();
    const at = seq.indexOf(1);
    const typeId = firstPair.typeIds[at];
    let uniform = at >= 0 && seq.lastIndexOf(1) === at + np - 1;
    for (let i = at; uniform && i < at + np; i++) uniform = seq[i] === 1 && firstPair.typeIds[i] === typeId;
    if (!uniform) return [firstPair]; // a post-processor we cannot re-apply by splicing: truncate
    const ranges = chunkRanges(passageIds.length, np, chunking.stride, chunking.maxChunks);
    const out: PairPieces[] = [firstPair];
    const before = firstPair.ids.slice(0, at);
    const after = firstPair.ids.slice(at + np);
    const typesBefore = firstPair.typeIds.slice(0, at);
    const typesAfter = firstPair.typeIds.slice(at + np);
    for (let c = 1; c < ranges.length; c++) {
      const [from, to] = ranges[c];
      const body = passageIds.slice(from, to);
      out.push({
        ids: [...before, ...body, ...after],
        typeIds: [...typesBefore, ...new Array<number>(body.length).fill(typeId), ...typesAfter],
      });
    }
    if (out.length > 1) {
      this.stats.chunkedPassages++;
      this.stats.chunkPairs += out.length;
    }
    return out;
  }

  /**
   * The text's encoding and seen length, from a cut prefix when the text is longer than the
   * truncation can see: then every kept token (≤ window < seen) is one of the whole text's.
   * `need`: leading tokens that must be the whole text's (default the window; more for chunks).
   */
  private async encodeSide(text: string, need = this.maxLength): Promise<SideEncoding> {
    const target = Math.max(need, this.maxLength);
    let cut = Math.max(MIN_CUT_CHARS, target * CHARS_PER_TOKEN_GUESS);
    let first = true;
    while (cut < text.length) {
      const enc = await this.tokenizer.encode(text.slice(0, cutAt(text, cut)), null, NO_SPECIALS);
      if (first) this.stats.cutTexts++;
      else this.stats.regrownCuts++;
      first = false;
      const words = enc.getWordIds();
      const trusted = trustedTokens(words);
      const seen = seenLength(words, this.maxLength, trusted, false);
      if (seen !== undefined && trusted >= target) return { enc, seen, usable: trusted };
      cut *= CUT_GROWTH;
    }
    const enc = await this.tokenizer.encode(text, null, NO_SPECIALS);
    return { enc, seen: seenLength(enc.getWordIds(), this.maxLength, 0, true) as number, usable: enc.getLength() };
  }
}
