/**
 * Pair tokenization per model family with each family's REAL tokenizer file from
 * ../shared/tokenizers: BERT WordPiece (ms-marco-MiniLM-L-6-v2's tokenizer.json, `[CLS] A [SEP] B
 * [SEP]` with type ids), RoBERTa byte-level BPE (roberta-large-mnli's old-format tokenizer.json,
 * `<s> A </s></s> B </s>`, no type ids) and ModernBERT BPE + NFC (modernbert-large, `[CLS] A [SEP]
 * B [SEP]`). On ≥ 500 real judged pairs per family, token ids and type ids must be identical to the
 * `tokenizers` library's own `encode(query, passage)` with truncation at the same max length, in
 * both truncation modes, truncated pairs included. The window each family gets comes from its
 * real config.json / tokenizer_config.json.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Encoding, Tokenizer } from 'tokenizers';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import {
  PairTokenizer,
  readModelLengthLimits,
  resolveMaxLength,
  type TruncationMode,
} from '../../src/tiers/cross-encoder/tokenize-pairs.js';
import { judgedPairs, SHARED_DATA, type TextPair } from './data.js';

const SHARED_TOKENIZERS = join(SHARED_DATA, '..', 'tokenizers');

interface Family {
  readonly folder: string;
  /** First and last id of every pair the tokenizer's post-processor builds. */
  readonly layout: { readonly cls: number; readonly end: number };
  readonly hasTypeIds: boolean;
  /** The window the folder's configs give (default max length, and the model's own limit). */
  readonly defaultWindow: number;
  readonly modelLimit: number;
}

const FAMILIES: Record<string, Family> = {
  bert: {
    folder: 'ms-marco-MiniLM-L-6-v2',
    layout: { cls: 101, end: 102 },
    hasTypeIds: true,
    defaultWindow: 512,
    modelLimit: 512,
  },
  roberta: {
    folder: 'roberta-large-mnli',
    layout: { cls: 0, end: 2 },
    hasTypeIds: false,
    defaultWindow: 512,
    modelLimit: 512, // max_position_embeddings 514 = 512 tokens + padding_idx 1 + 1
  },
  modernbert: {
    folder: 'modernbert-large',
    layout: { cls: 50281, end: 50282 },
    hasTypeIds: false,
    defaultWindow: 512,
    modelLimit: 8192, // tokenizer_config model_max_length is the 1e30 placeholder
  },
};

function paths(family: Family) {
  const dir = join(SHARED_TOKENIZERS, family.folder);
  return {
    tokenizer: join(dir, 'tokenizer.json'),
    config: join(dir, 'config.json'),
    tokenizerConfig: join(dir, 'tokenizer_config.json'),
  };
}

function reference(path: string, maxLength: number, mode: TruncationMode): Tokenizer {
  const t = Tokenizer.fromFile(path);
  t.setTruncation(maxLength, { strategy: (mode === 'longest_first' ? 'LongestFirst' : 'OnlySecond') as never });
  return t;
}

/** Checks every pair; returns how many the reference truncated and how many fell back (only_second). */
async function checkFamily(family: Family, pairs: readonly TextPair[], maxLength: number, mode: TruncationMode) {
  const { tokenizer } = paths(family);
  const ours = PairTokenizer.fromFile({ tokenizerPath: tokenizer, maxLength, truncation: mode });
  const ref = reference(tokenizer, maxLength, mode);
  const fallback = reference(tokenizer, maxLength, 'longest_first');
  const full = Tokenizer.fromFile(tokenizer);
  const byQuery = new Map<string, string[]>();
  for (const p of pairs) byQuery.set(p.query, [...(byQuery.get(p.query) ?? []), p.passage]);
  let truncated = 0;
  let fellBack = 0;
  let checked = 0;
  for (const [query, passages] of byQuery) {
    const got = await ours.encodePairs(query, passages);
    expect(got.lengths.length).toBe(passages.length);
    expect(got.chunks).toBeUndefined();
    for (let i = 0; i < passages.length; i++) {
      let want: Encoding;
      try {
        want = await ref.encode(query, passages[i]);
      } catch (err) {
        if (mode !== 'only_second') throw err;
        want = await fallback.encode(query, passages[i]);
        fellBack++;
      }
      const from = got.offsets[i];
      const ids = Array.from(got.ids.subarray(from, from + got.lengths[i]));
      const typeIds = Array.from(got.typeIds.subarray(from, from + got.lengths[i]));
      expect(ids).toEqual(want.getIds());
      expect(typeIds).toEqual(want.getTypeIds());
      if (!family.hasTypeIds) expect(new Set(typeIds)).toEqual(new Set([0]));
      // The family's pair layout: <cls> A <sep…> B <end>.
      expect(ids[0]).toBe(family.layout.cls);
      expect(ids.at(-1)).toBe(family.layout.end);
      const untruncated = (await full.encode(query, passages[i])).getLength();
      if (untruncated > maxLength) truncated++;
      checked++;
    }
  }
  return { truncated, fellBack, checked };
}

