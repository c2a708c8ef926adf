/**
 * Bounded tokenization: texts longer than the window can use are cut before tokenization, and the
 * ids must be identical to encoding the uncut pair with the reference (tokenizers encode with
 * truncation) on real texts, on adversarial ones (long words, no spaces, emoji, CJK, combining
 * marks, whitespace runs, added tokens in the text) and with three tokenizer families (BERT
 * WordPiece, RoBERTa byte-level BPE, ModernBERT BPE with NFC). A 10 MB passage must cost about
 * what a window-sized one costs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Encoding, Tokenizer } from 'tokenizers';
import { describe, expect, it } from 'vitest';
import {
  PairTokenizer,
  pairTruncation,
  seenLength,
  type TruncationMode,
} from '../../src/tiers/cross-encoder/tokenize-pairs.js';
import { mulberry32 } from '../../src/util/seeded-random.js';
import { BERT_TOKENIZER_JSON, judgedPairs } from './data.js';

const SHARED_TOKENIZERS = join(BERT_TOKENIZER_JSON, '..', '..', '..', 'tokenizers');
const FAMILIES: Record<string, string> = {
  bert: BERT_TOKENIZER_JSON,
  roberta: join(SHARED_TOKENIZERS, 'roberta-large-mnli', 'tokenizer.json'),
  modernbert: join(SHARED_TOKENIZERS, 'modernbert-large', 'tokenizer.json'),
};

function reference(path: string, maxLength: number, mode: TruncationMode): Tokenizer {
  const t = Tokenizer.fromFile(path);
  t.setTruncation(maxLength, { strategy: (mode === 'longest_first' ? 'LongestFirst' : 'OnlySecond') as never });
  return t;
}

async function expectParity(path: string, maxLength: number, mode: TruncationMode, query: string, passages: string[]) {
  const ours = PairTokenizer.fromFile({ tokenizerPath: path, maxLength, truncation: mode });
  const ref = reference(path, maxLength, mode);
  const fallback = reference(path, maxLength, 'longest_first');
  const got = await ours.encodePairs(query, passages);
  for (let i = 0; i < passages.length; i++) {
    let want: Encoding;
    try {
      want = await ref.encode(query, passages[i]);
    } catch {
      want = await fallback.encode(query, passages[i]); // only_second with a too long query
    }
    const ids = Array.from(got.ids.subarray(got.offsets[i], got.offsets[i] + got.lengths[i]));
    const typeIds = Array.from(got.typeIds.subarray(got.offsets[i], got.offsets[i] + got.lengths[i]));
    expect(ids, `pair ${i} (${passages[i].length} chars)`).toEqual(want.getIds());
    expect(typeIds).toEqual(want.getTypeIds());
  }
  return ours.stats;
}

const rand = mulberry32(7);
function words(n: number): string {
  const vocab = ['aeroelastic', 'flutter', 'the', 'of', 'boundary-layer', 'x', 'naïve', 'Ünïcödé', '42', 'heat'];
  return Array.from({ length: n }, () => vocab[Math.floor(rand() * vocab.length)]).join(' ');
}

const ADVERSARIAL: Record<string, string> = {
  'one giant word': 'a'.repeat(20_000),
  'giant word then words': `${'b'.repeat(5_000)} ${words(2000)}`,
  'spaces then words': `${' '.repeat(30_000)}${words(1500)}`,
  'newlines and tabs': `${'\n\t '.repeat(3000)}${words(800)}`,
  emoji: '😀🎉 '.repeat(4000),
  'emoji no spaces': '😀'.repeat(9000),
  'CJK no spaces': '東京大学の研究者は'.repeat(2000),
  'combining marks': 'e\u0301a\u0308 '.repeat(5000),
  'only combining marks': '\u0301'.repeat(10_000),
  'added tokens in text': '[SEP] [CLS] <s> </s> [MASK] '.repeat(1500),
  'long words over 100 chars': `${'z'.repeat(150)} `.repeat(200),
  'words near the limit': words(600),
  'mixed scripts': `Привет мир ${words(300)} مرحبا ${'한국어 '.repeat(500)}`,
  'lone surrogates': `${'\ud800 word '.repeat(2000)}`,
};

describe('bounded tokenization keeps ids identical to the uncut pair', () => {
  for (const [family, path] of Object.entries(FAMILIES)) {
    const run = existsSync(path) ? it : it.skip;
    run(
      `${family}: adversarial passages, both truncation modes (max length 64 and 512 for bert, 512 for the others)`,
      async () => {
        const passages = Object.values(ADVERSARIAL);
        let cut = 0;
        for (const maxLength of family === 'bert' ? [64, 512] : [512]) {
          for (const mode of ['longest_first', 'only_second'] as const) {
            cut += (await expectParity(path, maxLength, mode, 'what is aeroelastic flutter', passages)).cutTexts;
            // Long queries too (the query is cut the same way).
            cut += (
              await expectParity(path, maxLength, mode, ADVERSARIAL['giant word then words'], passages.slice(0, 6))
            ).cutTexts;
          }
        }
        expect(cut).toBeGreaterThan(10); // the cut path was taken, not skipped
      },
      120_000,
    );
  }

  it('real judged pairs with long passages repeated to 40k characters (bert, 128 and 512)', async () => {
    const pairs = judgedPairs(30).filter((p) => p.passage.length > 600);
    for (const maxLength of [128, 512]) {
      const passages = pairs.slice(0, 30).map((p) => p.passage.repeat(Math.ceil(40_000 / p.passage.length)));
      await expectParity(BERT_TOKENIZER_JSON, maxLength, 'longest_first', pairs[0].query, passages);
    }
  });

  it('a 10 MB passage costs about what a window-sized one does', async () => {
    const ours = PairTokenizer.fromFile({
      tokenizerPath: BERT_TOKENIZER_JSON,
      maxLength: 512,
      truncation: 'longest_first',
    });
    const normal = words(600);
    const huge = words(1_700_000).slice(0, 10_000_000);
    const cutBefore = ours.stats.cutTexts;
    const got = await ours.encodePairs('q', [huge]);
    expect(got.lengths[0]).toBe(512);
    // The text was cut before tokenization (what bounds its cost; bench/ measures the time).
    expect(ours.stats.cutTexts).toBe(cutBefore + 1);
    expect((await ours.encodePairs('q', [normal])).lengths[0]).toBeLessThanOrEqual(512);
  });

  it('a side is seen up to the end of the word that reaches maxLength (tokenizers stops there)', async () => {
    const ref = Tokenizer.fromFile(BERT_TOKENIZER_JSON);
    ref.setTruncation(128);
    const full = Tokenizer.fromFile(BERT_TOKENIZER_JSON);
    for (const k of [124, 125, 126, 127]) {
      const query = `${'x '.repeat(k)}xylophone x x x x`; // xylophone is 3 tokens
      const passage = 'y '.repeat(129);
      const seq = (await ref.encode(query, passage)).getSequenceIds();
      const qEnc = await full.encode(query, null, { addSpecialTokens: false });
      const seen = seenLength(qEnc.getWordIds(), 128, 0, true) as number;
      expect(seen).toBe(Math.max(128, k + 3));
      expect(pairTruncation(seen, 128, 125, 'longest_first')[0]).toBe(seq.filter((s) => s === 0).length);
    }
  });

  it('pairTruncation matches tokenizers on length pairs up to 40 (odd and even windows)', async () => {
    const t = Tokenizer.fromFile(BERT_TOKENIZER_JSON);
    for (const [strategy, mode] of [
      ['LongestFirst', 'longest_first'],
      ['OnlySecond', 'only_second'],
    ] as const) {
      for (const maxLength of [5, 16, 17]) {
        t.setTruncation(maxLength, { strategy: strategy as never });
        for (let a = 0; a < 40; a += 3) {
          for (let b = 0; b < 40; b += 2) {
            let e: Encoding;
            try {
              e = await t.encode('x '.repeat(a), 'y '.repeat(b));
            } catch {
              continue; // only_second refuses a query that fills the window (we fall back)
            }
            const seq = e.getSequenceIds();
            const want = [seq.filter((s) => s === 0).length, seq.filter((s) => s === 1).length];
            // One token per word: tokenizers sees each side stopped at maxLength (seenLength).
            const seen = (n: number) => Math.min(n, maxLength);
            expect(pairTruncation(seen(a), seen(b), maxLength - 3, mode), `${strategy} ${maxLength} ${a} ${b}`).toEqual(
              want,
            );
          }
        }
      }
    }
  });
});
