import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortedError, DeadlineExceededError, OverloadedError, type Passage } from '../../src/index.js';
import {
  createLlmJudge,
  DEFAULT_QUESTIONS,
  LlmEndpointError,
  LlmResponseFormatError,
  type JudgeQuestion,
} from '../../src/tiers/llm-judge/index.js';
import { oracleHandler, parsePrompt, sleep, yesNoPosition } from './helpers.js';
import { type StandInPosition, type StandInServer, startStandInServer } from './stand-in-server.js';

const ONE: JudgeQuestion[] = [{ name: 'relevant', instruction: 'Is the passage about what the query asks?' }];

function passages(k: number, prefix = 'doc'): Passage[] {
  return Array.from({ length: k }, (_, i) => ({ id: `${prefix}${i}`, text: `${prefix} text ${i}` }));
}

/** P(yes) of the oracle: from the number in the passage text. */
const byIndex = (values: readonly number[]) =>
  oracleHandler((_q, p) => values[Number(/(\d+)$/.exec(p.text)?.[1] ?? 0)] ?? 0);

let server: StandInServer;
beforeEach(async () => {
  server = await startStandInServer(byIndex([0.9, 0.1, 0.5, 0.7]));
});
afterEach(async () => {
  await server.close();
});

describe('one question, default options', () => {
  it('sends one chat-completions request per pair and reads P(yes) from the first token top_logprobs, exactly', async () => {
    const tops: Record<string, StandInPosition> = {
      'doc text 0': {
        token: 'Yes',
        logprob: -0.4,
        top: [
          ['Yes', -0.4],
          [' yes', -1.9],
          ['No', -2.2],
          [' no', -3.1],
          ['The', -5],
        ],
      },
      'doc text 1': {
        token: ' no',
        logprob: -0.05,
        top: [
          [' no', -0.05],
          ['NO', -4.2],
          ['yes', -3.6],
        ],
      },
    };
    server.setHandler((req) => ({
      kind: 'answer',
      positions: [tops[parsePrompt(req.body).passages[0].text]],
    }));
    const judge = createLlmJudge({
      baseURL: server.baseURL,
      model: 'judge-model',
      apiKey: 'sk-test',
      questions: ONE,
      headers: { 'X-Org': 'acme' },
    });
    const results = await judge.score('what is x?', passages(2));
    expect(server.requests).toHaveLength(2);
    for (const r of server.requests) {
      expect(r.body).toMatchObject({
        model: 'judge-model',
        logprobs: true,
        top_logprobs: 10,
        max_tokens: 1,
        temperature: 0,
        n: 1,
        stream: false,
      });
      expect(r.headers.authorization).toBe('Bearer sk-test');
      expect(r.headers['x-org']).toBe('acme');
      expect(parsePrompt(r.body).questions).toEqual([ONE[0].instruction]);
    }
    const p0y = Math.exp(-0.4) + Math.exp(-1.9);
    const p0n = Math.exp(-2.2) + Math.exp(-3.1);
    const p1y = Math.exp(-3.6);
    const p1n = Math.exp(-0.05) + Math.exp(-4.2);
    expect(results[0]).toEqual({
      probabilities: { relevant: expect.closeTo(p0y / (p0y + p0n), 14) },
      raw: { relevant: expect.closeTo(Math.log(p0y) - Math.log(p0n), 12) },
      tier: 'llm-judge',
    });
    expect(results[1]).toEqual({
      probabilities: { relevant: expect.closeTo(p1y / (p1y + p1n), 14) },
      raw: { relevant: expect.closeTo(Math.log(p1y) - Math.log(p1n), 12) },
      tier: 'llm-judge',
    });
    const s = judge.stats();
    expect(s.requests).toBe(2);
    expect(s.requestsPerPair).toBe(1);
    expect(s.tokensPerPair).toBeGreaterThan(0);
  });

  it('without logprobs, falls back to the parsed answer as 0/1 and marks the signal coarse', async () => {
    server.setHandler((req) => ({
      kind: 'answer',
      logprobs: false,
      positions: [{ token: parsePrompt(req.body).passages[0].text.endsWith('0') ? 'Yes' : 'no', logprob: 0, top: [] }],
    }));
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE });
    const r = await judge.score('q', passages(2));
    expect(r[0]).toEqual({ probabilities: { relevant: 1 }, raw: { 'relevant.coarse': 1 }, tier: 'llm-judge' });
    expect(r[1]).toEqual({ probabilities: { relevant: 0 }, raw: { 'relevant.coarse': 1 }, tier: 'llm-judge' });
    expect(judge.stats().coarseAnswers).toBe(2);
  });
});