describe('pair tokenization per family with real tokenizer files', () => {
  // 5 collections × 100 = 500 real judged pairs per family and setting.
  const pairs = judgedPairs(100);

  it('uses >= 500 real pairs from 5 collections', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(500);
    expect(new Set(pairs.map((p) => p.collection)).size).toBe(5);
  });

  for (const [name, family] of Object.entries(FAMILIES)) {
    const present = existsSync(paths(family).tokenizer);
    const test = present ? it : it.skip;

    test(`${name}: the window from its config.json / tokenizer_config.json`, () => {
      const { config, tokenizerConfig } = paths(family);
      const limits = readModelLengthLimits(config, existsSync(tokenizerConfig) ? tokenizerConfig : null);
      expect(resolveMaxLength(undefined, limits)).toBe(family.defaultWindow);
      expect(resolveMaxLength(family.modelLimit, limits)).toBe(family.modelLimit);
      expect(() => resolveMaxLength(family.modelLimit + 1, limits)).toThrow(InvalidArgumentError);
    });

    for (const [maxLength, mode] of [
      [family.defaultWindow, 'longest_first'],
      [128, 'longest_first'],
      [128, 'only_second'],
    ] as const) {
      test(`${name}: ids${family.hasTypeIds ? ' and type ids' : ''} identical to encode(query, passage) on 500 real pairs (max length ${maxLength}, ${mode})`, async () => {
        const { truncated, fellBack, checked } = await checkFamily(family, pairs, maxLength, mode);
        expect(checked).toBe(pairs.length);
        // Truncated pairs are part of the check: some at the full window, most at 128.
        expect(truncated).toBeGreaterThanOrEqual(maxLength === 128 ? checked / 2 : 10);
        if (mode === 'only_second') expect(fellBack).toBeLessThan(checked / 10);
      }, 120_000);
    }
  }

  it('modernbert: identical at its full 8192-token window on passages repeated past it', async () => {
    const family = FAMILIES.modernbert;
    if (!existsSync(paths(family).tokenizer)) return;
    const long = pairs
      .filter((p) => p.passage.length > 1000)
      .slice(0, 12)
      .map((p) => ({ ...p, passage: p.passage.repeat(Math.ceil(50_000 / p.passage.length)) }));
    const { truncated } = await checkFamily(family, long, 8192, 'longest_first');
    expect(truncated).toBe(long.length);
  }, 120_000);

  it('other real configs: bge-reranker XLM-R (514 and 8194 positions), TinyBERT, the 1e30 placeholder', () => {
    const limits = (folder: string) => {
      const dir = join(SHARED_TOKENIZERS, folder);
      const tc = join(dir, 'tokenizer_config.json');
      return readModelLengthLimits(join(dir, 'config.json'), existsSync(tc) ? tc : null);
    };
    for (const [folder, limit] of [
      ['bge-reranker-large', 512],
      ['bge-reranker-v2-m3', 8192],
      ['ms-marco-TinyBERT-L-2-v2', 512],
      ['ms-marco-MiniLM-L6-v2-st5-save', 512],
    ] as const) {
      if (!existsSync(join(SHARED_TOKENIZERS, folder, 'config.json'))) continue;
      const l = limits(folder);
      expect(resolveMaxLength(limit, l), folder).toBe(limit);
      expect(() => resolveMaxLength(limit + 1, l), folder).toThrow(InvalidArgumentError);
    }
    // ModernBERT's tokenizer_config says 1e30: ignored, the config's 8192 positions decide.
    expect(limits('modernbert-large').tokenizerModelMaxLength).toBe(1e30);
    expect(limits('roberta-large-mnli').maxPositionEmbeddings).toBe(512);
  });
});
