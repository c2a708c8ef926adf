/**
 * Long passages as chunks (longPassages: 'chunk'): the passage's tokens are cut into windows of
 * what the window leaves after the query and the special tokens, with `chunkStride` tokens of
 * overlap (HF's own overflow windows are the reference), at most `maxChunksPerPassage`. Each
 * window is a pair batched like any other; a passage's logit is the max over its windows, per
 * signal. Checked: windows against tokenizers' `Encoding.truncate(size, stride)` overflow on three
 * families; a passage 10× the window scored end to end equals scoring each window's ids one by one
 * in an independent onnxruntime session; requests with and without chunks batched together stay
 * independent; deadlines and aborts still hold; the cut before tokenization still bounds cost.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError, DeadlineExceededError, InvalidArgumentError } from '../../src/errors.js';
import {
  DynamicBatcher,
  type InferBatch,
  type InferOutput,
  type PairBatchExecutor,
  type TokenizedChunk,
} from '../../src/tiers/cross-encoder/batcher.js';
import {
  createCrossEncoder,
  type CrossEncoder,
  type CrossEncoderScores,
} from '../../src/tiers/cross-encoder/cross-encoder.js';
import { writeCrossEncoderModelDir } from '../../src/tooling/model-gen/index.js';
import { sigmoid } from '../../src/tiers/cross-encoder/model-contract.js';
import { chunkRanges, PairTokenizer, type TruncationMode } from '../../src/tiers/cross-encoder/tokenize-pairs.js';
import { mulberry32 } from '../../src/util/seeded-random.js';
import { BERT_TOKENIZER_JSON, judgedPairs, SHARED_DATA } from './data.js';

const SHARED_TOKENIZERS = join(SHARED_DATA, '..', 'tokenizers');
const FAMILIES: Record<string, string> = {
  bert: BERT_TOKENIZER_JSON,
  roberta: join(SHARED_TOKENIZERS, 'roberta-large-mnli', 'tokenizer.json'),
  modernbert: join(SHARED_TOKENIZERS, 'modernbert-large', 'tokenizer.json'),
};

interface PairIds {
  readonly ids: number[];
  readonly typeIds: number[];
}

const tokenizers = new Map<string, Tokenizer>();
/** The reference tokenizer, with truncation when a max length is given (loaded once per setting). */
function cachedTokenizer(path: string, maxLength?: number, mode?: TruncationMode): Tokenizer {
  const key = `${path}|${maxLength}|${mode}`;
  let t = tokenizers.get(key);
  if (t === undefined) {
    t = Tokenizer.fromFile(path);
    if (maxLength !== undefined) {
      t.setTruncation(maxLength, { strategy: (mode === 'longest_first' ? 'LongestFirst' : 'OnlySecond') as never });
    }
    tokenizers.set(key, t);
  }
  return t;
}

/**
 * What the chunks of (query, passage) must be, built from the reference only: the first is
 * tokenizers' `encode(query, passage)` with truncation; the passage's windows are tokenizers' own
 * overflow of the WHOLE passage encoding truncated to the first pair's passage length with
 * `stride`; each window is put where the passage sits in the first pair.
 */
async function referenceChunks(
  path: string,
  maxLength: number,
  mode: TruncationMode,
  stride: number,
  maxChunks: number,
  query: string,
  passage: string,
): Promise<PairIds[]> {
  const first = await cachedTokenizer(path, maxLength, mode).encode(query, passage);
  const seq = first.getSequenceIds();
  const at = seq.indexOf(1);
  const size = seq.filter((s) => s === 1).length;
  const ids = first.getIds();
  const typeIds = first.getTypeIds();
  const whole = await cachedTokenizer(path).encode(passage, null, { addSpecialTokens: false });
  const passageIds = whole.getIds();
  expect(ids.slice(at, at + size)).toEqual(passageIds.slice(0, size));
  if (passageIds.length <= size) return [{ ids, typeIds }];
  whole.truncate(size, stride, 'right');
  const windows = [whole, ...whole.getOverflowing()].slice(0, maxChunks).map((e) => e.getIds());
  return windows.map((w) => ({
    ids: [...ids.slice(0, at), ...w, ...ids.slice(at + size)],
    typeIds: [...typeIds.slice(0, at), ...new Array<number>(w.length).fill(typeIds[at]), ...typeIds.slice(at + size)],
  }));
}