describe('failures, retries, deadlines', () => {
  it('honours 429 Retry-After before retrying', async () => {
    let calls = 0;
    const answer = byIndex([0.8]);
    server.setHandler((req) =>
      ++calls === 1 ? { kind: 'status', status: 429, headers: { 'retry-after': '1' } } : answer(req),
    );
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE, retryBaseMs: 1 });
    const r = await judge.score('q', passages(1));
    expect(r[0]).toMatchObject({ probabilities: { relevant: expect.closeTo(0.8, 12) } });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].receivedAt - server.requests[0].receivedAt).toBeGreaterThanOrEqual(990);
    expect(judge.stats()).toMatchObject({ responses429: 1, retries: 1, attempts: 2 });
  });

  it('a 429 pauses the other requests too (retry-after-ms)', async () => {
    let calls = 0;
    const answer = byIndex([0.8, 0.8, 0.8]);
    server.setHandler((req) =>
      ++calls === 1 ? { kind: 'status', status: 429, headers: { 'retry-after-ms': '400' } } : answer(req),
    );
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE, concurrency: 1 });
    const t0 = Date.now();
    const r = await judge.score('q', passages(3));
    expect(r.every((x) => x !== null)).toBe(true);
    // With concurrency 1, every later request starts after the pause.
    for (const req of server.requests.slice(1)) expect(req.receivedAt - t0).toBeGreaterThanOrEqual(390);
  });

  it('retries 5xx and dropped connections with backoff, then answers', async () => {
    let calls = 0;
    const answer = byIndex([0.3]);
    server.setHandler((req) => {
      calls++;
      if (calls === 1) return { kind: 'status', status: 500 };
      if (calls === 2) return { kind: 'drop' };
      if (calls === 3) return { kind: 'status', status: 503 };
      return answer(req);
    });
    const judge = createLlmJudge({
      baseURL: server.baseURL,
      model: 'm',
      questions: ONE,
      maxRetries: 3,
      retryBaseMs: 5,
    });
    const r = await judge.score('q', passages(1));
    expect(r[0]).toMatchObject({ probabilities: { relevant: expect.closeTo(0.3, 12) } });
    expect(judge.stats()).toMatchObject({ attempts: 4, retries: 3, responses5xx: 2, connectionErrors: 1 });
  });

  it('gives up after maxRetries, and never retries a 400', async () => {
    server.setHandler(() => ({ kind: 'status', status: 500 }));
    const a = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE, maxRetries: 2, retryBaseMs: 1 });
    const e1 = await a.score('q', passages(1)).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(LlmEndpointError);
    expect((e1 as LlmEndpointError).status).toBe(500);
    expect(server.requests).toHaveLength(3);
    server.resetCounters();
    server.setHandler(() => ({ kind: 'status', status: 400, body: '{"error":{"message":"bad model"}}' }));
    const b = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE, maxRetries: 5 });
    const e2 = await b.score('q', passages(1)).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(LlmEndpointError);
    expect((e2 as LlmEndpointError).retryable).toBe(false);
    expect((e2 as Error).message).toContain('bad model');
    expect(server.requests).toHaveLength(1);
  });

  it('retries stop at the deadline', async () => {
    server.setHandler(() => ({ kind: 'status', status: 503, delayMs: 20 }));
    const judge = createLlmJudge({
      baseURL: server.baseURL,
      model: 'm',
      questions: ONE,
      maxRetries: 10,
      retryBaseMs: 40,
      retryMaxMs: 80,
    });
    const t0 = Date.now();
    const deadline = t0 + 300;
    const error = await judge.score('q', passages(1), { deadline }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    // It gave up by the deadline: no retry was sent after it.
    const sentAfter = server.requests.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(server.requests.length).toBe(sentAfter);
    expect(server.requests.length).toBeGreaterThan(1);
    expect(server.requests.length).toBeLessThan(11);
    for (const r of server.requests) expect(r.receivedAt).toBeLessThan(deadline);
  });

  it('a slow answer is cut at the deadline: the call rejects with DeadlineExceededError and the request is cancelled', async () => {
    // The answer would come after the test's timeout: only the deadline can end the call.
    server.setHandler(() => ({ kind: 'status', status: 200, delayMs: 600_000 }));
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE });
    const error = await judge.score('q', passages(1), { deadline: Date.now() + 200 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    for (let i = 0; i < 50 && server.cancelled() === 0; i++) await sleep(10);
    expect(server.cancelled()).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('returns what finished by the deadline; pairs still running are null', async () => {
    server.setHandler((req) => {
      const text = parsePrompt(req.body).passages[0].text;
      return { kind: 'answer', positions: [yesNoPosition(0.9)], delayMs: text.endsWith('1') ? 3000 : 10 };
    });
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE });
    const r = await judge.score('q', passages(3), { deadline: Date.now() + 250 });
    expect(r[0]).not.toBeNull();
    expect(r[1]).toBeNull();
    expect(r[2]).not.toBeNull();
    expect(judge.stats()).toMatchObject({ pairsAnswered: 2, pairsFailed: 1 });
  });

  it('a cancelled call is not retried', async () => {
    server.setHandler(() => ({ kind: 'status', status: 500, delayMs: 5000 }));
    const judge = createLlmJudge({
      baseURL: server.baseURL,
      model: 'm',
      questions: ONE,
      maxRetries: 5,
      retryBaseMs: 1,
    });
    const controller = new AbortController();
    const pending = judge.score('q', passages(1), { signal: controller.signal });
    await sleep(100);
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortedError);
    await sleep(200);
    expect(server.requests).toHaveLength(1);
    expect(server.cancelled()).toBe(1);
    expect(judge.stats()).toMatchObject({ retries: 0, attempts: 1 });
  });

  it('a deadline beyond the timer range is no deadline (not a 1 ms timer)', async () => {
    server.setHandler(oracleHandler(() => 0.4, { delayMs: 30 }));
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE, concurrency: 1 });
    const r = await judge.score('q', passages(2), { deadline: Number.POSITIVE_INFINITY });
    expect(r.every((x) => x !== null)).toBe(true);
    const far = await judge.score('q2', passages(2), { deadline: Date.now() + 2 ** 40 });
    expect(far.every((x) => x !== null)).toBe(true);
  });

  it('an already aborted signal sends nothing', async () => {
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE });
    await expect(judge.score('q', passages(1), { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortedError);
    expect(server.requests).toHaveLength(0);
  });

  it('a malformed 200 body is a typed error, not a score, and is not retried', async () => {
    server.setHandler(() => ({ kind: 'raw', body: '{"choices": "nope"}' }));
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE });
    await expect(judge.score('q', passages(1))).rejects.toBeInstanceOf(LlmResponseFormatError);
    expect(server.requests).toHaveLength(1);
  });

  it('an unreachable endpoint fails with a typed error after the bounded retries', async () => {
    const closed = await startStandInServer(() => ({ kind: 'drop' }));
    const url = closed.baseURL;
    await closed.close();
    const judge = createLlmJudge({ baseURL: url, model: 'm', questions: ONE, maxRetries: 1, retryBaseMs: 1 });
    const error = await judge.score('q', passages(1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmEndpointError);
    expect(judge.stats().connectionErrors).toBe(2);
  });
});

