/**
 * Tokenization parity: PairTokenizer must produce exactly what the Rust `tokenizers` reference
 * `encode(query, passage)` produces with the same truncation — ids, type ids, attention mask —
 * on real judged pairs from ../shared/data, including pairs truncated at 128 and at 512.
 */
import { type Encoding, Tokenizer } from 'tokenizers';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, ModelFormatError } from '../../src/errors.js';
import { PairTokenizer, resolveMaxLength, type TruncationMode } from '../../src/tiers/cross-encoder/tokenize-pairs.js';
import { BERT_TOKENIZER_JSON, judgedPairs, type TextPair } from './data.js';

const CLS = 101;
const SEP = 102;

function reference(maxLength: number, strategy: 'LongestFirst' | 'OnlySecond'): Tokenizer {
  const t = Tokenizer.fromFile(BERT_TOKENIZER_JSON);
  t.setTruncation(maxLength, { strategy: strategy as never });
  return t;
}

async function checkParity(pairs: readonly TextPair[], maxLength: number, mode: TruncationMode) {
  const ref = reference(maxLength, mode === 'longest_first' ? 'LongestFirst' : 'OnlySecond');
  // only_second cannot fit a query longer than the limit: those pairs fall back to longest_first.
  const fallbackRef = reference(maxLength, 'LongestFirst');
  let fellBack = 0;
  const ours = PairTokenizer.fromFile({ tokenizerPath: BERT_TOKENIZER_JSON, maxLength, truncation: mode });
  let truncated = 0;
  // Group by query, as requests arrive.
  const byQuery = new Map<string, string[]>();
  for (const p of pairs) {
    const list = byQuery.get(p.query) ?? [];
    list.push(p.passage);
    byQuery.set(p.query, list);
  }
  let checked = 0;
  for (const [query, passages] of byQuery) {
    const enc = await ours.encodePairs(query, passages);
    expect(enc.lengths.length).toBe(passages.length);
    for (let i = 0; i < passages.length; i++) {
      let want: Encoding;
      try {
        want = await ref.encode(query, passages[i]);
      } catch (err) {
        if (mode !== 'only_second') throw err;
        want = await fallbackRef.encode(query, passages[i]);
        fellBack++;
      }
      const from = enc.offsets[i];
      const len = enc.lengths[i];
      const ids = Array.from(enc.ids.subarray(from, from + len));
      const typeIds = Array.from(enc.typeIds.subarray(from, from + len));
      expect(ids).toEqual(want.getIds());
      expect(typeIds).toEqual(want.getTypeIds());
      // We send an all-ones mask for the real tokens (padding is added per batch).
      expect(want.getAttentionMask()).toEqual(new Array(len).fill(1));
      expect(len).toBeLessThanOrEqual(maxLength);
      // Special tokens survive truncation: [CLS] A [SEP] B [SEP].
      expect(ids[0]).toBe(CLS);
      expect(ids[len - 1]).toBe(SEP);
      expect(ids.filter((x) => x === SEP).length).toBeGreaterThanOrEqual(2);
      if (len === maxLength) truncated++;
      checked++;
    }
  }
  return { truncated, checked, fellBack };
}

