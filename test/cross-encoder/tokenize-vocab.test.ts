/**
 * Folders with only a slow-tokenizer vocab.txt (cross-encoder/ms-marco-TinyBERT-L-2-v2's real
 * layout): the WordPiece tokenizer built from vocab.txt + tokenizer_config.json must be the one
 * transformers' converter writes. Proof on ms-marco-MiniLM-L-6-v2, whose folder has BOTH a
 * vocab.txt and the published tokenizer.json: the built file equals the published one, and ids and
 * type ids are identical on ≥ 500 real pairs (truncated ones included) and adversarial texts.
 * Then createCrossEncoder loads a vocab.txt-only folder and scores like an independent session.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelFormatError } from '../../src/errors.js';
import { createCrossEncoder } from '../../src/tiers/cross-encoder/cross-encoder.js';
import { writeCrossEncoderModelDir } from '../../src/tooling/model-gen/index.js';
import { PairTokenizer, type TruncationMode } from '../../src/tiers/cross-encoder/tokenize-pairs.js';
import { readVocabTxt, wordPieceTokenizerJson } from '../../src/tiers/cross-encoder/vocab-tokenizer.js';
import { judgedPairs, SHARED_DATA, type TextPair } from './data.js';

const SHARED_TOKENIZERS = join(SHARED_DATA, '..', 'tokenizers');
const MINILM = join(SHARED_TOKENIZERS, 'ms-marco-MiniLM-L-6-v2');
const TINYBERT = join(SHARED_TOKENIZERS, 'ms-marco-TinyBERT-L-2-v2');
const have = existsSync(join(MINILM, 'vocab.txt')) && existsSync(join(TINYBERT, 'vocab.txt'));
const run = have ? describe : describe.skip;

const temp = mkdtempSync(join(tmpdir(), 'rg-vocab-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const ADVERSARIAL: readonly string[] = [
  'Ünïcödé naïve café résumé Ångström Øresund façade',
  'e\u0301a\u0308 combining marks \u0301\u0301\u0301 alone',
  '東京大学の研究者は空気力学を研究しています。北京',
  '한국어 텍스트 Привет мир مرحبا بالعالم ไทย',
  'control\u0000chars\u0007and\u001b[31m escapes\u200b zero\u200dwidth \ufeff bom',
  'tabs\tand\nnewlines\r\nand\u00a0nbsp\u2028line sep',
  'emoji 😀🎉👩‍👩‍👧 flags 🇫🇷 skin 👍🏽 no-space😀😀😀',
  `${'a'.repeat(99)} ${'b'.repeat(100)} ${'c'.repeat(101)} ${'supercalifragilistic'.repeat(8)}`,
  '[SEP] [CLS] [PAD] [MASK] [UNK] [sep] [cls] inline special tokens',
  'Mixed-CASE Words, PUNCTUATION!!! (brackets) {braces} "quotes" — dashes… ellipsis',
  '\ud800 lone surrogate \udc00 text',
  '',
];

function referenceTokenizer(path: string | { json: string }, maxLength: number, mode: TruncationMode): Tokenizer {
  const t = typeof path === 'string' ? Tokenizer.fromFile(path) : Tokenizer.fromString(path.json);
  t.setTruncation(maxLength, { strategy: (mode === 'longest_first' ? 'LongestFirst' : 'OnlySecond') as never });
  return t;
}

async function encodeOrFallback(t: Tokenizer, fallback: Tokenizer, q: string, p: string) {
  try {
    return await t.encode(q, p);
  } catch {
    return fallback.encode(q, p); // only_second with a query that fills the window
  }
}

run('WordPiece tokenizer built from vocab.txt', () => {
  const pairs: TextPair[] = judgedPairs(110); // 5 collections × 110 = 550 real pairs

  it('is the tokenizer.json transformers publishes next to the same vocab.txt (MiniLM-L6)', () => {
    const built = JSON.parse(wordPieceTokenizerJson(join(MINILM, 'vocab.txt')).json) as Record<string, unknown>;
    const published = JSON.parse(readFileSync(join(MINILM, 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
    expect(built).toEqual(published);
  });

  it('reads vocab.txt as transformers does: line number = id, every line a token', () => {
    const vocab = readVocabTxt(join(MINILM, 'vocab.txt'));
    expect(vocab.size).toBe(30522);
    expect(vocab.get('[PAD]')).toBe(0);
    expect(vocab.get('[UNK]')).toBe(100);
    expect(vocab.get('[CLS]')).toBe(101);
    expect(vocab.get('[SEP]')).toBe(102);
    const odd = join(temp, 'odd-vocab.txt');
    writeFileSync(odd, 'a\r\nb\rc\n\nd\na\n');
    const v = readVocabTxt(odd);
    expect([...v.entries()]).toEqual([
      ['a', 5],
      ['b', 1],
      ['c', 2],
      ['', 3],
      ['d', 4],
    ]);
  });

  for (const [maxLength, mode] of [
    [512, 'longest_first'],
    [128, 'longest_first'],
    [128, 'only_second'],
  ] as const) {
    it(`gives ids and type ids identical to MiniLM's tokenizer.json on ${pairs.length} real pairs + adversarial texts (max length ${maxLength}, ${mode})`, async () => {
      expect(pairs.length).toBeGreaterThanOrEqual(500);
      const built = { json: wordPieceTokenizerJson(join(MINILM, 'vocab.txt')).json };
      const ref = referenceTokenizer(join(MINILM, 'tokenizer.json'), maxLength, mode);
      const refFallback = referenceTokenizer(join(MINILM, 'tokenizer.json'), maxLength, 'longest_first');
      const ours = referenceTokenizer(built, maxLength, mode);
      const oursFallback = referenceTokenizer(built, maxLength, 'longest_first');
      // The tier's own pair tokenizer, reading the vocab.txt path.
      const tier = PairTokenizer.fromFile({ tokenizerPath: join(MINILM, 'vocab.txt'), maxLength, truncation: mode });
      const cases: TextPair[] = [
        ...pairs,
        ...ADVERSARIAL.flatMap((a) => [
          { collection: 'adversarial', query: pairs[0].query, passage: a.repeat(40) },
          { collection: 'adversarial', query: a, passage: pairs[1].passage },
        ]),
      ];
      let truncated = 0;
      for (const { query, passage } of cases) {
        const want = await encodeOrFallback(ref, refFallback, query, passage);
        const got = await encodeOrFallback(ours, oursFallback, query, passage);
        expect(got.getIds()).toEqual(want.getIds());
        expect(got.getTypeIds()).toEqual(want.getTypeIds());
        const viaTier = await tier.encodePair(query, passage);
        expect(viaTier.ids).toEqual(want.getIds());
        expect(viaTier.typeIds).toEqual(want.getTypeIds());
        if (want.getLength() === maxLength) truncated++;
      }
      expect(truncated).toBeGreaterThanOrEqual(maxLength === 512 ? 20 : 250);
    }, 120_000);
  }

  it("TinyBERT-L2's real folder (vocab.txt only) loads with do_lower_case and [CLS]/[SEP] from its configs", async () => {
    const { settings } = wordPieceTokenizerJson(join(TINYBERT, 'vocab.txt'));
    expect(settings).toEqual({
      lowercase: true,
      stripAccents: null,
      handleChineseChars: true,
      cls: '[CLS]',
      sep: '[SEP]',
      unk: '[UNK]',
      pad: '[PAD]',
    });
    const tier = PairTokenizer.fromFile({
      tokenizerPath: join(TINYBERT, 'vocab.txt'),
      maxLength: 512,
      truncation: 'longest_first',
    });
    const ref = referenceTokenizer(join(MINILM, 'tokenizer.json'), 512, 'longest_first');
    for (const { query, passage } of pairs.slice(0, 50)) {
      expect((await tier.encodePair(query, passage)).ids).toEqual((await ref.encode(query, passage)).getIds());
    }
  });

  it('follows tokenizer_config.json: do_lower_case false, strip_accents true, do_basic_tokenize false', async () => {
    const published = readFileSync(join(MINILM, 'tokenizer.json'), 'utf8');
    const variant = (normalizer: Record<string, unknown>) => {
      const j = JSON.parse(published) as { normalizer: Record<string, unknown> };
      Object.assign(j.normalizer, normalizer);
      return Tokenizer.fromString(JSON.stringify(j));
    };
    const text = 'Ünïcödé Café in 東京, NAÏVE Résumé';
    const cases: Array<[object, Tokenizer]> = [
      [{ do_lower_case: false }, variant({ lowercase: false })],
      [{ do_lower_case: true, strip_accents: true }, variant({ strip_accents: true })],
      [{ do_lower_case: false, strip_accents: true }, variant({ lowercase: false, strip_accents: true })],
      [{ tokenize_chinese_chars: false }, variant({ handle_chinese_chars: false })],
      [
        { do_basic_tokenize: false, do_lower_case: true },
        variant({ lowercase: false, strip_accents: false, handle_chinese_chars: false }),
      ],
    ];
    const ids = new Set<string>();
    for (const [i, [config, want]] of cases.entries()) {
      const path = tempVocab(`cfg${i}`, config);
      const got = Tokenizer.fromString(wordPieceTokenizerJson(path).json);
      const a = (await got.encode(text, 'x')).getIds();
      expect(a).toEqual((await want.encode(text, 'x')).getIds());
      ids.add(a.join(','));
    }
    expect(ids.size).toBeGreaterThanOrEqual(4); // the settings change the ids
  });

  it('takes special tokens from special_tokens_map.json over tokenizer_config.json, AddedToken objects too', async () => {
    const path = tempVocab(
      'specials',
      { cls_token: '[MASK]', sep_token: { content: '[unused1]', __type: 'AddedToken' } },
      { cls_token: { content: '[unused0]' } },
    );
    const t = Tokenizer.fromString(wordPieceTokenizerJson(path).json);
    const vocab = readVocabTxt(path);
    const ids = (await t.encode('a', 'b')).getIds();
    expect(ids[0]).toBe(vocab.get('[unused0]'));
    expect(ids[2]).toBe(vocab.get('[unused1]'));
    expect(ids.at(-1)).toBe(vocab.get('[unused1]'));
  });

  it('refuses what it cannot build: another tokenizer class, no unknown token, bad JSON', () => {
    expect(() => wordPieceTokenizerJson(tempVocab('roberta', { tokenizer_class: 'RobertaTokenizer' }))).toThrow(
      ModelFormatError,
    );
    expect(() => wordPieceTokenizerJson(tempVocab('nounk', { unk_token: '<nope>' }))).toThrow(/unknown token/);
    const bad = tempVocab('badjson', {});
    writeFileSync(join(bad, '..', 'tokenizer_config.json'), '{not json');
    expect(() => PairTokenizer.fromFile({ tokenizerPath: bad, maxLength: 16, truncation: 'longest_first' })).toThrow(
      ModelFormatError,
    );
  });

  it('createCrossEncoder loads a vocab.txt-only folder and scores like a session fed the reference ids', async () => {
    const info = await writeCrossEncoderModelDir(join(temp, 'tinybert-vocab-only'), 'tiny', {
      seed: 5,
      tokenizerDir: TINYBERT,
    });
    expect(existsSync(join(info.dir, 'tokenizer.json'))).toBe(false);
    expect(existsSync(join(info.dir, 'vocab.txt'))).toBe(true);
    const ce = await createCrossEncoder({ modelDir: info.dir, workers: 1 });
    try {
      expect(ce.info.tokenizerPath).toBe(join(info.dir, 'vocab.txt'));
      const sample = pairs.slice(0, 40);
      const query = sample[0].query;
      const passages = sample.map((p) => p.passage);
      const scores = await ce.score(query, passages);
      const ref = referenceTokenizer(join(MINILM, 'tokenizer.json'), ce.info.maxLength, 'longest_first');
      const session = await ort.InferenceSession.create(info.modelPath, { intraOpNumThreads: 1 });
      const output = session.outputNames[0];
      for (let i = 0; i < passages.length; i++) {
        const enc = await ref.encode(query, passages[i]);
        const n = enc.getLength();
        const t = (xs: number[]) => new ort.Tensor('int64', BigInt64Array.from(xs.map(BigInt)), [1, n]);
        const feeds: Record<string, ort.Tensor> = {
          input_ids: t(enc.getIds()),
          attention_mask: t(enc.getAttentionMask()),
        };
        if (session.inputNames.includes('token_type_ids')) feeds.token_type_ids = t(enc.getTypeIds());
        const out = (await session.run(feeds))[output].data as Float32Array;
        expect(Math.abs(scores.logits[i] - out[0])).toBeLessThanOrEqual(1e-4);
      }
      await session.release();
    } finally {
      await ce.close();
    }
  }, 60_000);
});

let tempCount = 0;
/** vocab.txt (MiniLM's) + the given configs in a fresh folder; returns the vocab.txt path. */
function tempVocab(name: string, tokenizerConfig: object, specialTokensMap?: object): string {
  const dir = mkdtempSync(join(temp, `${name}-${tempCount++}-`));
  copyFileSync(join(MINILM, 'vocab.txt'), join(dir, 'vocab.txt'));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(tokenizerConfig));
  if (specialTokensMap) writeFileSync(join(dir, 'special_tokens_map.json'), JSON.stringify(specialTokensMap));
  return join(dir, 'vocab.txt');
}