describe('concurrency and rate limits', () => {
  it('never has more calls in flight than the configured bound', async () => {
    server.setHandler(oracleHandler(() => 0.6, { delayMs: 25 }));
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE, concurrency: 3 });
    const [a, b] = await Promise.all([judge.score('q1', passages(20)), judge.score('q2', passages(20))]);
    expect([...a, ...b].every((r) => r !== null)).toBe(true);
    expect(server.requests).toHaveLength(40);
    expect(server.maxInFlight()).toBe(3);
    expect(judge.stats().maxInFlight).toBe(3);
  });

  it('a call of many requests raises no listener-leak warning', async () => {
    server.setHandler(oracleHandler(() => 0.6, { delayMs: 5 }));
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.name);
    };
    process.on('warning', onWarning);
    try {
      const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', concurrency: 2 });
      const r = await judge.score('q', passages(8), {
        signal: new AbortController().signal,
        deadline: Date.now() + 10_000,
      });
      expect(r.every((x) => x !== null)).toBe(true);
      await sleep(20);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('refuses work beyond maxQueuedRequests with OverloadedError', async () => {
    server.setHandler(oracleHandler(() => 0.6, { delayMs: 100 }));
    const judge = createLlmJudge({
      baseURL: server.baseURL,
      model: 'm',
      questions: ONE,
      concurrency: 1,
      maxQueuedRequests: 2,
    });
    const error = await judge.score('q', passages(6)).catch((e: unknown) => e);
    // Three requests fit (one running, two queued); the call still answers those pairs.
    expect(error).not.toBeInstanceOf(Error);
    const results = error as ReadonlyArray<unknown>;
    expect(results.filter((r) => r !== null)).toHaveLength(3);
    const again = createLlmJudge({
      baseURL: server.baseURL,
      model: 'm',
      questions: ONE,
      concurrency: 1,
      maxQueuedRequests: 0,
    });
    const busy = again.score('q', passages(1, 'x'));
    await expect(again.score('q', passages(1, 'y'))).rejects.toBeInstanceOf(OverloadedError);
    await busy;
  });

  it('admission control: a request that cannot finish before the deadline is refused, not queued', async () => {
    server.setHandler(oracleHandler(() => 0.6, { delayMs: 200 }));
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE, concurrency: 1 });
    // Measures the endpoint: ~200 ms per request. Several calls, so a slow first connection on a
    // loaded host does not dominate the latency average admission reads.
    for (let i = 0; i < 4; i++) await judge.score(`warm ${i}`, passages(1, `w${i}`));
    server.resetCounters();
    const t0 = Date.now();
    const r = await judge.score('q', passages(5), { deadline: t0 + 600 });
    // One runs at once (~200 ms), one fits after it (~400 ms, with room for a loaded host); a third
    // would be expected to end too late (admission keeps 20 % slack), so the other three are
    // refused at once and the call ends with the second answer, not at the deadline.
    expect(r.filter((x) => x !== null)).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
    expect(judge.stats().skippedForTime).toBe(3);
  });

  it('requestsPerMinute spaces requests after the burst allowance', async () => {
    const judge = createLlmJudge({
      baseURL: server.baseURL,
      model: 'm',
      questions: ONE,
      concurrency: 8,
      requestsPerMinute: 120,
    });
    server.setHandler(byIndex(Array(7).fill(0.5)));
    await judge.score('q', passages(7));
    const times = server.requests.map((r) => r.receivedAt).sort((a, b) => a - b);
    // 120/min = one per 500 ms with 2 s of burst: 5 at once, then 500 ms apart.
    expect(times[4] - times[0]).toBeLessThan(200);
    expect(times[5] - times[0]).toBeGreaterThanOrEqual(450);
    expect(times[6] - times[0]).toBeGreaterThanOrEqual(950);
    expect(judge.stats().rateLimitWaitMs).toBeGreaterThan(0);
  });

  it('a rate-limit wait past the deadline is refused at once, not slept through', async () => {
    const judge = createLlmJudge({
      baseURL: server.baseURL,
      model: 'm',
      questions: ONE,
      concurrency: 8,
      requestsPerMinute: 60,
    });
    server.setHandler(byIndex(Array(8).fill(0.5)));
    const t0 = Date.now();
    const r = await judge.score('q', passages(8), { deadline: t0 + 400 });
    expect(r.filter((x) => x !== null)).toHaveLength(3);
    expect(judge.stats().rateLimitRefusals).toBe(5);
  });

  it('tokensPerMinute spreads requests by their token estimate', async () => {
    const fast = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE, concurrency: 8 });
    server.setHandler(byIndex(Array(6).fill(0.5)));
    await fast.score('q', passages(6));
    const spread = (): number => {
      const t = server.requests.map((r) => r.receivedAt);
      return Math.max(...t) - Math.min(...t);
    };
    expect(fast.stats().rateLimitWaitMs).toBe(0); // no limit, no wait
    server.resetCounters();
    const limited = createLlmJudge({
      baseURL: server.baseURL,
      model: 'm',
      questions: ONE,
      concurrency: 8,
      tokensPerMinute: 20_000,
    });
    await limited.score('q', passages(6));
    // ~215 estimated tokens per request at 333 tokens/s with 2 s of burst: 4 at once, then ~645 ms apart.
    expect(spread()).toBeGreaterThanOrEqual(500);
    expect(limited.stats().rateLimitWaitMs).toBeGreaterThan(0);
  });
});

