/**
 * The dynamic batcher with a fake executor: correctness under concurrency (every request gets its
 * own logits, in its own order), token budget, length bucketing, age priority, abort/deadline
 * handling, bounded queue, failure isolation and close().
 */
import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  DeadlineExceededError,
  DisposedError,
  InvalidArgumentError,
  OverloadedError,
} from '../../src/errors.js';
import { DynamicBatcher, type BatcherOptions } from '../../src/tiers/cross-encoder/batcher.js';
import { expectedLogit, fakeLength, FakeExecutor, pairKey } from './fake-executor.js';
import { mulberry32 as rng } from '../../src/util/seeded-random.js';

const BASE: BatcherOptions = {
  workers: 2,
  signals: 1,
  maxBatchTokens: 512,
  maxQueueDelayMs: 2,
  maxPendingPairs: 100_000,
  useTypeIds: true,
};

function words(rand: () => number, n: number): string {
  return Array.from({ length: n }, () => `w${Math.floor(rand() * 5000)}`).join(' ');
}

function expectLogits(query: string, passages: string[], logits: Float64Array, signals = 1) {
  expect(logits.length).toBe(passages.length * signals);
  passages.forEach((p, i) => {
    for (let s = 0; s < signals; s++) expect(logits[i * signals + s]).toBe(expectedLogit(query, p, s));
  });
}