describe('PairTokenizer parity with tokenizers encode(query, passage)', () => {
  // 5 collections × 220 judged pairs = 1100 real pairs.
  const pairs = judgedPairs(220);

  it('uses >= 1000 real pairs from several collections', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(pairs.map((p) => p.collection)).size).toBe(5);
  });

  it('is identical at max length 512, longest_first (incl. pairs truncated at 512)', async () => {
    const { truncated, checked } = await checkParity(pairs, 512, 'longest_first');
    expect(checked).toBe(pairs.length);
    expect(truncated).toBeGreaterThanOrEqual(20);
  });

  it('is identical at max length 128, longest_first (most pairs truncated)', async () => {
    const { truncated } = await checkParity(pairs, 128, 'longest_first');
    expect(truncated).toBeGreaterThan(pairs.length / 2);
  });

  it('is identical with only_second truncation at 128 (long queries fall back to longest_first)', async () => {
    const { truncated, fellBack, checked } = await checkParity(pairs, 128, 'only_second');
    expect(truncated).toBeGreaterThan(checked / 2);
    // CISI has queries longer than 128 tokens: the fallback path is exercised, but rarely.
    expect(fellBack).toBeGreaterThan(0);
    expect(fellBack).toBeLessThan(checked / 10);
  });

  it('only_second differs from longest_first when the query is long (the option does something)', async () => {
    const q = 'what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft';
    const p = 'the aerodynamics of a wing in a slipstream '.repeat(20);
    const a = await PairTokenizer.fromFile({
      tokenizerPath: BERT_TOKENIZER_JSON,
      maxLength: 24,
      truncation: 'only_second',
    }).encodePairs(q, [p]);
    const b = await PairTokenizer.fromFile({
      tokenizerPath: BERT_TOKENIZER_JSON,
      maxLength: 24,
      truncation: 'longest_first',
    }).encodePairs(q, [p]);
    const qLen = (await reference(512, 'LongestFirst').encode(q)).getLength() - 2;
    // only_second keeps the whole query when it fits: [CLS] q [SEP] p' [SEP].
    expect(qLen).toBeLessThan(20);
    expect(a.ids[qLen + 1]).toBe(SEP);
    expect(Array.from(a.ids)).not.toEqual(Array.from(b.ids));
  });

  it('is identical when both sides exceed the limit (longest-first tie-break on full lengths)', async () => {
    // Long passages used as queries: both sides longer than 64 tokens, query longer or shorter.
    const long = pairs.filter((p) => p.passage.length > 1500).slice(0, 40);
    const swapped: TextPair[] = long.map((p, i) => ({
      collection: p.collection,
      query: p.passage,
      passage: long[(i + 1) % long.length].passage,
    }));
    const { truncated } = await checkParity(swapped, 64, 'longest_first');
    expect(truncated).toBe(swapped.length);
  });

  it('only_second with a query longer than the limit scores the pair with longest_first', async () => {
    const tok = PairTokenizer.fromFile({
      tokenizerPath: BERT_TOKENIZER_JSON,
      maxLength: 16,
      truncation: 'only_second',
    });
    const got = await tok.encodePairs('word '.repeat(40), ['a passage']);
    const want = await reference(16, 'LongestFirst').encode('word '.repeat(40), 'a passage');
    expect(Array.from(got.ids)).toEqual(want.getIds());
  });

  it('a missing tokenizer file fails with a typed error', () => {
    expect(() =>
      PairTokenizer.fromFile({
        tokenizerPath: '/nonexistent/tokenizer.json',
        maxLength: 16,
        truncation: 'longest_first',
      }),
    ).toThrow(ModelFormatError);
  });

  it('handles empty strings and unicode like the reference', async () => {
    const odd: TextPair[] = [
      { collection: 'x', query: '', passage: 'only a passage' },
      { collection: 'x', query: 'a query', passage: '' },
      { collection: 'x', query: 'Ünïcödé ✓ 東京', passage: 'emoji 🎉 and accents café naïve' },
    ];
    for (const p of odd) await checkParity([p], 32, 'longest_first');
  });
});

describe('resolveMaxLength', () => {
  it('defaults to 512 capped by the model limits and ignores HF sentinels', () => {
    expect(resolveMaxLength(undefined, {})).toBe(512);
    expect(resolveMaxLength(undefined, { maxPositionEmbeddings: 256 })).toBe(256);
    expect(resolveMaxLength(undefined, { maxPositionEmbeddings: 512, tokenizerModelMaxLength: 1e30 })).toBe(512);
    expect(resolveMaxLength(128, { maxPositionEmbeddings: 512 })).toBe(128);
  });

  it('refuses lengths above the model limit or below 4', () => {
    expect(() => resolveMaxLength(1024, { maxPositionEmbeddings: 512 })).toThrow(InvalidArgumentError);
    expect(() => resolveMaxLength(3, {})).toThrow(InvalidArgumentError);
    expect(() => resolveMaxLength(12.5, {})).toThrow(InvalidArgumentError);
  });
});
