/**
 * createCrossEncoder end to end on generated tiny SPEED/SHAPE models (random weights, not relevance
 * models): real workers, real onnxruntime sessions, real tokenizer. Checks batch independence,
 * 1000 concurrent requests, abort/deadline isolation, model contract variants, close(), input
 * validation and the Scorer adapter.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError, DeadlineExceededError, DisposedError, InvalidArgumentError } from '../../src/errors.js';
import { createCrossEncoder, type CrossEncoder } from '../../src/tiers/cross-encoder/cross-encoder.js';
import { ModelContractError } from '../../src/tiers/cross-encoder/errors.js';
import { writeCrossEncoderModelDir, type CrossEncoderPresetName } from '../../src/tooling/model-gen/index.js';
import { sigmoid } from '../../src/tiers/cross-encoder/model-contract.js';
import { createCrossEncoderScorer } from '../../src/tiers/cross-encoder/scorer.js';
import { isDetailedPairScore } from '../../src/types.js';
import { TINY_PRESETS, loadCollection, realRequests } from './data.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

let root: string;
const dirs = new Map<CrossEncoderPresetName, string>();
let ce: CrossEncoder;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-ce-'));
  for (const preset of TINY_PRESETS) {
    const info = await writeCrossEncoderModelDir(join(root, preset), preset, { seed: 42 });
    dirs.set(preset, info.dir);
  }
  ce = await createCrossEncoder({
    modelDir: dirs.get('tiny')!,
    workers: 2,
    maxBatchTokens: 4096,
    maxPendingPairs: 50_000,
  });
});

afterAll(async () => {
  await ce?.close();
  await rm(root, { recursive: true, force: true });
});

/** Direct reference: tokenizers encode(q, p) + one onnxruntime session, one pair per run. */
async function referenceOutputs(dir: string, query: string, passages: readonly string[], maxLength = 512) {
  const tok = Tokenizer.fromFile(join(dir, 'tokenizer.json'));
  tok.setTruncation(maxLength);
  const session = await ort.InferenceSession.create(join(dir, 'onnx', 'model.onnx'), { intraOpNumThreads: 1 });
  const out: Array<Record<string, Float32Array>> = [];
  for (const p of passages) {
    const enc = await tok.encode(query, p);
    const n = enc.getLength();
    const t = (xs: number[]) => new ort.Tensor('int64', BigInt64Array.from(xs.map(BigInt)), [1, n]);
    const feeds: Record<string, ort.Tensor> = { input_ids: t(enc.getIds()), attention_mask: t(enc.getAttentionMask()) };
    if (session.inputNames.includes('token_type_ids')) feeds.token_type_ids = t(enc.getTypeIds());
    const res = await session.run(feeds);
    out.push(Object.fromEntries(Object.entries(res).map(([k, v]) => [k, v.data as Float32Array])));
  }
  await session.release();
  return out;
}

function cranfieldPassages(n: number): string[] {
  return [...loadCollection('cranfield').docs.values()].slice(0, n);
}

