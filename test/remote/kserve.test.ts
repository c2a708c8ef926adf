/**
 * The kserve protocol's contract against a protocol-exact stand-in for Triton / KServe
 * (kserve-standin.ts) running real ONNX cross-encoders (generated speed/shape models, random
 * weights): scores equal to the local cross-encoder tier on the same model and passages, in input
 * order ([n,1] and [n,2] heads, with and without token_type_ids); Triton's max_batch_size caps the
 * requests; calls split to the cap and merged; a 413 and Triton's batch-size refusal lower the cap;
 * the deadline and the AbortSignal honoured, the in-flight requests cancelled; every failure a
 * typed error; readiness; the scorer as a router tier; a `serve` config model.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortedError,
  createRemoteScorer,
  createRouter,
  DeadlineExceededError,
  fastPathTier,
  loadFastPathScorer,
  type Passage,
  type RemoteScorer,
  type RemoteScorerOptions,
  RemoteBatchRefusedError,
  RemoteConfigError,
  RemoteEndpointError,
  RemoteResponseError,
  type Scorer,
} from '../../src/index.js';
import type { RelevanceGateServer, ServerConfigInput } from '../../src/server/index.js';
import {
  createCrossEncoder,
  createCrossEncoderScorer,
  type CrossEncoder,
} from '../../src/tiers/cross-encoder/index.js';
import { writeCrossEncoderModelDir } from '../../src/tooling/model-gen/index.js';
import { freePort } from '../cache/redis-server.js';
import { FAST_PATH_DIR, postJson, scifactRequests, start } from '../server/helpers.js';
import { type Standin, startStandin } from './kserve-standin.js';

const PRESETS = ['tiny', 'tiny-two-logits', 'tiny-no-token-type'] as const;
type Preset = (typeof PRESETS)[number];

let root: string;
const dirs = {} as Record<Preset, string>;
const local = {} as Record<Preset, { encoder: CrossEncoder; scorer: Scorer }>;
/** Triton-like: every model's configuration served; `tiny` batches at most 8 rows. */
let triton: Standin;
/** Behind a proxy with a request-body limit (413). */
let proxied: Standin;
/** KServe-like, no configuration endpoint: `small` refuses more than 4 rows Triton's way (400). */
let noConfig: Standin;
/** A body limit no single pair fits under. */
let tight: Standin;

const [sample] = scifactRequests(1, 20);
const passages: Passage[] = sample.documents.map((text, i) =>
  i === 3 ? { id: `d${i}`, title: 'A title', text } : { id: `d${i}`, text },
);

const relevance = (results: ReadonlyArray<unknown>): number[] =>
  results.map((r) => (r as { probabilities: { relevant: number } }).probabilities.relevant);

function kserve(standin: Standin, model: string, extra: Partial<RemoteScorerOptions> = {}): RemoteScorer {
  return createRemoteScorer({
    protocol: 'kserve',
    url: standin.url,
    model,
    tokenizerDir: dirs[model as Preset] ?? dirs.tiny,
    ...extra,
  });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rg-kserve-'));
  for (const preset of PRESETS)
    dirs[preset] = (await writeCrossEncoderModelDir(join(root, preset), preset, { seed: 7 })).dir;
  for (const preset of PRESETS) {
    const encoder = await createCrossEncoder({ modelDir: dirs[preset], workers: 1, workerNice: 0 });
    local[preset] = { encoder, scorer: createCrossEncoderScorer(encoder) };
  }
  triton = await startStandin({
    models: {
      tiny: { dir: dirs.tiny, maxBatchSize: 8, versions: ['1', '2'] },
      'tiny-two-logits': { dir: dirs['tiny-two-logits'] },
      'tiny-no-token-type': { dir: dirs['tiny-no-token-type'], maxBatchSize: 16 },
      hang: { dir: dirs.tiny, maxBatchSize: 8, hang: true },
      broken: { dir: dirs.tiny, fail: { status: 500, message: 'onnx runtime error 6: out of memory' } },
    },
  });
  proxied = await startStandin({ maxBodyBytes: 24_000, models: { tiny: { dir: dirs.tiny } } });
  noConfig = await startStandin({ config: false, models: { small: { dir: dirs.tiny, maxBatchSize: 4 } } });
  tight = await startStandin({ maxBodyBytes: 200, models: { tiny: { dir: dirs.tiny } } });
});

