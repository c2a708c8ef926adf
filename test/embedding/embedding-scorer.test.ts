/**
 * createEmbeddingScorer end to end on a tiny random-weight bi-encoder folder (tiny-bi-encoder.ts):
 * real workers, real onnxruntime sessions, real tokenizer. Shapes, parity with a direct
 * tokenizers + onnxruntime run, batching across concurrent calls, the vector cache, precomputed
 * embeddings and their validation errors, close(), bad model folders, and the router tier.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddingScorer, type EmbeddingScorer } from '../../src/index.js';
import { AbortedError, DisposedError, InvalidArgumentError, ModelFormatError } from '../../src/errors.js';
import { ModelContractError, ModelVariantNotFoundError } from '../../src/tiers/cross-encoder/errors.js';
import {
  EmbeddingDimensionError,
  EmbeddingModelError,
  EmbeddingModelMismatchError,
  EmbeddingValueError,
} from '../../src/tiers/embedding/errors.js';
import { createRouter, embeddingTier, fastPathTier } from '../../src/router/index.js';
import type { DetailedPairScore, Passage, Scorer } from '../../src/types.js';
import { writeTinyBiEncoderDir } from './tiny-bi-encoder.js';

const DIMS = 16;
const MAX_LENGTH = 128;
let root: string;
let modelDir: string;
let scorer: EmbeddingScorer;

const QUERY = 'how do wings behave at supersonic speed';
const PASSAGES: Passage[] = [
  { id: 'a', text: 'supersonic wings and the behaviour of shock waves at high speed' },
  { id: 'b', text: 'a recipe for bread with flour, water and salt', title: 'Baking' },
  { id: 'c', text: 'wings at speed' },
  { id: 'd', text: '' },
  { id: 'e', text: 'lorem '.repeat(600) },
];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'rg-emb-'));
  modelDir = writeTinyBiEncoderDir(join(root, 'tiny'), { dims: DIMS, maxLength: MAX_LENGTH });
  scorer = await createEmbeddingScorer({ modelDir, workers: 2, maxQueueDelayMs: 5 });
});

afterAll(async () => {
  await scorer?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Direct reference: tokenizers encode(text) truncated to maxLength + one onnxruntime session. */