describe('sharing work', () => {
  it('a repeated call is answered from the answer cache; concurrent calls share in-flight requests', async () => {
    server.setHandler(
      oracleHandler((_q, p) => [0.9, 0.2, 0.6, 0.4][Number(/(\d+)$/.exec(p.text)?.[1])], { delayMs: 30 }),
    );
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE });
    const [a, b] = await Promise.all([judge.score('q', passages(4)), judge.score('q', passages(4))]);
    expect(server.requests).toHaveLength(4);
    expect(b).toEqual(a);
    expect(judge.stats().answersShared).toBe(4);
    const c = await judge.score('q', passages(4));
    expect(c).toEqual(a);
    expect(server.requests).toHaveLength(4);
    expect(judge.stats().answersFromCache).toBe(4);
    // Another query is another answer.
    await judge.score('another query', passages(1));
    expect(server.requests).toHaveLength(5);
  });

  it('a follower whose leader was cancelled asks itself', async () => {
    server.setHandler(oracleHandler(() => 0.7, { delayMs: 150 }));
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', questions: ONE });
    const controller = new AbortController();
    const leader = judge.score('q', passages(1), { signal: controller.signal });
    await sleep(20);
    const follower = judge.score('q', passages(1));
    await sleep(20);
    controller.abort();
    await expect(leader).rejects.toBeInstanceOf(AbortedError);
    const r = await follower;
    expect(r[0]).toMatchObject({ probabilities: { relevant: expect.closeTo(0.7, 12) } });
    expect(server.requests).toHaveLength(2);
  });
});