function pairsOf(enc: TokenizedChunk, passage: number): PairIds[] {
  let first = 0;
  for (let i = 0; i < passage; i++) first += enc.chunks?.[i] ?? 1;
  const count = enc.chunks?.[passage] ?? 1;
  const out: PairIds[] = [];
  for (let k = first; k < first + count; k++) {
    const from = enc.offsets[k];
    out.push({
      ids: Array.from(enc.ids.subarray(from, from + enc.lengths[k])),
      typeIds: Array.from(enc.typeIds.subarray(from, from + enc.lengths[k])),
    });
  }
  return out;
}

const realPairs = judgedPairs(40).filter((p) => p.passage.length > 800);

describe('chunk windows', () => {
  it("chunkRanges are tokenizers' Encoding.truncate(size, stride) overflow windows", async () => {
    const tok = Tokenizer.fromFile(BERT_TOKENIZER_JSON);
    const text = realPairs[0].passage.repeat(3);
    const n = (await tok.encode(text, null, { addSpecialTokens: false })).getLength();
    let compared = 0;
    for (const size of [7, 16, 61, 125]) {
      for (const stride of [0, 1, Math.min(5, Math.floor(size / 2) - 1), Math.floor(size / 2)]) {
        const enc = await tok.encode(text, null, { addSpecialTokens: false });
        const all = enc.getIds();
        enc.truncate(size, stride, 'right');
        const want = [enc, ...enc.getOverflowing()].map((e) => e.getIds());
        const got = chunkRanges(n, size, stride, 10_000).map(([a, b]) => all.slice(a, b));
        expect(got, `size ${size} stride ${stride}`).toEqual(want);
        compared++;
      }
    }
    expect(compared).toBe(16);
    // A stride above half a window is clamped to half (windows always advance by ≥ half).
    expect(chunkRanges(100, 10, 9, 100)).toEqual(chunkRanges(100, 10, 5, 100));
    expect(chunkRanges(100, 10, 0, 3)).toEqual([
      [0, 10],
      [10, 20],
      [20, 30],
    ]);
    expect(chunkRanges(5, 10, 3, 16)).toEqual([[0, 5]]);
  });

  for (const [family, path] of Object.entries(FAMILIES)) {
    const test = existsSync(path) ? it : it.skip;
    test(`${family}: chunk ids equal the reference windows on real passages (both modes, short passages give one pair)`, async () => {
      const stride = 8;
      for (const [maxLength, mode, maxChunks] of [
        [64, 'longest_first', 16],
        [96, 'only_second', 4],
      ] as const) {
        const ours = PairTokenizer.fromFile({
          tokenizerPath: path,
          maxLength,
          truncation: mode,
          chunking: { stride, maxChunks },
        });
        const sample = realPairs.slice(0, 12);
        const query = sample[0].query;
        // Real passages, passages repeated past 10 windows, and a short one.
        const passages = [
          ...sample.map((p) => p.passage),
          sample[1].passage.repeat(Math.ceil((12 * maxLength * 6) / sample[1].passage.length)),
          'a short passage',
        ];
        const got = await ours.encodePairs(query, passages);
        expect(got.chunks?.length).toBe(passages.length);
        let chunked = 0;
        for (let i = 0; i < passages.length; i++) {
          const want = await referenceChunks(path, maxLength, mode, stride, maxChunks, query, passages[i]);
          expect(pairsOf(got, i), `passage ${i}`).toEqual(want);
          for (const pair of want) expect(pair.ids.length).toBeLessThanOrEqual(maxLength);
          if (want.length > 1) chunked++;
        }
        expect(got.chunks?.at(-1)).toBe(1);
        expect(got.chunks?.at(-2)).toBe(maxChunks); // the long one is capped
        expect(chunked).toBeGreaterThan(passages.length / 2);
      }
    }, 60_000);
  }

  it('a long query: the first chunk is the longest_first pair, later ones keep that query part', async () => {
    const maxLength = 48;
    const ours = PairTokenizer.fromFile({
      tokenizerPath: BERT_TOKENIZER_JSON,
      maxLength,
      truncation: 'longest_first',
      chunking: { stride: 4, maxChunks: 8 },
    });
    const query = realPairs[2].passage; // longer than the window
    const passage = realPairs[3].passage;
    const got = await ours.encodePairs(query, [passage]);
    const want = await referenceChunks(BERT_TOKENIZER_JSON, maxLength, 'longest_first', 4, 8, query, passage);
    expect(pairsOf(got, 0)).toEqual(want);
    expect(want.length).toBe(8);
  });

  it('the cut before tokenization still bounds cost: a 10 MB passage costs about maxChunks windows', async () => {
    const maxLength = 128;
    const maxChunks = 16;
    const ours = PairTokenizer.fromFile({
      tokenizerPath: BERT_TOKENIZER_JSON,
      maxLength,
      truncation: 'longest_first',
      chunking: { stride: 16, maxChunks },
    });
    const rand = mulberry32(3);
    const vocab = ['aeroelastic', 'flutter', 'the', 'of', 'boundary-layer', 'x', 'naïve', '42', 'heat', 'wing'];
    const words = (n: number) => Array.from({ length: n }, () => vocab[Math.floor(rand() * vocab.length)]).join(' ');
    const windowsWorth = words(maxChunks * maxLength); // about what 16 windows read
    const huge = words(1_400_000).slice(0, 10_000_000);
    const cutBefore = ours.stats.cutTexts;
    const got = await ours.encodePairs('q', [huge]);
    // Cut to what the windows can hold before tokenization (what bounds its cost; bench/ measures the time).
    expect(got.chunks?.[0]).toBe(maxChunks);
    expect(ours.stats.cutTexts).toBe(cutBefore + 1);
    expect((await ours.encodePairs('q', [windowsWorth])).chunks?.[0]).toBeLessThanOrEqual(maxChunks);
  });
});