async function referenceEmbeddings(dir: string, texts: readonly string[]): Promise<Float32Array[]> {
  const tok = Tokenizer.fromFile(join(dir, 'tokenizer.json'));
  tok.setTruncation(MAX_LENGTH);
  const session = await ort.InferenceSession.create(join(dir, 'onnx', 'model.onnx'), { intraOpNumThreads: 1 });
  const out: Float32Array[] = [];
  for (const text of texts) {
    const enc = await tok.encode(text);
    const n = enc.getLength();
    const t = (xs: number[]) => new ort.Tensor('int64', BigInt64Array.from(xs.map(BigInt)), [1, n]);
    const res = await session.run({
      input_ids: t(enc.getIds()),
      attention_mask: t(enc.getAttentionMask()),
      token_type_ids: t(enc.getTypeIds()),
    });
    const v = Float32Array.from(res.embeddings.data as Float32Array);
    const norm = Math.hypot(...v);
    out.push(v.map((x) => x / norm));
  }
  await session.release();
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function passageText(p: Passage): string {
  return (p.title ? `${p.title} ${p.text}` : p.text).trim();
}

describe('createEmbeddingScorer (tiny bag-of-words bi-encoder)', () => {
  it('embed returns unit float32 vectors that match a direct tokenizers + onnxruntime run', async () => {
    const texts = [QUERY, ...PASSAGES.map(passageText)];
    const got = await scorer.embed(texts);
    expect(got).toHaveLength(texts.length);
    const ref = await referenceEmbeddings(modelDir, texts);
    got.forEach((v, i) => {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(DIMS);
      expect(Math.abs(dot(v, v) - 1)).toBeLessThan(1e-5);
      for (let k = 0; k < DIMS; k++) expect(Math.abs(v[k] - ref[i][k])).toBeLessThan(1e-5);
    });
    expect(scorer.dimensions).toBe(DIMS);
    expect(scorer.info.maxLength).toBe(MAX_LENGTH);
    expect(await scorer.embed([])).toEqual([]);
  });

  it('score: cosine under similarity, Platt over it under relevant, tier embedding, input order', async () => {
    const results = await scorer.score(QUERY, PASSAGES);
    expect(results).toHaveLength(PASSAGES.length);
    const [q, ...ps] = await scorer.embed([QUERY, ...PASSAGES.map(passageText)]);
    const { a, b } = scorer.info.calibration;
    expect(scorer.info.calibrationSource).toBe('default');
    expect([a, b]).toEqual([10, -5]);
    results.forEach((r, i) => {
      const cos = dot(q, ps[i]);
      expect(r.tier).toBe('embedding');
      expect(r.raw?.similarity).toBeCloseTo(cos, 5);
      expect(r.probabilities.similarity).toBeCloseTo(Math.max(0, cos), 5);
      expect(r.probabilities.relevant).toBeCloseTo(1 / (1 + Math.exp(-(a * cos + b))), 6);
      expect(r.raw?.relevant).toBeCloseTo(a * cos + b, 4);
    });
    // Texts sharing words with the query come out closer than the bread recipe.
    expect(results[0].raw!.similarity).toBeGreaterThan(results[1].raw!.similarity);
    expect(scorer.signals).toEqual(['relevant', 'similarity']);
    expect(scorer.id).toMatch(/^embedding:[0-9a-f]{16}:len128:platt10,-5$/);
    expect(scorer.modelId).toMatch(/^embedding:[0-9a-f]{16}:len128$/);
    expect(await scorer.score(QUERY, [])).toEqual([]);
  });

  it('batches texts of concurrent calls together, each call getting exactly its own vectors', async () => {
    const fresh = await createEmbeddingScorer({ modelDir, workers: 2, maxQueueDelayMs: 20, cacheBytes: 0 });
    try {
      const calls = Array.from({ length: 40 }, (_, r) => ({
        query: `query number ${r} about wings`,
        passages: Array.from({ length: 1 + (r % 7) }, (_, j) => ({
          id: `${r}-${j}`,
          text: `passage ${r} ${j} ${'w '.repeat(j * 3)}`,
        })),
      }));
      const results = await Promise.all(calls.map((c) => fresh.score(c.query, c.passages)));
      const s = fresh.stats();
      const texts = calls.reduce((n, c) => n + 1 + c.passages.length, 0);
      expect(s.pairsRun).toBe(texts);
      // Fewer batches than calls: texts of different calls shared batches.
      expect(s.batchesRun).toBeLessThan(calls.length);
      expect(s.meanBatchSize).toBeGreaterThan(2);
      for (let r = 0; r < calls.length; r += 9) {
        const [q, ...ps] = await referenceEmbeddings(modelDir, [
          calls[r].query,
          ...calls[r].passages.map((p) => p.text),
        ]);
        results[r].forEach((res, j) => {
          expect(res.raw!.similarity).toBeCloseTo(dot(q, ps[j]), 5);
        });
      }
      expect(s.cache.entries).toBe(0);
    } finally {
      await fresh.close();
    }
  });

  it('caches vectors by content: a passage seen before is not embedded again', async () => {
    const passages = [
      { id: 'x', text: 'cache me once' },
      { id: 'y', text: 'and me too' },
    ];
    const first = await scorer.score('a cached query', passages);
    const before = scorer.stats();
    // Other ids, same texts: the cache is keyed by content.
    const second = await scorer.score(
      'a cached query',
      passages.map((p) => ({ ...p, id: `${p.id}2` })),
    );
    const after = scorer.stats();
    expect(after.pairsRun).toBe(before.pairsRun);
    expect(after.cache.hits - before.cache.hits).toBe(3);
    expect(second).toEqual(first);
    // A new query with known passages embeds only the query.
    await scorer.score('another query entirely', passages);
    expect(scorer.stats().pairsRun).toBe(after.pairsRun + 1);
    // Duplicates within a call are embedded once.
    const n = scorer.stats().pairsRun;
    await scorer.score('dup query', [
      { id: '1', text: 'same text twice' },
      { id: '2', text: 'same text twice' },
    ]);
    expect(scorer.stats().pairsRun).toBe(n + 2);
  });

  it('uses precomputed passage and query embeddings without running the model', async () => {
    const [q, ...ps] = await scorer.embed(['precomputed query', ...PASSAGES.map(passageText)]);
    const fresh = await createEmbeddingScorer({ modelDir, workers: 1 });
    try {
      expect(fresh.modelId).toBe(scorer.modelId);
      const withVectors = PASSAGES.map((p, i) => ({ ...p, embedding: i % 2 === 0 ? ps[i] : Array.from(ps[i]) }));
      const results = await fresh.score('precomputed query', withVectors, {
        queryEmbedding: Array.from(q, (v) => v * 3), // not normalised: it is normalised
        embeddingModel: fresh.modelId,
      });
      const s = fresh.stats();
      expect(s.pairsRun).toBe(0);
      expect(s.precomputedVectors).toBe(PASSAGES.length + 1);
      const reference = await scorer.score('precomputed query', PASSAGES);
      results.forEach((r, i) => {
        expect(r.raw!.similarity).toBeCloseTo(reference[i].raw!.similarity, 6);
      });
      // Per-passage model ids travel without call options (through a router or a gate).
      const mixed = await fresh.score('precomputed query', [
        { ...PASSAGES[0], embedding: ps[0], embeddingModel: fresh.modelId },
        PASSAGES[2],
      ]);
      expect(mixed[0].raw!.similarity).toBeCloseTo(reference[0].raw!.similarity, 6);
      expect(mixed[1].raw!.similarity).toBeCloseTo(reference[2].raw!.similarity, 6);
      expect(fresh.stats().pairsRun).toBe(2); // the query and passage c
    } finally {
      await fresh.close();
    }
  });

  it('refuses bad precomputed embeddings with typed errors before anything is embedded', async () => {
    const model = scorer.modelId;
    const good = new Float32Array(DIMS).fill(0.25);
    const before = scorer.stats().pairsRun;
    const fresh = (tag: string): Passage => ({ id: tag, text: `never embedded ${tag}` });
    const cases: Array<[Passage[], object, new (...args: never[]) => Error, string]> = [
      [
        [fresh('1'), { id: 'v', text: 't', embedding: new Float32Array(DIMS + 1) }],
        { embeddingModel: model },
        EmbeddingDimensionError,
        'RG_ERR_EMBEDDING_DIMENSION',
      ],
      [
        [fresh('2'), { id: 'v', text: 't', embedding: [...Array(DIMS - 1).fill(0), Number.NaN] }],
        { embeddingModel: model },
        EmbeddingValueError,
        'RG_ERR_EMBEDDING_VALUE',
      ],
      [
        [fresh('3'), { id: 'v', text: 't', embedding: Array(DIMS).fill(Number.POSITIVE_INFINITY) }],
        { embeddingModel: model },
        EmbeddingValueError,
        'RG_ERR_EMBEDDING_VALUE',
      ],
      [
        [fresh('4'), { id: 'v', text: 't', embedding: new Float32Array(DIMS) }],
        { embeddingModel: model },
        EmbeddingValueError,
        'RG_ERR_EMBEDDING_VALUE',
      ],
      [
        [fresh('5'), { id: 'v', text: 't', embedding: Array(DIMS).fill('1') as unknown as number[] }],
        { embeddingModel: model },
        EmbeddingValueError,
        'RG_ERR_EMBEDDING_VALUE',
      ],
      [
        [fresh('6'), { id: 'v', text: 't', embedding: 'nope' as unknown as number[] }],
        { embeddingModel: model },
        EmbeddingValueError,
        'RG_ERR_EMBEDDING_VALUE',
      ],
      [
        [fresh('7'), { id: 'v', text: 't', embedding: good }],
        { embeddingModel: 'another-model' },
        EmbeddingModelMismatchError,
        'RG_ERR_EMBEDDING_MODEL_MISMATCH',
      ],
      [
        [fresh('8'), { id: 'v', text: 't', embedding: good }],
        {},
        EmbeddingModelMismatchError,
        'RG_ERR_EMBEDDING_MODEL_MISMATCH',
      ],
      [
        [fresh('9'), { id: 'v', text: 't', embedding: good, embeddingModel: 'other' }],
        { embeddingModel: model },
        EmbeddingModelMismatchError,
        'RG_ERR_EMBEDDING_MODEL_MISMATCH',
      ],
      [
        [fresh('10')],
        { queryEmbedding: new Float32Array(3), embeddingModel: model },
        EmbeddingDimensionError,
        'RG_ERR_EMBEDDING_DIMENSION',
      ],
      [[fresh('11')], { queryEmbedding: good }, EmbeddingModelMismatchError, 'RG_ERR_EMBEDDING_MODEL_MISMATCH'],
    ];
    for (const [passages, options, type, code] of cases) {
      const error = await scorer.score('a query never embedded', passages, options).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(type);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as { code: string }).code).toBe(code);
    }
    expect(scorer.stats().pairsRun).toBe(before);
    const mismatch = await scorer
      .score('q', [{ id: 'v', text: 't', embedding: good }], { embeddingModel: 'm2' })
      .catch((e: unknown) => e as EmbeddingModelMismatchError);
    expect(mismatch).toMatchObject({ expected: model, actual: 'm2' });
  });

  it('refuses malformed calls with InvalidArgumentError', async () => {
    await expect(scorer.score(42 as unknown as string, PASSAGES)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(scorer.score(QUERY, [{ id: 'x' } as unknown as Passage])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(scorer.embed([1 as unknown as string])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(scorer.embed(['x'], { as: 'other' as 'query' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(scorer.score(QUERY, PASSAGES, { deadline: Number.NaN })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(scorer.score(QUERY, PASSAGES, { embeddingModel: 3 as unknown as string })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('honours an abort signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      scorer.score('aborted query', [{ id: 'z', text: 'aborted passage' }], { signal: controller.signal }),
    ).rejects.toBeInstanceOf(AbortedError);
  });

  it('close() then use → DisposedError; close is idempotent; pending work is rejected', async () => {
    const s = await createEmbeddingScorer({ modelDir, workers: 1 });
    await s.embed(['warm']);
    await Promise.all([s.close(), s.close()]);
    await expect(s.score(QUERY, PASSAGES)).rejects.toBeInstanceOf(DisposedError);
    await expect(s.embed(['x'])).rejects.toBeInstanceOf(DisposedError);
    await expect(s.score(QUERY, PASSAGES)).rejects.toMatchObject({ code: 'RG_ERR_DISPOSED' });
  });

  it('reads the calibration file of the folder, and the calibration option before it', async () => {
    const dir = writeTinyBiEncoderDir(join(root, 'calibrated'), { dims: DIMS, maxLength: MAX_LENGTH });
    writeFileSync(
      join(dir, 'calibration.json'),
      JSON.stringify({ format: 1, kind: 'embedding-calibration', calibration: { type: 'platt', a: 7, b: -2 } }),
    );
    const fromFile = await createEmbeddingScorer({ modelDir: dir, workers: 1 });
    try {
      expect(fromFile.info.calibrationSource).toBe('file');
      expect(fromFile.info.calibration).toMatchObject({ a: 7, b: -2 });
      expect(fromFile.id.endsWith(':platt7,-2')).toBe(true);
      const [r] = await fromFile.score(QUERY, [PASSAGES[0]]);
      expect(r.probabilities.relevant).toBeCloseTo(1 / (1 + Math.exp(-(7 * r.raw!.similarity - 2))), 6);
    } finally {
      await fromFile.close();
    }
    const fromOption = await createEmbeddingScorer({ modelDir: dir, workers: 1, calibration: { a: 3, b: 1 } });
    expect(fromOption.info.calibrationSource).toBe('option');
    expect(fromOption.id.endsWith(':platt3,1')).toBe(true);
    await fromOption.close();
    writeFileSync(
      join(dir, 'calibration.json'),
      JSON.stringify({ format: 1, kind: 'embedding-calibration', calibration: { a: -1, b: 0 } }),
    );
    await expect(createEmbeddingScorer({ modelDir: dir, workers: 1 })).rejects.toMatchObject({
      code: 'RG_ERR_EMBEDDING_MODEL',
    });
  });
});

describe('createEmbeddingScorer: model folders it refuses', () => {
  it('a folder without relevance-gate-model.json, of another kind, or with bad fields → EmbeddingModelError', async () => {
    const noManifest = writeTinyBiEncoderDir(join(root, 'no-manifest'), { manifest: null });
    const crossEncoder = writeTinyBiEncoderDir(join(root, 'ce-kind'), { manifest: { kind: 'cross-encoder' } });
    const badDims = writeTinyBiEncoderDir(join(root, 'bad-dims'), { manifest: { dimensions: 0 } });
    const future = writeTinyBiEncoderDir(join(root, 'future'), { manifest: { format: 2 } });
    writeFileSync(join(root, 'not-json.txt'), 'x');
    for (const dir of [
      noManifest,
      crossEncoder,
      badDims,
      future,
      join(root, 'does-not-exist'),
      join(root, 'not-json.txt'),
    ]) {
      const error = await createEmbeddingScorer({ modelDir: dir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EmbeddingModelError);
      expect((error as EmbeddingModelError).code).toBe('RG_ERR_EMBEDDING_MODEL');
    }
    const broken = writeTinyBiEncoderDir(join(root, 'broken-manifest'));
    writeFileSync(join(broken, 'relevance-gate-model.json'), '{ not json');
    await expect(createEmbeddingScorer({ modelDir: broken })).rejects.toBeInstanceOf(EmbeddingModelError);
    await expect(createEmbeddingScorer(undefined as unknown as { modelDir: string })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(createEmbeddingScorer({ modelDir: broken, wrokers: 2 } as never)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('a corrupt ONNX file → ModelFormatError; a graph without the output or of other dimensions → ModelContractError', async () => {
    const corrupt = writeTinyBiEncoderDir(join(root, 'corrupt'));
    writeFileSync(join(corrupt, 'onnx', 'model.onnx'), 'not an onnx model');
    await expect(createEmbeddingScorer({ modelDir: corrupt, workers: 1 })).rejects.toBeInstanceOf(ModelFormatError);
    const otherOutput = writeTinyBiEncoderDir(join(root, 'other-output'), { outputName: 'sentence_embedding' });
    await expect(createEmbeddingScorer({ modelDir: otherOutput, workers: 1 })).rejects.toBeInstanceOf(
      ModelContractError,
    );
    const otherDims = writeTinyBiEncoderDir(join(root, 'other-dims'), { dims: 8, declaredDims: 12 });
    const error = await createEmbeddingScorer({ modelDir: otherDims, workers: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelContractError);
    expect((error as Error).message).toMatch(/8 dimensions but the model folder declares 12/);
  });

  it('variant int8 loads onnx/model_int8.onnx; a variant the folder lacks → ModelVariantNotFoundError', async () => {
    const int8 = await createEmbeddingScorer({ modelDir, variant: 'int8', workers: 1 });
    try {
      expect(int8.info.modelPath.endsWith(join('onnx', 'model_int8.onnx'))).toBe(true);
      expect((await int8.embed(['x']))[0].length).toBe(DIMS);
    } finally {
      await int8.close();
    }
    await expect(createEmbeddingScorer({ modelDir, variant: 'fp16' })).rejects.toBeInstanceOf(
      ModelVariantNotFoundError,
    );
  });
});

describe('embeddingTier in a router', () => {
  /** An inline stand-in for the fast path: relevance 0.5 for every pair. */
  const inline: Scorer = {
    id: 'inline-test',
    signals: ['relevant'],
    async score(_q, passages) {
      return passages.map(() => ({ probabilities: { relevant: 0.5 }, tier: 'fast-path' }));
    },
  };

  it('is a cascade target below a cross-encoder, labelled embedding, with the batcher as its estimate', async () => {
    const tier = embeddingTier(scorer);
    expect(tier).toMatchObject({ name: 'embedding', quality: 1.5, cache: true });
    expect(tier.estimateMs?.(10)).toBeGreaterThanOrEqual(0);
    const router = createRouter({
      tiers: [fastPathTier(inline), tier],
      routing: { mode: 'cascade', cascadeTier: 'embedding' },
      defaultBudgetMs: 10_000,
    });
    try {
      const results = await router.score(QUERY, PASSAGES.slice(0, 3));
      for (const r of results) expect((r as DetailedPairScore).tier).toBe('embedding');
      const direct = await scorer.score(QUERY, PASSAGES.slice(0, 3));
      results.forEach((r, i) => {
        expect((r as DetailedPairScore).probabilities.relevant).toBeCloseTo(direct[i].probabilities.relevant, 9);
      });
      // Precomputed vectors reach the tier through the router on the passages themselves.
      const [v] = await scorer.embed([passageText(PASSAGES[1])]);
      const before = scorer.stats().pairsRun;
      const viaRouter = await router.score('yet another query', [
        { ...PASSAGES[1], id: 'pre', embedding: v, embeddingModel: scorer.modelId },
      ]);
      expect((viaRouter[0] as DetailedPairScore).tier).toBe('embedding');
      expect(scorer.stats().pairsRun).toBe(before + 1); // the query only
    } finally {
      router.close();
    }
  });
});