describe('several answers per request', () => {
  const oracle = (_q: string, p: { text: string }, instruction: string): number => {
    const i = Number(/(\d+)$/.exec(p.text)?.[1]);
    const q = DEFAULT_QUESTIONS.findIndex((x) => x.instruction === instruction);
    return Math.round(((i * 7 + q * 3) % 10) * 10 + 5) / 100;
  };
  const expected = (i: number) =>
    Object.fromEntries(
      DEFAULT_QUESTIONS.map((q) => [q.name, expect.closeTo(oracle('', { text: `doc text ${i}` }, q.instruction), 12)]),
    );

  it.each([
    { mode: 'one question per request', options: {}, requests: 6 * 4 },
    { mode: 'all questions per request', options: { questionsPerRequest: 'all' as const }, requests: 6 },
    { mode: '3 candidates per request', options: { candidatesPerRequest: 3 }, requests: 2 * 4 },
    {
      mode: 'all questions of 3 candidates per request',
      options: { questionsPerRequest: 'all' as const, candidatesPerRequest: 3 },
      requests: 2,
    },
  ])('$mode: each answer read from its own position', async ({ options, requests }) => {
    server.setHandler(oracleHandler(oracle));
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'm', ...options });
    const r = await judge.score('q', passages(6));
    expect(server.requests).toHaveLength(requests);
    for (let i = 0; i < 6; i++) expect(r[i]).toMatchObject({ probabilities: expected(i) });
    expect(judge.stats().requestsPerPair).toBeCloseTo(requests / 6, 12);
    expect(judge.requestsPerPair).toBeCloseTo(requests / 6, 12);
  });

  it('a response with too few answers fails only the pairs it could not fill', async () => {
    const full = oracleHandler(oracle);
    server.setHandler(async (req) => {
      const reply = await full(req);
      if (reply.kind !== 'answer') return reply;
      return { ...reply, positions: reply.positions.slice(0, reply.positions.length - 1) };
    });
    const judge = createLlmJudge({
      baseURL: server.baseURL,
      model: 'm',
      questionsPerRequest: 'all',
      candidatesPerRequest: 2,
    });
    const r = await judge.score('q', passages(2));
    expect(r[0]).toMatchObject({ probabilities: expected(0) });
    expect(r[1]).toBeNull();
    expect(judge.stats()).toMatchObject({ unreadableAnswers: 1, pairsFailed: 1 });
  });
});