describe('DynamicBatcher', () => {
  it('1000 concurrent random requests each get exactly their own logits in their own order', async () => {
    const exec = new FakeExecutor({ msPerToken: 0.0005 });
    const batcher = new DynamicBatcher(exec, { ...BASE, maxBatchTokens: 2048 });
    const rand = rng(7);
    const requests = Array.from({ length: 1000 }, (_, r) => {
      const query = `q${r} ${words(rand, 1 + Math.floor(rand() * 8))}`;
      // Duplicate passages inside and across requests on purpose.
      const passages = Array.from({ length: 1 + Math.floor(rand() * 40) }, () =>
        rand() < 0.1 ? 'shared passage' : words(rand, 1 + Math.floor(rand() * 120)),
      );
      return { query, passages };
    });
    const results = await Promise.all(requests.map((r) => batcher.submit(r.query, r.passages)));
    requests.forEach((r, i) => {
      expectLogits(r.query, r.passages, results[i]);
    });
    const s = batcher.stats();
    expect(s.pairsRun).toBe(requests.reduce((n, r) => n + r.passages.length, 0));
    expect(s.meanBatchSize).toBeGreaterThan(5);
    expect(s.queuedPairs + s.tokenizingPairs + s.inFlightPairs + s.pendingRequests).toBe(0);
    expect(exec.maxInFlight).toBeLessThanOrEqual(BASE.workers + 1);
  });

  it('returns every signal of multi-signal models per pair', async () => {
    const exec = new FakeExecutor({ signals: 3 });
    const batcher = new DynamicBatcher(exec, { ...BASE, signals: 3 });
    const passages = ['a b c', 'd e', 'f g h i j'];
    expectLogits('query', passages, await batcher.submit('query', passages), 3);
  });

  it('keeps every batch within the token budget and sorts by length to cut padding', async () => {
    const exec = new FakeExecutor({ manual: true });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 1, maxInFlight: 1, maxBatchTokens: 400 });
    const rand = rng(3);
    // A blocker batch occupies the only worker while a deep, mixed-length queue builds up.
    const blocker = batcher.submit('blocker', ['x']);
    await waitFor(() => exec.pendingManual === 1);
    const reqs = Array.from({ length: 30 }, (_, r) => ({
      query: `q${r}`,
      passages: Array.from({ length: 10 }, () =>
        words(rand, rand() < 0.5 ? 5 + Math.floor(rand() * 5) : 60 + Math.floor(rand() * 20)),
      ),
    }));
    const pending = reqs.map((r) => batcher.submit(r.query, r.passages));
    await waitFor(() => batcher.stats().queuedPairs === 300);
    const done = Promise.all([blocker, ...pending]);
    while (batcher.stats().pendingRequests > 0) {
      exec.release();
      await new Promise((r) => setTimeout(r, 1));
    }
    const results = await done;
    reqs.forEach((r, i) => {
      expectLogits(r.query, r.passages, results[i + 1]);
    });
    for (const b of exec.batches) {
      const padded = Math.max(...b.lengths) * b.lengths.length;
      expect(b.lengths.length === 1 || padded <= 400).toBe(true);
    }
    // Short and long pairs are not mixed: padding stays low (FIFO batching would pad ~45%).
    expect(batcher.stats().paddingRatio).toBeLessThan(0.2);
  });

  it('serves the oldest pair first: a long pair is not starved by a stream of short ones', async () => {
    const exec = new FakeExecutor({ msPerToken: 0.01 });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 1, maxInFlight: 1, maxBatchTokens: 300 });
    const shortOnes: Promise<Float64Array>[] = [];
    const feed = setInterval(() => {
      for (let i = 0; i < 5; i++) shortOnes.push(batcher.submit(`s${shortOnes.length}`, ['a b', 'c d', 'e f']));
    }, 1);
    await new Promise((r) => setTimeout(r, 10));
    const longPassage = words(rng(1), 250);
    const started = exec.batches.length;
    const long = await batcher.submit('long', [longPassage]);
    clearInterval(feed);
    const longBatch = exec.batches.findIndex((b) => b.keys.includes(pairKey('long', longPassage)));
    expectLogits('long', [longPassage], long);
    // Only the pairs queued before it may go first: a few batches, not "after the stream ends".
    expect(longBatch - started).toBeLessThan(40);
    await Promise.all(shortOnes);
  });

  it('never has more than workers + 1 batches in flight', async () => {
    const exec = new FakeExecutor({ msPerToken: 0.002 });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 3, maxBatchTokens: 256 });
    const rand = rng(11);
    await Promise.all(
      Array.from({ length: 200 }, (_, r) =>
        batcher.submit(
          `q${r}`,
          Array.from({ length: 10 }, () => words(rand, 20)),
        ),
      ),
    );
    expect(exec.maxInFlight).toBe(4);
  });

  it('pendingPairs counts the pairs queued and in flight, as the stats do, and reaches 0 when done', async () => {
    const exec = new FakeExecutor({ manual: true });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 1, maxInFlight: 1 });
    const backlog = (): number => {
      const s = batcher.stats();
      return s.tokenizingPairs + s.queuedPairs + s.inFlightPairs;
    };
    expect(batcher.pendingPairs()).toBe(0);
    const first = batcher.submit('first', ['running pair']);
    await waitFor(() => exec.pendingManual === 1);
    expect(batcher.pendingPairs()).toBe(1);
    const second = batcher.submit('second', ['a', 'b', 'c']);
    await waitFor(() => batcher.stats().queuedPairs === 3);
    expect(batcher.pendingPairs()).toBe(4);
    expect(batcher.pendingPairs()).toBe(backlog());
    const done = Promise.all([first, second]);
    while (batcher.stats().pendingRequests > 0) {
      exec.release();
      await new Promise((r) => setTimeout(r, 1));
    }
    await done;
    expect(batcher.pendingPairs()).toBe(0);
    expect(backlog()).toBe(0);
  });

  it('an aborted request rejects at once, its queued pairs never run, others are unaffected', async () => {
    const exec = new FakeExecutor({ manual: true });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 1, maxInFlight: 1 });
    const first = batcher.submit('first', ['running pair']);
    await waitFor(() => exec.pendingManual === 1);
    const controller = new AbortController();
    const doomedPassages = ['doomed a', 'doomed b', 'doomed c'];
    const doomed = batcher.submit('doomed', doomedPassages, { signal: controller.signal });
    const other = batcher.submit('other', ['other a', 'other b']);
    await waitFor(() => batcher.stats().queuedPairs === 5);
    controller.abort(new Error('caller gave up'));
    await expect(doomed).rejects.toBeInstanceOf(AbortedError);
    expect(batcher.stats().queuedPairs).toBe(2);
    expect(batcher.stats().pairsDropped).toBe(3);
    const rest = Promise.all([first, other]);
    while (batcher.stats().pendingRequests > 0) {
      exec.release();
      await new Promise((r) => setTimeout(r, 1));
    }
    const [a, b] = await rest;
    expectLogits('first', ['running pair'], a);
    expectLogits('other', ['other a', 'other b'], b);
    const ran = exec.ranKeys();
    for (const p of doomedPassages) expect(ran.has(pairKey('doomed', p))).toBe(false);
  });

  it('an already-aborted signal or a past deadline rejects without doing any work', async () => {
    const exec = new FakeExecutor();
    const batcher = new DynamicBatcher(exec, BASE);
    const c = new AbortController();
    c.abort();
    await expect(batcher.submit('q', ['p'], { signal: c.signal })).rejects.toBeInstanceOf(AbortedError);
    await expect(batcher.submit('q', ['p'], { deadline: Date.now() - 1 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    expect(exec.batches.length).toBe(0);
    expect(await batcher.submit('q', [])).toEqual(new Float64Array(0));
    // Far deadlines (beyond Node's 2^31 ms timer range) must not fire early (runs take ~20 ms here).
    const slow = new DynamicBatcher(new FakeExecutor({ msPerToken: 5 }), BASE);
    expectLogits('q', ['p'], await slow.submit('q', ['p'], { deadline: Number.POSITIVE_INFINITY }));
    expectLogits('q', ['p2'], await slow.submit('q', ['p2'], { deadline: Date.now() + 40 * 86_400_000 }));
  });

  it('an expired request rejects at its deadline, its pairs are not run, others are unaffected', async () => {
    const exec = new FakeExecutor({ manual: true });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 1, maxInFlight: 1 });
    const first = batcher.submit('first', ['running pair']);
    await waitFor(() => exec.pendingManual === 1);
    const t0 = Date.now();
    const expiring = batcher.submit('late', ['late a', 'late b'], { deadline: t0 + 30 });
    const patient = batcher.submit('patient', ['patient a'], { deadline: t0 + 60_000 });
    // The running batch never finishes on its own (manual executor): only the deadline can end it.
    await expect(expiring).rejects.toBeInstanceOf(DeadlineExceededError);
    const rest = Promise.all([first, patient]);
    while (batcher.stats().pendingRequests > 0) {
      exec.release();
      await new Promise((r) => setTimeout(r, 1));
    }
    const [, p] = await rest;
    expectLogits('patient', ['patient a'], p);
    expect(exec.ranKeys().has(pairKey('late', 'late a'))).toBe(false);
    expect(exec.ranKeys().has(pairKey('late', 'late b'))).toBe(false);
  });

  it('refuses work beyond maxPendingPairs with OverloadedError and accepts it again once drained', async () => {
    const exec = new FakeExecutor({ manual: true });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 1, maxInFlight: 1, maxPendingPairs: 10 });
    const first = batcher.submit('first', ['x']);
    await waitFor(() => exec.pendingManual === 1);
    const queued = batcher.submit(
      'q',
      Array.from({ length: 8 }, (_, i) => `p${i}`),
    );
    await expect(batcher.submit('too much', ['a', 'b', 'c'])).rejects.toBeInstanceOf(OverloadedError);
    const fits = batcher.submit('fits', ['a', 'b']);
    while (batcher.stats().pendingRequests > 0) {
      exec.release();
      await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all([first, queued, fits]);
    expectLogits(
      'later',
      ['a', 'b', 'c'],
      await (async () => {
        const p = batcher.submit('later', ['a', 'b', 'c']);
        while (exec.pendingManual === 0 && batcher.stats().pendingRequests > 0)
          await new Promise((r) => setTimeout(r, 1));
        exec.release();
        return p;
      })(),
    );
  });

  it('a failing batch rejects only the requests in it', async () => {
    const poison = pairKey('poison', 'bad');
    const exec = new FakeExecutor({ failWhen: (keys) => keys.includes(poison) });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 1, maxBatchTokens: 8 });
    const results = await Promise.allSettled([
      batcher.submit('poison', ['bad']),
      batcher.submit('fine', ['good one', 'good two']),
    ]);
    expect(results[0].status).toBe('rejected');
    expect(results[1].status).toBe('fulfilled');
    if (results[1].status === 'fulfilled') expectLogits('fine', ['good one', 'good two'], results[1].value);
  });

  it('dispatches a partial batch at once when nothing else is coming, else waits at most maxQueueDelayMs', async () => {
    const exec = new FakeExecutor();
    // A partial-batch wait this long would outlast the test's timeout: answering shows it was not waited.
    const batcher = new DynamicBatcher(exec, { ...BASE, maxQueueDelayMs: 600_000 });
    await batcher.submit('alone', ['one passage']);

    const slowTok = new FakeExecutor({ tokenizeDelayMs: 0 });
    const b2 = new DynamicBatcher(slowTok, { ...BASE, workers: 1, maxQueueDelayMs: 40 });
    const a = b2.submit('a', ['first']);
    // A second request is still tokenizing when the first is queued: the batcher waits for it.
    const b = b2.submit(
      'b',
      Array.from({ length: 2 }, (_, i) => `second ${i}`),
    );
    await Promise.all([a, b]);
    expect(slowTok.batches.length).toBe(1);
  });

  it('splits a small queue across idle workers', async () => {
    const exec = new FakeExecutor({ msPerToken: 0.01 });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 2, maxBatchTokens: 4096 });
    const passages = Array.from({ length: 20 }, (_, i) => `passage number ${i} with some words`);
    expectLogits('q', passages, await batcher.submit('q', passages));
    expect(exec.batches.length).toBe(2);
  });

  it('close() rejects pending work with DisposedError, never hangs, and refuses new work', async () => {
    const exec = new FakeExecutor({ manual: true });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 1, maxInFlight: 1 });
    const running = batcher.submit('running', ['x']);
    await waitFor(() => exec.pendingManual === 1);
    const queued = batcher.submit('queued', ['y', 'z']);
    await waitFor(() => batcher.stats().queuedPairs === 2);
    await batcher.close();
    await expect(running).rejects.toBeInstanceOf(DisposedError);
    await expect(queued).rejects.toBeInstanceOf(DisposedError);
    await expect(batcher.submit('after', ['p'])).rejects.toBeInstanceOf(DisposedError);
    exec.release();
    await batcher.inFlightWork();
    expect(exec.batches.length).toBe(1);
  });

  it('reports stats and a wait estimate that grows with queued work', async () => {
    const exec = new FakeExecutor({ manual: true });
    const batcher = new DynamicBatcher(exec, { ...BASE, workers: 1, maxInFlight: 1, maxBatchTokens: 64 });
    expect(batcher.estimateWaitMs(10)).toBe(0);
    const warm = batcher.submit('warm', ['a b c']);
    await waitFor(() => exec.pendingManual === 1);
    exec.release();
    await warm;
    // The estimate = tokenize EWMA + queued work; the tokenize EWMA moves with this machine's
    // timing as 'b' and 'q' are tokenized, so compare the work part only (no batch completes in
    // between, so ms per token and padding stay fixed).
    const before = batcher.estimateWaitMs(10, 20);
    expect(before).toBeGreaterThan(0);
    const workBefore = before - batcher.stats().tokenizeMs;
    const blocker = batcher.submit('b', ['x']);
    await waitFor(() => exec.pendingManual === 1);
    const q = batcher.submit(
      'q',
      Array.from({ length: 50 }, (_, i) => `p ${i} lorem ipsum dolor`),
    );
    await waitFor(() => batcher.stats().queuedPairs === 50);
    const s = batcher.stats();
    expect(s.queuedTokens).toBe(
      Array.from({ length: 50 }, (_, i) => fakeLength('q', `p ${i} lorem ipsum dolor`)).reduce((a, b) => a + b, 0),
    );
    expect(s.inFlightBatches).toBe(1);
    expect(batcher.estimateWaitMs(10, 20) - batcher.stats().tokenizeMs).toBeGreaterThan(workBefore);
    while (batcher.stats().pendingRequests > 0) {
      exec.release();
      await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all([blocker, q]);
  });

  it('runs a lone request on idle workers as one length-sorted batch each, when that pads little', async () => {
    const exec = new FakeExecutor();
    const batcher = new DynamicBatcher(exec, { ...BASE, maxBatchTokens: 4096 });
    // 20 passages of 150..245 tokens: 4,000 tokens, more than one budget, less than two.
    const passages = Array.from({ length: 20 }, (_, i) => words(rng(i + 1), 146 + ((i * 7) % 20) * 5));
    expectLogits('q', passages, await batcher.submit('q', passages));
    // Two batches (one per worker), the longer pairs in the smaller one: their padded sizes balance.
    const sizes = exec.batches.map((b) => b.lengths.length);
    expect(sizes).toHaveLength(2);
    expect(sizes[0]).toBeLessThanOrEqual(sizes[1]);
    expect(sizes[0]).toBeGreaterThanOrEqual(8);
    for (const b of exec.batches) expect(Math.max(...b.lengths) * b.lengths.length).toBeLessThanOrEqual(4096);
    const [longer, shorter] = exec.batches.map((b) => b.lengths);
    expect(Math.min(...longer)).toBeGreaterThanOrEqual(Math.max(...shorter));
    // Mixed lengths (a few long pairs, many short ones): one batch per worker would pad more than
    // 1/6 of its positions, so the usual length windows run it instead.
    const mixed = new FakeExecutor();
    const other = new DynamicBatcher(mixed, { ...BASE, maxBatchTokens: 4096 });
    const varied = Array.from({ length: 20 }, (_, i) => words(rng(i + 50), i < 3 ? 400 : 40 + i * 5));
    expectLogits('q', varied, await other.submit('q', varied));
    expect(mixed.batches.length).not.toBe(2);
  });

  it('validates its options', () => {
    const exec = new FakeExecutor();
    expect(() => new DynamicBatcher(exec, { ...BASE, workers: 0 })).toThrow(InvalidArgumentError);
    expect(() => new DynamicBatcher(exec, { ...BASE, maxBatchTokens: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => new DynamicBatcher(exec, { ...BASE, maxQueueDelayMs: -1 })).toThrow(InvalidArgumentError);
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 1));
  }
}