/**
 * Fake executor with chunks: a passage of w words has ceil(w / 4) chunks (at most 6); each pair's
 * first id encodes (passage key, chunk), and the "model" gives signal s of chunk c a value whose
 * max over chunks is at a different chunk per signal.
 */
function fakeKey(query: string, passage: string): number {
  let h = 2166136261;
  for (const ch of `${query}\u0001${passage}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return (h >>> 0) % 1_000_000;
}
function chunkCount(passage: string): number {
  const w = passage.trim() === '' ? 0 : passage.trim().split(/\s+/).length;
  return Math.min(6, Math.max(1, Math.ceil(w / 4)));
}
function chunkLogit(key: number, chunk: number, signal: number): number {
  return Math.sin(key * 0.001 + chunk * 1.7 + signal * 2.3) * 10;
}
function expectedMax(query: string, passage: string, signal: number): number {
  const key = fakeKey(query, passage);
  let m = Number.NEGATIVE_INFINITY;
  for (let c = 0; c < chunkCount(passage); c++) m = Math.max(m, chunkLogit(key, c, signal));
  return m;
}

class ChunkingExecutor implements PairBatchExecutor {
  readonly ran: number[] = [];
  private readonly waiting: Array<() => void> = [];
  constructor(
    private readonly signals: number,
    private readonly options: { manual?: boolean; failKey?: number } = {},
  ) {}

  async tokenize(query: string, passages: readonly string[]): Promise<TokenizedChunk> {
    await new Promise((r) => setTimeout(r, 0));
    const chunks = Int32Array.from(passages, chunkCount);
    const lengths: number[] = [];
    const ids: number[] = [];
    passages.forEach((p, i) => {
      for (let c = 0; c < chunks[i]; c++) {
        const len = 3 + ((fakeKey(query, p) + c) % 9);
        lengths.push(len);
        ids.push(fakeKey(query, p) * 100 + c, ...new Array<number>(len - 1).fill(7));
      }
    });
    const offsets = new Int32Array(lengths.length);
    for (let k = 1; k < lengths.length; k++) offsets[k] = offsets[k - 1] + lengths[k - 1];
    return {
      ids: Int32Array.from(ids),
      typeIds: new Int32Array(ids.length),
      lengths: Int32Array.from(lengths),
      offsets,
      chunks,
    };
  }

  async infer(batch: InferBatch): Promise<InferOutput> {
    const n = batch.lengths.length;
    const logits = new Float64Array(n * this.signals);
    let pos = 0;
    const keys: number[] = [];
    for (let k = 0; k < n; k++) {
      const id = batch.ids[pos];
      keys.push(Math.floor(id / 100));
      for (let s = 0; s < this.signals; s++)
        logits[k * this.signals + s] = chunkLogit(Math.floor(id / 100), id % 100, s);
      pos += batch.lengths[k];
    }
    this.ran.push(...keys);
    if (this.options.manual) await new Promise<void>((r) => this.waiting.push(r));
    await new Promise((r) => setTimeout(r, 0));
    if (this.options.failKey !== undefined && keys.includes(this.options.failKey)) throw new Error('simulated failure');
    return { logits, runMs: 0.1 };
  }

  release(): void {
    for (const r of this.waiting.splice(0)) r();
  }
}

describe('batching chunks', () => {
  const options = { workers: 2, maxBatchTokens: 64, maxQueueDelayMs: 1, maxPendingPairs: 100_000, useTypeIds: true };

  it('300 concurrent requests with and without chunks, 3 signals: each passage gets the per-signal max of its own chunks', async () => {
    const signals = 3;
    const exec = new ChunkingExecutor(signals);
    const batcher = new DynamicBatcher(exec, { ...options, signals });
    const rand = mulberry32(11);
    const word = () => `w${Math.floor(rand() * 1000)}`;
    const requests = Array.from({ length: 300 }, (_, r) => ({
      query: `q${r}`,
      passages: Array.from({ length: 1 + Math.floor(rand() * 6) }, () =>
        Array.from({ length: 1 + Math.floor(rand() * (r % 3 === 0 ? 3 : 24)) }, word).join(' '),
      ),
    }));
    const results = await Promise.all(requests.map((q) => batcher.submitWithChunks(q.query, q.passages)));
    let chunkedPassages = 0;
    results.forEach((res, r) => {
      const { query, passages } = requests[r];
      expect(res.logits.length).toBe(passages.length * signals);
      passages.forEach((p, i) => {
        expect(res.chunks[i]).toBe(chunkCount(p));
        if (res.chunks[i] > 1) chunkedPassages++;
        for (let s = 0; s < signals; s++) expect(res.logits[i * signals + s]).toBe(expectedMax(query, p, s));
      });
    });
    expect(chunkedPassages).toBeGreaterThan(300);
    // Chunks of different requests shared batches.
    expect(batcher.stats().meanBatchSize).toBeGreaterThan(2);
  });

  it('an aborted or expired chunked request rejects; a request batched with it is untouched', async () => {
    const exec = new ChunkingExecutor(1, { manual: true });
    const batcher = new DynamicBatcher(exec, { ...options, signals: 1, maxBatchTokens: 1000 });
    const long = 'a b c d e f g h i j k l m n o p q r s t u v w x';
    const controller = new AbortController();
    const caught = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (err: unknown) => err,
      );
    const aborted = caught(batcher.submitWithChunks('q1', [long, long.slice(2)], { signal: controller.signal }));
    const expired = caught(batcher.submitWithChunks('q2', [long], { deadline: Date.now() + 30 }));
    const kept = batcher.submitWithChunks('q3', [long, 'short']);
    await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    expect(await aborted).toBeInstanceOf(AbortedError);
    await new Promise((r) => setTimeout(r, 40));
    exec.release();
    expect(await expired).toBeInstanceOf(DeadlineExceededError);
    for (let i = 0; i < 20; i++) {
      exec.release();
      await new Promise((r) => setTimeout(r, 2));
    }
    const res = await kept;
    expect(Array.from(res.chunks)).toEqual([6, 1]);
    expect(res.logits[0]).toBe(expectedMax('q3', long, 0));
    expect(res.logits[1]).toBe(expectedMax('q3', 'short', 0));
  });

  it("a failing batch holding one chunk fails that chunk's request only", async () => {
    const bad = 'x y z w v u t s r';
    const exec = new ChunkingExecutor(1, { failKey: fakeKey('qa', bad) });
    const batcher = new DynamicBatcher(exec, { ...options, signals: 1, maxBatchTokens: 12 });
    const a = batcher.submitWithChunks('qa', ['fine passage', bad]);
    const b = batcher.submitWithChunks('qb', [bad, 'other words here and more of them']);
    await expect(a).rejects.toThrow(/simulated failure/);
    const res = await b;
    expect(res.logits[0]).toBe(expectedMax('qb', bad, 0));
  });

  it('a tokenizer answer whose chunk counts do not add up fails the request, typed', async () => {
    const exec = new ChunkingExecutor(1);
    const broken: PairBatchExecutor = {
      tokenize: async (q, ps) => ({ ...(await exec.tokenize(q, ps)), chunks: Int32Array.of(99) }),
      infer: (b) => exec.infer(b),
    };
    const batcher = new DynamicBatcher(broken, { ...options, signals: 1 });
    await expect(batcher.submitWithChunks('q', ['a b c d e f'])).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('createCrossEncoder with longPassages: chunk (generated tiny model)', () => {
  let root: string;
  let dir: string;
  let chunked: CrossEncoder;
  let truncating: CrossEncoder;
  let session: ort.InferenceSession;
  const maxLength = 64;
  const stride = 8;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rg-chunk-'));
    dir = (await writeCrossEncoderModelDir(join(root, 'tiny'), 'tiny', { seed: 42 })).dir;
    [chunked, truncating] = await Promise.all([
      createCrossEncoder({ modelDir: dir, workers: 2, maxLength, longPassages: 'chunk', chunkStride: stride }),
      createCrossEncoder({ modelDir: dir, workers: 1, maxLength }),
    ]);
    session = await ort.InferenceSession.create(join(dir, 'onnx', 'model.onnx'), { intraOpNumThreads: 1 });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([chunked?.close(), truncating?.close(), session?.release()]);
    await rm(root, { recursive: true, force: true });
  });

  /** The independent path: one pair per session.run. */
  async function runOne(pair: PairIds): Promise<number> {
    const n = pair.ids.length;
    const t = (xs: number[]) => new ort.Tensor('int64', BigInt64Array.from(xs.map(BigInt)), [1, n]);
    const feeds: Record<string, ort.Tensor> = { input_ids: t(pair.ids), attention_mask: t(new Array(n).fill(1)) };
    if (session.inputNames.includes('token_type_ids')) feeds.token_type_ids = t(pair.typeIds);
    const out = await session.run(feeds);
    return (out[session.outputNames[0]].data as Float32Array)[0];
  }

  const tokenizerPath = () => join(dir, 'tokenizer.json');

  it('a passage 10× the window is scored as its chunks with max aggregation, equal to scoring each chunk alone', async () => {
    const query = realPairs[0].query;
    const base = realPairs[1].passage;
    const tokens = (
      await Tokenizer.fromFile(tokenizerPath()).encode(base, null, { addSpecialTokens: false })
    ).getLength();
    const passage = base.repeat(Math.ceil((10 * maxLength) / tokens));
    const want = await referenceChunks(tokenizerPath(), maxLength, 'longest_first', stride, 16, query, passage);
    expect(want.length).toBeGreaterThanOrEqual(10);
    const scores = await chunked.score(query, [passage]);
    expect(scores.chunks?.[0]).toBe(want.length);
    const each: number[] = [];
    for (const pair of want) each.push(await runOne(pair));
    const max = Math.max(...each);
    expect(Math.abs(scores.logits[0] - max)).toBeLessThanOrEqual(1e-5);
    expect(Math.abs(scores.probabilities[0] - sigmoid(max))).toBeLessThanOrEqual(1e-6);
    // The chunks differ (the max is not just the first window), and chunk 0 is the truncated pair.
    expect(new Set(each.map((v) => v.toFixed(4))).size).toBeGreaterThan(1);
    const truncated = await truncating.score(query, [passage]);
    expect(Math.abs(truncated.logits[0] - each[0])).toBeLessThanOrEqual(1e-5);
    expect(truncated.chunks).toBeUndefined();
  }, 60_000);

  it('every real passage: chunk-mode score = max over its reference chunks scored one by one', async () => {
    const query = realPairs[4].query;
    const passages = realPairs.slice(0, 16).map((p) => p.passage);
    const scores = await chunked.score(query, passages);
    let multi = 0;
    for (let i = 0; i < passages.length; i++) {
      const want = await referenceChunks(tokenizerPath(), maxLength, 'longest_first', stride, 16, query, passages[i]);
      expect(scores.chunks?.[i]).toBe(want.length);
      if (want.length > 1) multi++;
      let max = Number.NEGATIVE_INFINITY;
      for (const pair of want) max = Math.max(max, await runOne(pair));
      expect(Math.abs(scores.logits[i] - max), `passage ${i}`).toBeLessThanOrEqual(1e-5);
    }
    expect(multi).toBeGreaterThan(8);
  }, 60_000);

  it('requests with and without chunks, concurrent and mixed in one call, give what each gives alone', async () => {
    const rand = mulberry32(5);
    const pool = judgedPairs(30);
    const requests = Array.from({ length: 24 }, (_, r) => ({
      query: pool[r].query,
      passages: Array.from({ length: 1 + Math.floor(rand() * 5) }, () => {
        const p = pool[Math.floor(rand() * pool.length)].passage;
        return rand() < 0.4 ? p.slice(0, 80) : p.repeat(1 + Math.floor(rand() * 3));
      }),
    }));
    const alone: CrossEncoderScores[] = [];
    for (const req of requests) alone.push(await chunked.score(req.query, req.passages));
    const together = await Promise.all(requests.map((req) => chunked.score(req.query, req.passages)));
    let short = 0;
    let long = 0;
    together.forEach((got, r) => {
      expect(Array.from(got.logits)).toEqual(Array.from(alone[r].logits));
      expect(Array.from(got.chunks ?? [])).toEqual(Array.from(alone[r].chunks ?? []));
      for (const c of got.chunks ?? []) {
        if (c === 1) short++;
        else long++;
      }
    });
    expect(short).toBeGreaterThan(5);
    expect(long).toBeGreaterThan(5);
  }, 60_000);

  it('deadlines and aborts are honoured for chunked requests; the encoder keeps scoring after them', async () => {
    const passage = realPairs[1].passage.repeat(20);
    const many = Array.from({ length: 64 }, () => passage);
    await expect(chunked.score('q', many, { deadline: Date.now() + 5 })).rejects.toBeInstanceOf(DeadlineExceededError);
    const controller = new AbortController();
    const pending = chunked.score('q', many, { signal: controller.signal });
    setTimeout(() => controller.abort(), 5);
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    const after = await chunked.score('q', [passage, 'short']);
    expect(after.chunks?.[0]).toBe(16);
    expect(after.chunks?.[1]).toBe(1);
    expect(Number.isFinite(after.logits[0])).toBe(true);
  }, 60_000);

  it('options are checked, and chunking enters the model id', async () => {
    expect(chunked.info.id).not.toBe(truncating.info.id);
    expect(chunked.info.chunking).toEqual({ stride, maxChunks: 16 });
    expect(truncating.info.chunking).toBeNull();
    for (const bad of [
      { longPassages: 'split' },
      { longPassages: 'chunk', chunkStride: -1 },
      { longPassages: 'chunk', chunkStride: 1.5 },
      { longPassages: 'chunk', maxChunksPerPassage: 0 },
      { longPassages: 'chunk', maxChunksPerPassage: 257 },
      { chunkStride: 8 },
      { longPassages: 'chunk', pairInput: 'passage' },
    ]) {
      await expect(
        createCrossEncoder({ modelDir: dir, workers: 1, ...(bad as object) }),
        JSON.stringify(bad),
      ).rejects.toBeInstanceOf(InvalidArgumentError);
    }
  });
});

describe('chunking a labelled multi-class head (RoBERTa NLI graph, CONTRADICTION / NEUTRAL / ENTAILMENT)', () => {
  const robertaJson = FAMILIES.roberta;
  const test = existsSync(robertaJson) ? it : it.skip;

  test('each label keeps its max logit over the windows; probabilities are the softmax of those logits', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rg-chunk-nli-'));
    let ce: CrossEncoder | undefined;
    let session: ort.InferenceSession | undefined;
    try {
      const info = await writeCrossEncoderModelDir(join(root, 'nli'), 'roberta-nli', {
        seed: 7,
        layers: 2,
        hidden: 64,
        tokenizerDir: join(SHARED_TOKENIZERS, 'roberta-large-mnli'),
      });
      const maxLength = 64;
      ce = await createCrossEncoder({
        modelDir: info.dir,
        workers: 1,
        maxLength,
        longPassages: 'chunk',
        chunkStride: 8,
      });
      session = await ort.InferenceSession.create(info.modelPath, { intraOpNumThreads: 1 });
      const query = realPairs[5].query;
      const passages = [realPairs[6].passage.repeat(3), realPairs[7].passage, 'a short premise'];
      const scores = await ce.score(query, passages);
      const signals = scores.signals;
      expect(signals?.names).toEqual(['CONTRADICTION', 'NEUTRAL', 'ENTAILMENT']);
      if (signals === undefined) return;
      const k = signals.names.length;
      let argmaxDiffers = 0;
      for (let i = 0; i < passages.length; i++) {
        const want = await referenceChunks(robertaJson, maxLength, 'longest_first', 8, 16, query, passages[i]);
        expect(scores.chunks?.[i]).toBe(want.length);
        const max = new Array<number>(k).fill(Number.NEGATIVE_INFINITY);
        const bestWindow = new Array<number>(k).fill(-1);
        for (const [w, pair] of want.entries()) {
          const n = pair.ids.length;
          const t = (xs: number[]) => new ort.Tensor('int64', BigInt64Array.from(xs.map(BigInt)), [1, n]);
          const feeds: Record<string, ort.Tensor> = { input_ids: t(pair.ids), attention_mask: t(new Array(n).fill(1)) };
          const out = (await session.run(feeds))[session.outputNames[0]].data as Float32Array;
          for (let s = 0; s < k; s++) {
            if (out[s] > max[s]) {
              max[s] = out[s];
              bestWindow[s] = w;
            }
          }
        }
        if (new Set(bestWindow).size > 1) argmaxDiffers++;
        const top = Math.max(...max);
        const exp = max.map((v) => Math.exp(v - top));
        const sum = exp.reduce((a, b) => a + b, 0);
        for (let s = 0; s < k; s++) {
          expect(Math.abs(signals.logits[i * k + s] - max[s])).toBeLessThanOrEqual(1e-5);
          expect(Math.abs(signals.probabilities[i * k + s] - exp[s] / sum)).toBeLessThanOrEqual(1e-6);
        }
      }
      // The rule is per label: at least one passage takes different labels' max from different windows.
      expect(argmaxDiffers).toBeGreaterThan(0);
    } finally {
      await ce?.close();
      await session?.release();
      await rm(root, { recursive: true, force: true });
    }
  }, 60_000);
});