afterAll(async () => {
  await Promise.all([triton?.close(), proxied?.close(), noConfig?.close(), tight?.close()]);
  await Promise.all(Object.values(local).map((l) => l.encoder.close()));
  await rm(root, { recursive: true, force: true });
});

describe('kserve against a Triton / KServe stand-in running the ONNX model', () => {
  for (const preset of PRESETS)
    it(`${preset}: scores equal the local cross-encoder tier's, in input order`, async () => {
      const scorer = kserve(triton, preset);
      const results = await scorer.score(sample.query, passages);
      const expected = await local[preset].scorer.score(sample.query, passages);
      const got = relevance(results);
      const want = relevance(expected);
      expect(got).toHaveLength(passages.length);
      for (let i = 0; i < got.length; i++) expect(Math.abs(got[i] - want[i]), `passage ${i}`).toBeLessThan(1e-6);
      // Random weights still give every passage its own score: a mix-up would show.
      expect(new Set(got.map((p) => p.toFixed(6))).size).toBeGreaterThan(passages.length / 2);
      for (let i = 0; i < got.length; i++) {
        const r = results[i] as unknown as { raw: { relevant: number }; tier: string };
        expect(r.tier).toBe('remote');
        expect(1 / (1 + Math.exp(-r.raw.relevant))).toBeCloseTo(got[i], 12);
      }
      expect(scorer.signals).toEqual(['relevant']);
      expect(await scorer.score(sample.query, [])).toEqual([]);
    });

  it("reads Triton's max_batch_size and never sends a request over it", async () => {
    const before = triton.inferRows.length;
    const scorer = kserve(triton, 'tiny', { maxBatch: 32 });
    expect(scorer.stats().maxBatch).toBe(32);
    await scorer.ready();
    expect(scorer.stats()).toMatchObject({ maxBatch: 8, batchShrinks: 0 });
    await scorer.score(sample.query, passages);
    expect(triton.inferRows.slice(before)).toEqual([8, 8, 4]);
    expect(scorer.stats()).toMatchObject({ requests: 3, calls: 1, failedCalls: 0, maxBatch: 8 });
    // Without maxBatch the server's cap replaces the default; a model without one keeps the default.
    const unbounded = kserve(triton, 'tiny-two-logits');
    await unbounded.ready();
    expect(unbounded.stats().maxBatch).toBe(32);
    const bigger = kserve(triton, 'tiny-no-token-type');
    await bigger.ready();
    expect(bigger.stats().maxBatch).toBe(16);
  });

  it('splits a call to maxBatch and merges the answers in order', async () => {
    const whole = relevance(await kserve(triton, 'tiny-two-logits').score(sample.query, passages));
    const before = triton.inferRows.length;
    const scorer = kserve(triton, 'tiny-two-logits', { maxBatch: 3, maxConcurrentRequests: 2 });
    const split = relevance(await scorer.score(sample.query, passages));
    for (let i = 0; i < split.length; i++) expect(split[i]).toBeCloseTo(whole[i], 6);
    expect(triton.inferRows.slice(before).sort()).toEqual([2, 3, 3, 3, 3, 3, 3]);
    expect(scorer.stats()).toMatchObject({ requests: 7, maxBatch: 3, batchShrinks: 0 });
  });

  it('a 413 (a body limit in front of the server) lowers the cap, kept for later calls', async () => {
    const whole = relevance(await kserve(triton, 'tiny').score(sample.query, passages));
    const scorer = kserve(proxied, 'tiny');
    const refusedBefore = proxied.tooLarge;
    const got = relevance(await scorer.score(sample.query, passages));
    for (let i = 0; i < got.length; i++) expect(got[i]).toBeCloseTo(whole[i], 6);
    const { maxBatch, batchShrinks, requests } = scorer.stats();
    expect(batchShrinks).toBeGreaterThan(0);
    expect(maxBatch).toBeLessThan(20);
    expect(proxied.tooLarge - refusedBefore).toBeGreaterThan(0);
    // The next call goes straight to requests the proxy lets through.
    const refused = proxied.tooLarge;
    await scorer.score(sample.query, passages);
    expect(proxied.tooLarge).toBe(refused);
    expect(scorer.stats().requests - requests).toBe(Math.ceil(passages.length / scorer.stats().maxBatch));
  });

  it("learns max_batch_size from Triton's 400 where the server has no configuration endpoint", async () => {
    const whole = relevance(await kserve(triton, 'tiny').score(sample.query, passages.slice(0, 6)));
    const scorer = kserve(noConfig, 'small', { maxBatch: 6 });
    const got = relevance(await scorer.score(sample.query, passages.slice(0, 6)));
    for (let i = 0; i < got.length; i++) expect(got[i]).toBeCloseTo(whole[i], 6);
    // 6 refused ("batch-size must be <= 4"), then 4 + 2.
    expect(scorer.stats()).toMatchObject({ requests: 3, maxBatch: 4, batchShrinks: 1 });
  });

  it('a single pair refused for its size is a RemoteBatchRefusedError', async () => {
    const scorer = kserve(tight, 'tiny', { maxBatch: 4 });
    const error = await scorer.score(sample.query, passages.slice(0, 4)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteBatchRefusedError);
    expect(error).toMatchObject({
      code: 'RG_ERR_REMOTE_BATCH_REFUSED',
      status: 413,
      protocol: 'kserve',
      retryable: false,
    });
  });

  it('names a model version in the path, and refuses an unknown one with a typed error', async () => {
    const v2 = kserve(triton, 'tiny', { modelVersion: '2' });
    expect(v2.id).toContain('/v2/models/tiny/versions/2/infer');
    const expected = relevance(await kserve(triton, 'tiny').score(sample.query, passages.slice(0, 3)));
    const got = relevance(await v2.score(sample.query, passages.slice(0, 3)));
    for (let i = 0; i < 3; i++) expect(got[i]).toBeCloseTo(expected[i], 6);
    const unknown = await kserve(triton, 'tiny', { modelVersion: '9' })
      .score(sample.query, passages.slice(0, 2))
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(RemoteEndpointError);
    expect(unknown).toMatchObject({ status: 400, retryable: false, protocol: 'kserve' });
  });

  it('honours the deadline and cancels the requests in flight', async () => {
    const scorer = kserve(triton, 'hang');
    await scorer.ready();
    const rows = triton.inferRows.length;
    const cancelled = triton.cancelled;
    const error = await scorer.score(sample.query, passages, { deadline: Date.now() + 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(triton.inferRows.length - rows).toBe(3); // 8 + 8 + 4: every request reached the server
    for (let i = 0; i < 100 && triton.cancelled - cancelled < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(triton.cancelled - cancelled).toBe(3);
    const late = await scorer.score(sample.query, passages, { deadline: Date.now() - 1 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(DeadlineExceededError);
    expect(triton.inferRows.length - rows).toBe(3);
  });

  it('honours the AbortSignal, before and during the requests, and cancels them', async () => {
    const scorer = kserve(triton, 'hang');
    const controller = new AbortController();
    const rows = triton.inferRows.length;
    const cancelled = triton.cancelled;
    const pending = scorer.score(sample.query, passages, { signal: controller.signal });
    for (let i = 0; i < 300 && triton.inferRows.length - rows < 3; i++) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    for (let i = 0; i < 100 && triton.cancelled - cancelled < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(triton.cancelled - cancelled).toBe(3);
    await expect(scorer.score(sample.query, passages, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      AbortedError,
    );
    expect(scorer.stats().failedCalls).toBe(1);
  });

  it('a deadline that passes while the server is first learned is a DeadlineExceededError', async () => {
    const port = await freePort();
    // A listener that accepts and never answers: the readiness request hangs.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(port, '127.0.0.1', r));
    try {
      const scorer = createRemoteScorer({
        protocol: 'kserve',
        url: `http://127.0.0.1:${port}`,
        model: 'tiny',
        tokenizerDir: dirs.tiny,
        requestTimeoutMs: 1000,
      });
      const started = Date.now();
      const error = await scorer.score(sample.query, passages, { deadline: Date.now() + 150 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeadlineExceededError);
      expect(Date.now() - started).toBeLessThan(900);
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it('types the failures: backend errors, unknown models, unreachable servers, servers not ready', async () => {
    const broken = await kserve(triton, 'broken')
      .score(sample.query, passages.slice(0, 2))
      .catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(RemoteEndpointError);
    expect(broken).toMatchObject({ code: 'RG_ERR_REMOTE_ENDPOINT', status: 500, retryable: true, protocol: 'kserve' });
    expect((broken as Error).message).toContain('out of memory');
    const unknown = await kserve(triton, 'no-such-model')
      .score(sample.query, passages.slice(0, 2))
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(RemoteEndpointError);
    expect(unknown).toMatchObject({ status: 400, retryable: false });
    expect((unknown as Error).message).toContain("unknown model: 'no-such-model'");
    const down = await createRemoteScorer({
      protocol: 'kserve',
      url: `http://127.0.0.1:${await freePort()}`,
      model: 'tiny',
      tokenizerDir: dirs.tiny,
    })
      .score(sample.query, passages.slice(0, 2))
      .catch((e: unknown) => e);
    expect(down).toBeInstanceOf(RemoteEndpointError);
    expect(down).toMatchObject({ status: undefined, retryable: true, code: 'RG_ERR_REMOTE_ENDPOINT' });

    // Not ready: a retryable error, and the next call asks again.
    const scorer = kserve(triton, 'tiny');
    triton.ready = false;
    try {
      const notReady = await scorer.ready().catch((e: unknown) => e);
      expect(notReady).toBeInstanceOf(RemoteEndpointError);
      expect(notReady).toMatchObject({ status: 400, retryable: true });
      expect((notReady as Error).message).toContain('/v2/health/ready');
      await expect(scorer.score(sample.query, passages.slice(0, 2))).rejects.toBeInstanceOf(RemoteEndpointError);
    } finally {
      triton.ready = true;
    }
    expect(relevance(await scorer.score(sample.query, passages.slice(0, 2)))).toHaveLength(2);
  });
});

describe('kserve answers and models the engine cannot use', () => {
  let fake: Server;
  let fakeUrl: string;
  let metadata: unknown;
  let answer = '';
  beforeAll(async () => {
    fake = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/v2/health/ready') return res.end('{"ready":true}');
      if (path.endsWith('/config')) {
        res.statusCode = 404;
        return res.end('{"error":"Not Found"}');
      }
      if (req.method === 'GET') return res.end(JSON.stringify(metadata));
      req.resume();
      req.on('end', () => res.end(answer));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => fake.close(r));
  });

  const ids = [
    { name: 'input_ids', datatype: 'INT64', shape: [-1, -1] },
    { name: 'attention_mask', datatype: 'INT64', shape: [-1, -1] },
  ];
  const logits = (width: number) => ({ name: 'logits', datatype: 'FP32', shape: [-1, width] });
  const score = (extra: Partial<RemoteScorerOptions> = {}) =>
    createRemoteScorer({ protocol: 'kserve', url: fakeUrl, model: 'm', tokenizerDir: dirs.tiny, ...extra })
      .score('q', passages.slice(0, 2))
      .catch((e: unknown) => e);

  const badAnswers: Array<[string, string]> = [
    ['not JSON', 'oops'],
    ['no outputs', '{"model_name":"m"}'],
    ['another output', '{"outputs":[{"name":"other","shape":[2,1],"datatype":"FP32","data":[1,2]}]}'],
    ['a shape for other rows', '{"outputs":[{"name":"logits","shape":[3,1],"datatype":"FP32","data":[1,2,3]}]}'],
    ['too few values', '{"outputs":[{"name":"logits","shape":[2,1],"datatype":"FP32","data":[1]}]}'],
    ['a value that is not a number', '{"outputs":[{"name":"logits","shape":[2,1],"datatype":"FP32","data":[1,"x"]}]}'],
    ['an integer output', '{"outputs":[{"name":"logits","shape":[2,1],"datatype":"INT64","data":[1,2]}]}'],
  ];
  for (const [what, body] of badAnswers)
    it(`an answer with ${what} is a RemoteResponseError`, async () => {
      metadata = { name: 'm', platform: 'x', inputs: ids, outputs: [logits(1)] };
      answer = body;
      const error = await score();
      expect(error).toBeInstanceOf(RemoteResponseError);
      expect(error).toMatchObject({ code: 'RG_ERR_REMOTE_RESPONSE', protocol: 'kserve' });
    });

  it('reads nested data and [n,2] heads as class 1 − class 0', async () => {
    metadata = { name: 'm', platform: 'x', inputs: ids, outputs: [logits(2)] };
    answer = '{"outputs":[{"name":"logits","shape":[2,2],"datatype":"FP32","data":[[0,1],[2,0]]}]}';
    const results = (await score()) as Array<{ probabilities: { relevant: number }; raw: { relevant: number } }>;
    expect(results.map((r) => r.raw.relevant)).toEqual([1, -2]);
    expect(results[0].probabilities.relevant).toBeCloseTo(1 / (1 + Math.exp(-1)), 12);
  });

  it('picks the output: the only one, else "logits", else the one named by `output`', async () => {
    const two = {
      name: 'm',
      platform: 'x',
      inputs: ids,
      outputs: [logits(1), { name: 'scores', datatype: 'FP32', shape: [-1, 1] }],
    };
    metadata = two;
    answer =
      '{"outputs":[{"name":"scores","shape":[2,1],"datatype":"FP32","data":[5,6]},{"name":"logits","shape":[2,1],"datatype":"FP32","data":[1,2]}]}';
    expect(((await score()) as Array<{ raw: { relevant: number } }>).map((r) => r.raw.relevant)).toEqual([1, 2]);
    expect(
      ((await score({ output: 'scores' })) as Array<{ raw: { relevant: number } }>).map((r) => r.raw.relevant),
    ).toEqual([5, 6]);
    metadata = { ...two, outputs: [two.outputs[1], { ...two.outputs[1], name: 'other' }] };
    const none = await score();
    expect(none).toBeInstanceOf(RemoteResponseError);
    expect((none as Error).message).toMatch(/none named "logits"/);
  });

  const badModels: Array<[string, unknown]> = [
    [
      'an input the engine cannot fill',
      { inputs: [...ids, { name: 'pixel_values', datatype: 'FP32', shape: [-1, 3] }], outputs: [logits(1)] },
    ],
    ['no attention_mask', { inputs: [ids[0]], outputs: [logits(1)] }],
    ['float token ids', { inputs: [{ ...ids[0], datatype: 'FP32' }, ids[1]], outputs: [logits(1)] }],
    ['three logit columns', { inputs: ids, outputs: [logits(3)] }],
  ];
  for (const [what, body] of badModels)
    it(`a model with ${what} is a RemoteResponseError naming it`, async () => {
      metadata = { name: 'm', platform: 'x', ...(body as object) };
      const error = await score();
      expect(error).toBeInstanceOf(RemoteResponseError);
      expect((error as Error).message).toMatch(/kserve model/);
    });

  it('pads to a fixed sequence length, and refuses a maxLength longer than it', async () => {
    const fixed = [
      { name: 'input_ids', datatype: 'INT32', shape: [-1, 128] },
      { name: 'attention_mask', datatype: 'INT32', shape: [-1, 128] },
    ];
    metadata = { name: 'm', platform: 'tensorrt_plan', inputs: fixed, outputs: [logits(1)] };
    const error = await score();
    expect(error).toBeInstanceOf(RemoteConfigError);
    expect((error as Error).message).toMatch(/takes sequences of 128 tokens/);
    answer = '{"outputs":[{"name":"logits","shape":[2,1],"datatype":"FP32","data":[1,2]}]}';
    expect(await score({ maxLength: 128 })).toHaveLength(2);
  });
});

describe('kserve as a router tier and as a serve model', () => {
  it('a router cascades to it like a local tier, and degrades its pairs when it does not answer', async () => {
    const fastPath = await loadFastPathScorer(FAST_PATH_DIR);
    const remote = kserve(triton, 'tiny');
    await remote.ready();
    const direct = relevance(await remote.score(sample.query, passages));
    const router = createRouter({
      tiers: [fastPathTier(fastPath), { name: 'gpu', scorer: remote, quality: 2 }],
      routing: { mode: 'fixed', fixedTier: 'gpu' },
    });
    const fixed = await router.score(sample.query, passages, { deadline: Date.now() + 5000 });
    expect(fixed.every((r) => (r as { tier: string } | null)?.tier === 'gpu')).toBe(true);
    const got = relevance(fixed);
    for (let i = 0; i < got.length; i++) expect(got[i]).toBeCloseTo(direct[i], 9);
    const cascade = await router.score(sample.query, passages, {
      deadline: Date.now() + 5000,
      routing: { mode: 'cascade', threshold: 0.5 },
    });
    const onGpu = cascade
      .map((r, i) => [r as { tier: string; probabilities: { relevant: number } }, i] as const)
      .filter(([r]) => r.tier === 'gpu');
    expect(onGpu.length).toBeGreaterThan(0);
    for (const [r, i] of onGpu) expect(r.probabilities.relevant).toBeCloseTo(direct[i], 9);

    // A tier that never answers: its pairs come back from the fast path, marked, by the deadline.
    const stuck = createRouter({
      tiers: [fastPathTier(fastPath), { name: 'gpu', scorer: kserve(triton, 'hang'), quality: 2 }],
      routing: { mode: 'cascade', threshold: 0.5 },
    });
    const deadline = Date.now() + 400;
    const degraded = await stuck.score(sample.query, passages, { deadline });
    // Answered by the deadline (a little slack for a loaded test host), not when the tier answers (never).
    expect(Date.now()).toBeLessThan(deadline + 200);
    const marked = degraded.filter((r) => (r as { degraded?: string } | null)?.degraded === 'deadline');
    expect(marked.length).toBeGreaterThan(0);
    expect(marked.every((r) => (r as { tier: string }).tier === 'fast-path')).toBe(true);
    router.close();
    stuck.close();
  });

  describe('serve config: a type remote model with protocol kserve', () => {
    let front: RelevanceGateServer;
    beforeAll(async () => {
      front = await start({
        cache: { enabled: false },
        models: {
          gpu: {
            type: 'remote',
            protocol: 'kserve',
            url: triton.url,
            model: 'tiny',
            tokenizerDir: dirs.tiny,
            budgetMs: 10_000,
          },
        },
      });
    });
    afterAll(async () => {
      await front?.close();
    });

    it('serves the model through the kserve tier', async () => {
      const direct = relevance(await kserve(triton, 'tiny').score(sample.query, passages.slice(0, 6)));
      const res = await postJson(`${front.url}/v2/rerank`, {
        model: 'gpu',
        query: sample.query,
        documents: sample.documents.slice(0, 6),
      });
      expect(res.status, res.text).toBe(200);
      const got = new Array<number>(6);
      for (const r of (res.body as { results: Array<{ index: number; relevance_score: number }> }).results)
        got[r.index] = r.relevance_score;
      // Passage 3 has a title in `passages`; the documents here have none.
      for (const i of [0, 1, 2, 4, 5]) expect(got[i]).toBeCloseTo(direct[i], 6);
    });

    it('refuses a kserve model without a tokenizer folder or model name, and kserve options elsewhere', async () => {
      const input = (models: Record<string, unknown>) => ({ models }) as unknown as ServerConfigInput;
      await expect(
        start(input({ r: { type: 'remote', protocol: 'kserve', url: 'http://x', model: 'm' } })),
      ).rejects.toThrow(/models\.r\.tokenizerDir/);
      await expect(
        start(input({ r: { type: 'remote', protocol: 'kserve', url: 'http://x', tokenizerDir: dirs.tiny } })),
      ).rejects.toThrow(/models\.r\.model/);
      await expect(
        start(input({ r: { type: 'remote', protocol: 'tei', url: 'http://x', tokenizerDir: dirs.tiny } })),
      ).rejects.toThrow(/models\.r\.tokenizerDir: a kserve option/);
      await expect(
        start(
          input({
            r: { type: 'remote', protocol: 'kserve', url: 'http://x', model: 'm', tokenizerDir: join(root, 'none') },
          }),
        ),
      ).rejects.toThrow(/tokenizerDir/);
    });
  });
});

describe('kserve options', () => {
  it('refuses bad options with RemoteConfigError naming them', () => {
    const bad: unknown[] = [
      { protocol: 'kserve', url: 'http://x', tokenizerDir: 'DIR' },
      { protocol: 'kserve', url: 'http://x', model: 'm' },
      { protocol: 'kserve', url: 'http://x', model: 'm', tokenizerDir: '/no/such/folder' },
      { protocol: 'kserve', url: 'http://x', model: 'm', tokenizerDir: 'ROOT' },
      { protocol: 'kserve', url: 'http://x', model: 'm', tokenizerDir: 'DIR', maxLength: 3 },
      { protocol: 'kserve', url: 'http://x', model: 'm', tokenizerDir: 'DIR', truncation: 'only_first' },
      { protocol: 'kserve', url: 'http://x', model: 'm', tokenizerDir: 'DIR', modelVersion: '' },
      { protocol: 'tei', url: 'http://x', tokenizerDir: 'DIR' },
      { protocol: 'cohere', url: 'http://x', output: 'logits' },
    ];
    for (const raw of bad) {
      const options = JSON.parse(
        JSON.stringify(raw).replace('"DIR"', JSON.stringify(dirs.tiny)).replace('"ROOT"', JSON.stringify(root)),
      );
      let error: unknown;
      try {
        createRemoteScorer(options);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(options)).toBeInstanceOf(RemoteConfigError);
    }
  });

  it('a maxLength above what the tokenizer folder allows is refused when the tokenizer loads', async () => {
    const scorer = createRemoteScorer({
      protocol: 'kserve',
      url: triton.url,
      model: 'tiny',
      tokenizerDir: dirs.tiny,
      maxLength: 4096,
    });
    await expect(scorer.ready()).rejects.toBeInstanceOf(RemoteConfigError);
  });

  it('derives the id from the model, the endpoint and the tokenization; takes a base or the full infer URL', () => {
    const base = createRemoteScorer({ protocol: 'kserve', url: 'http://h:8000', model: 'rr', tokenizerDir: dirs.tiny });
    expect(base.id).toBe('remote:kserve:rr@http://h:8000/v2/models/rr/infer:lendefault:longest_first');
    const full = createRemoteScorer({
      protocol: 'kserve',
      url: 'https://h/triton/v2/models/rr/versions/3/infer',
      model: 'rr',
      modelVersion: '3',
      tokenizerDir: dirs.tiny,
      maxLength: 256,
      truncation: 'only_second',
    });
    expect(full.id).toBe('remote:kserve:rr@https://h/triton/v2/models/rr/versions/3/infer:len256:only_second');
    const prefixed = createRemoteScorer({
      protocol: 'kserve',
      url: 'http://h/triton/',
      model: 'a b',
      tokenizerDir: dirs.tiny,
    });
    expect(prefixed.id).toContain('http://h/triton/v2/models/a%20b/infer');
    expect(prefixed.protocol).toBe('kserve');
  });
});