describe('createCrossEncoder (tiny speed/shape model)', () => {
  it('matches a direct tokenizers + onnxruntime run, pair by pair, in input order', async () => {
    const query = 'what similarity laws must be obeyed when constructing aeroelastic models';
    const passages = [...cranfieldPassages(12), 'short one', ''];
    const got = await ce.score(query, passages);
    const ref = await referenceOutputs(dirs.get('tiny')!, query, passages);
    passages.forEach((_, i) => {
      expect(Math.abs(got.logits[i] - ref[i].logits[0])).toBeLessThan(1e-4);
      expect(got.probabilities[i]).toBeCloseTo(sigmoid(got.logits[i]), 6);
    });
    expect(got.signals).toBeUndefined();
    // Logits differ across passages (a mix-up would be visible).
    expect(new Set(Array.from(got.logits).map((x) => x.toFixed(4))).size).toBeGreaterThan(passages.length / 2);
  });

  it('batch independence: a pair scores the same alone and inside any batch (<= 1e-4)', async () => {
    const query = 'pressure distribution on a cone at hypersonic speed';
    const passages = cranfieldPassages(40);
    const alone: number[] = [];
    for (const p of passages) alone.push((await ce.score(query, [p])).logits[0]);
    const together = await ce.score(query, passages);
    const reversed = await ce.score(query, [...passages].reverse());
    // Mixed with other requests of other lengths.
    const mixed = await Promise.all([
      ce.score(query, passages.slice(0, 20)),
      ce.score('another query entirely', cranfieldPassages(60).slice(20)),
      ce.score(query, passages.slice(20)),
    ]);
    passages.forEach((_, i) => {
      expect(Math.abs(together.logits[i] - alone[i])).toBeLessThan(1e-4);
      expect(Math.abs(reversed.logits[passages.length - 1 - i] - alone[i])).toBeLessThan(1e-4);
      const m = i < 20 ? mixed[0].logits[i] : mixed[2].logits[i - 20];
      expect(Math.abs(m - alone[i])).toBeLessThan(1e-4);
    });
  });

  it('1000 concurrent random requests each get exactly their own scores in their own order', async () => {
    // Real passages cut to their first 300 characters keep this test fast (6500 pairs).
    const base = realRequests(12, 25).map((r) => ({
      query: r.query,
      passages: r.passages.map((p) => p.slice(0, 300)),
    }));
    // Reference: every (query, passage) scored alone in one request per query.
    const refs = await Promise.all(base.map((r) => ce.score(r.query, r.passages)));
    const rand = mulberry32(12345);
    const requests = Array.from({ length: 1000 }, () => {
      const b = Math.floor(rand() * base.length);
      const idx = Array.from({ length: 1 + Math.floor(rand() * 12) }, () =>
        Math.floor(rand() * base[b].passages.length),
      );
      return { b, idx };
    });
    const results = await Promise.all(
      requests.map((r) =>
        ce.score(
          base[r.b].query,
          r.idx.map((i) => base[r.b].passages[i]),
        ),
      ),
    );
    requests.forEach((r, k) => {
      expect(results[k].logits.length).toBe(r.idx.length);
      r.idx.forEach((i, j) => {
        expect(Math.abs(results[k].logits[j] - refs[r.b].logits[i])).toBeLessThan(1e-4);
      });
    });
    const s = ce.stats();
    expect(s.meanBatchSize).toBeGreaterThan(2);
    expect(s.pendingRequests).toBe(0);
  });

  it('aborted and expired requests free their place without disturbing others', async () => {
    const reqs = realRequests(60, 10);
    const expected = await Promise.all(reqs.slice(0, 20).map((r) => ce.score(r.query, r.passages)));
    const before = ce.stats().pairsDropped;
    const controllers = reqs.map(() => new AbortController());
    const promises = reqs.map((r, i) => {
      if (i % 3 === 1) return ce.score(r.query, r.passages, { signal: controllers[i].signal });
      if (i % 3 === 2) return ce.score(r.query, r.passages, { deadline: Date.now() + 1 });
      return ce.score(r.query, r.passages);
    });
    for (let i = 1; i < reqs.length; i += 3) controllers[i].abort();
    const settled = await Promise.allSettled(promises);
    settled.forEach((s, i) => {
      if (i % 3 === 1) {
        expect(s.status).toBe('rejected');
        if (s.status === 'rejected') expect(s.reason).toBeInstanceOf(AbortedError);
      } else if (i % 3 === 2) {
        // A 1 ms deadline: rejected with DeadlineExceededError unless it managed to finish in time.
        if (s.status === 'rejected') expect(s.reason).toBeInstanceOf(DeadlineExceededError);
      } else {
        expect(s.status).toBe('fulfilled');
        if (s.status === 'fulfilled' && i < 20) {
          expected[i].logits.forEach((v, j) => {
            expect(Math.abs(s.value.logits[j] - v)).toBeLessThan(1e-4);
          });
        }
      }
    });
    expect(ce.stats().pairsDropped).toBeGreaterThan(before);
    expect(ce.stats().pendingRequests).toBe(0);
    // The tier still works normally afterwards.
    const again = await ce.score(reqs[0].query, reqs[0].passages);
    expected[0].logits.forEach((v, j) => {
      expect(Math.abs(again.logits[j] - v)).toBeLessThan(1e-4);
    });
  });

  it('validates inputs with typed errors', async () => {
    expect((await ce.score('q', [])).logits.length).toBe(0);
    await expect(ce.score(42 as unknown as string, ['p'])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(ce.score('q', 'p' as unknown as string[])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(ce.score('q', ['ok', null as unknown as string])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(ce.score('q', new Array(2000).fill('p'))).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(ce.score('q', ['p'], { signal: {} as AbortSignal })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('the Scorer adapter reads title + text and reports relevance with the raw logit', async () => {
    const scorer = createCrossEncoderScorer(ce);
    expect(scorer.id).toMatch(/^cross-encoder:[0-9a-f]{16}:len512:longest_first$/);
    const passages = [
      { id: 'a', title: 'Wing flutter', text: 'flutter of swept wings at transonic speed' },
      { id: 'b', text: '  supersonic inlet design  ' },
    ];
    const results = await scorer.score('flutter', passages);
    const direct = await ce.score('flutter', [
      'Wing flutter flutter of swept wings at transonic speed',
      'supersonic inlet design',
    ]);
    results.forEach((r, i) => {
      expect(r !== null && isDetailedPairScore(r)).toBe(true);
      if (r === null || !isDetailedPairScore(r)) return;
      expect(r.tier).toBe('cross-encoder');
      expect(r.raw?.relevant).toBe(direct.logits[i]);
      expect(r.probabilities.relevant).toBe(direct.probabilities[i]);
    });
  });

  it('rejects an explicit maxLength above the model limit and uses a shorter one when asked', async () => {
    await expect(
      createCrossEncoder({ modelDir: dirs.get('tiny')!, maxLength: 100_000, workers: 1 }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    const short = await createCrossEncoder({ modelDir: dirs.get('tiny')!, maxLength: 32, workers: 1 });
    try {
      expect(short.info.maxLength).toBe(32);
      expect(short.info.id).not.toBe(ce.info.id);
      const q = 'pressure on a cone';
      const p = cranfieldPassages(3);
      const got = await short.score(q, p);
      const ref = await referenceOutputs(dirs.get('tiny')!, q, p, 32);
      p.forEach((_, i) => {
        expect(Math.abs(got.logits[i] - ref[i].logits[0])).toBeLessThan(1e-4);
      });
    } finally {
      await short.close();
    }
  });
});

describe('model contract variants', () => {
  it('a model without token_type_ids loads and scores', async () => {
    const dir = dirs.get('tiny-no-token-type')!;
    const m = await createCrossEncoder({ modelDir: dir, workers: 1 });
    try {
      expect(m.info.contract.tokenTypeIds).toBeNull();
      const p = cranfieldPassages(4);
      const got = await m.score('q about wings', p);
      const ref = await referenceOutputs(dir, 'q about wings', p);
      p.forEach((_, i) => {
        expect(Math.abs(got.logits[i] - ref[i].logits[0])).toBeLessThan(1e-4);
      });
    } finally {
      await m.close();
    }
  });

  it('logits [b,2] give logit = class1 - class0 and its sigmoid in float64', async () => {
    const dir = dirs.get('tiny-two-logits')!;
    const m = await createCrossEncoder({ modelDir: dir, workers: 1 });
    try {
      expect(m.info.contract.head.kind).toBe('binary');
      const p = cranfieldPassages(4);
      const got = await m.score('boundary layer', p);
      const ref = await referenceOutputs(dir, 'boundary layer', p);
      p.forEach((_, i) => {
        const diff = ref[i].logits[1] - ref[i].logits[0];
        expect(Math.abs(got.logits[i] - diff)).toBeLessThan(1e-4);
        expect(Math.abs(got.probabilities[i] - sigmoid(diff))).toBeLessThan(1e-6);
      });
    } finally {
      await m.close();
    }
  });

  it('several named outputs give a vector of named signals per pair', async () => {
    const dir = dirs.get('tiny-multi-signal')!;
    const m = await createCrossEncoder({ modelDir: dir, workers: 1 });
    try {
      const names = m.info.contract.signalNames;
      expect(names.length).toBeGreaterThan(1);
      const p = cranfieldPassages(3);
      const got = await m.score('heat transfer', p);
      const ref = await referenceOutputs(dir, 'heat transfer', p);
      expect(got.signals?.names).toEqual(names);
      p.forEach((_, i) => {
        names.forEach((name, s) => {
          expect(Math.abs(got.signals!.logits[i * names.length + s] - ref[i][name][0])).toBeLessThan(1e-4);
          expect(got.signals!.probabilities[i * names.length + s]).toBeCloseTo(sigmoid(ref[i][name][0]), 5);
        });
      });
      const scored = await createCrossEncoderScorer(m).score('heat transfer', [{ id: 'x', text: p[0] }]);
      const r = scored[0];
      expect(r !== null && isDetailedPairScore(r) && Object.keys(r.probabilities)).toEqual([...names]);
    } finally {
      await m.close();
    }
  });

  it('logits [b,3] with config.json labels give one softmax signal per label', async () => {
    const dir = dirs.get('tiny-three-logits')!;
    const m = await createCrossEncoder({ modelDir: dir, workers: 1 });
    try {
      expect(m.info.contract.signalNames).toEqual(['LABEL_0', 'LABEL_1', 'LABEL_2']);
      const p = cranfieldPassages(3);
      const got = await m.score('heat transfer', p);
      const ref = await referenceOutputs(dir, 'heat transfer', p);
      p.forEach((_, i) => {
        const row = Array.from(ref[i].logits);
        const e = row.map((x) => Math.exp(x - Math.max(...row)));
        const sum = e.reduce((a, b) => a + b, 0);
        row.forEach((x, c) => {
          expect(Math.abs(got.signals!.logits[i * 3 + c] - x)).toBeLessThan(1e-4);
          expect(Math.abs(got.signals!.probabilities[i * 3 + c] - e[c] / sum)).toBeLessThan(1e-5);
        });
      });
    } finally {
      await m.close();
    }
  });

  it('an int32 input_ids is fed as int32', async () => {
    const m = await createCrossEncoder({ modelDir: dirs.get('tiny-int32-input-ids')!, workers: 1 });
    try {
      expect(m.info.contract.inputTypes.input_ids).toBe('int32');
      expect(m.info.contract.inputTypes.attention_mask).toBe('int64');
      expect((await m.score('q', ['a passage'])).logits.length).toBe(1);
    } finally {
      await m.close();
    }
  });

  it.each(['tiny-no-input-ids'] as const)(
    'a non-conforming model (%s) fails at load with ModelContractError saying what was expected',
    async (preset) => {
      const err = await createCrossEncoder({ modelDir: dirs.get(preset)!, workers: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ModelContractError);
      expect((err as Error).message).toMatch(/expected .*found/);
    },
  );

  it('a tokenizer larger than the model vocabulary fails at load', async () => {
    const dir = join(root, 'vocab-mismatch');
    const info = await writeCrossEncoderModelDir(dir, 'tiny', { seed: 42 });
    const configPath = join(info.dir, 'config.json');
    const config = JSON.parse(await readFile(configPath, 'utf8')) as Record<string, unknown>;
    await writeFile(configPath, JSON.stringify({ ...config, vocab_size: 1000 }));
    const err = await createCrossEncoder({ modelDir: info.dir, workers: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelContractError);
    expect((err as Error).message).toMatch(/vocab_size is 1000/);
  });

  it('a missing folder or file fails with InvalidArgumentError', async () => {
    await expect(createCrossEncoder({ modelDir: join(root, 'nope') })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(createCrossEncoder({})).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('close()', () => {
  it('rejects pending work with DisposedError, never hangs, and is idempotent', async () => {
    const m = await createCrossEncoder({ modelDir: dirs.get('tiny')!, workers: 1, maxLength: 128 });
    const reqs = realRequests(40, 20);
    const pending = reqs.map((r) => m.score(r.query, r.passages));
    const outcome = Promise.allSettled(pending);
    await new Promise((r) => setTimeout(r, 20));
    await Promise.all([m.close(), m.close()]);
    const settled = await outcome;
    const rejected = settled.filter((s) => s.status === 'rejected');
    expect(rejected.length).toBeGreaterThan(0);
    for (const s of rejected) expect((s as PromiseRejectedResult).reason).toBeInstanceOf(DisposedError);
    await expect(m.score('q', ['p'])).rejects.toBeInstanceOf(DisposedError);
  });
});
