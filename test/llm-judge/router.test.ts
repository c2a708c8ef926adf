import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createGate,
  createRouter,
  createScoreCache,
  type Passage,
  type Scorer,
  fastPathTier,
} from '../../src/index.js';
import { createLlmJudge, type JudgeQuestion, llmJudgeTier } from '../../src/tiers/llm-judge/index.js';
import { oracleHandler, parsePrompt } from './helpers.js';
import { type StandInServer, startStandInServer } from './stand-in-server.js';

const ONE: JudgeQuestion[] = [{ name: 'relevant', instruction: 'Is the passage about what the query asks?' }];

/** Cheap-tier relevance per passage index, and the judge's (different) answer. */
const FAST = [0.95, 0.52, 0.05, 0.47, 0.9, 0.12];
const JUDGE = [0.97, 0.1, 0.02, 0.85, 0.93, 0.04];

const docs: Passage[] = FAST.map((_, i) => ({ id: `p${i}`, text: `passage number ${i}` }));
const indexOf = (text: string): number => Number(/(\d+)$/.exec(text)?.[1]);

function inlineTier(): Scorer & { pairs: number } {
  const t = {
    id: 'fake-fast-path-v1',
    pairs: 0,
    async score(_q: string, ps: readonly Passage[]) {
      t.pairs += ps.length;
      return ps.map((p) => ({ probabilities: { relevant: FAST[indexOf(p.text)] }, tier: 'fast-path' }));
    },
  };
  return t;
}

let server: StandInServer;
beforeEach(async () => {
  server = await startStandInServer(oracleHandler((_q, p) => JUDGE[indexOf(p.text)], { delayMs: 10 }));
});
afterEach(async () => {
  await server.close();
});

describe('the judge under the router', () => {
  it('llmJudgeTier is a tier createRouter accepts, with a cost model from the judge', () => {
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'judge', questions: ONE, concurrency: 2 });
    const tier = llmJudgeTier(judge);
    expect(tier).toMatchObject({ name: 'llm-judge', quality: 3, cache: true });
    // Before any measurement: expectedLatencyMs (250) per wave of `concurrency` requests.
    expect(tier.estimateMs(2)).toBe(250);
    expect(tier.estimateMs(5)).toBe(750);
    const router = createRouter({ tiers: [fastPathTier(inlineTier()), tier] });
    expect(router.predictMs('llm-judge', 4)).toBe(500);
  });

  it('cascade sends only the pairs nearest the threshold to the judge, as many as the budget fits', async () => {
    const judge = createLlmJudge({
      baseURL: server.baseURL,
      model: 'judge',
      questions: ONE,
      concurrency: 1,
      expectedLatencyMs: 250,
    });
    const router = createRouter({
      tiers: [fastPathTier(inlineTier()), llmJudgeTier(judge)],
      routing: { mode: 'cascade', threshold: 0.5 },
      probeIntervalMs: Number.POSITIVE_INFINITY,
    });
    const gate = createGate({ scorer: router, policy: { threshold: 0.5 } });
    // 0.8 × ~700 ms fits two requests at the prior 250 ms each, one at a time.
    const r = await gate.filter('q', docs, { budgetMs: 700 });
    const judgedTexts = server.requests.map((q) => parsePrompt(q.body).passages[0].text);
    expect(judgedTexts.sort()).toEqual(['passage number 1', 'passage number 3']);
    expect(r.tier.counts).toEqual({ 'llm-judge': 2, 'fast-path': 4 });
    const all = new Map([...r.included, ...r.excluded].map((i) => [i.id, i]));
    // The judge flipped both near-threshold decisions.
    expect(all.get('p1')).toMatchObject({ route: 'excluded', tier: 'llm-judge' });
    expect(all.get('p3')).toMatchObject({ route: 'included', tier: 'llm-judge' });
    expect(all.get('p0')).toMatchObject({ route: 'included', tier: 'fast-path' });
    expect(router.stats().byTier).toEqual({ 'llm-judge': 2, 'fast-path': 4 });
  });

  it('the router cache keeps judge answers under the judge id: a repeat costs no calls', async () => {
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'judge', questions: ONE, answerCache: false });
    const router = createRouter({
      tiers: [fastPathTier(inlineTier()), llmJudgeTier(judge)],
      routing: { mode: 'fixed', fixedTier: 'llm-judge' },
      cache: createScoreCache({ maxBytes: 1 << 20 }),
    });
    const gate = createGate({ scorer: router, policy: { threshold: 0.5 } });
    const a = await gate.filter('q', docs, { budgetMs: 5000 });
    expect(server.requests).toHaveLength(6);
    expect(a.tier.counts).toEqual({ 'llm-judge': 6 });
    const b = await gate.filter('q', docs, { budgetMs: 5000 });
    expect(server.requests).toHaveLength(6);
    expect(b.tier.counts).toEqual({ cache: 6 });
    expect(b.included.map((i) => i.id)).toEqual(a.included.map((i) => i.id));
  });

  it('budget mode over three rungs: the judge when its predicted cost fits, else the cross-encoder', async () => {
    const crossEncoder: Scorer = {
      id: 'fake-ce-v1',
      async score(_q, ps) {
        return ps.map((p) => ({ probabilities: { relevant: FAST[indexOf(p.text)] }, tier: 'cross-encoder' }));
      },
    };
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'judge', questions: ONE, expectedLatencyMs: 250 });
    const router = createRouter({
      tiers: [
        fastPathTier(inlineTier()),
        { name: 'cross-encoder', scorer: crossEncoder, quality: 2, initialMsPerPair: 1 },
        llmJudgeTier(judge),
      ],
      routing: { mode: 'budget' },
      probeIntervalMs: Number.POSITIVE_INFINITY,
    });
    // Six pairs, four at a time at the prior 250 ms: two waves, 500 ms.
    const tight = await router.score('q', docs, { deadline: Date.now() + 300 });
    expect(tight.map((r) => (r as { tier: string }).tier)).toEqual(Array(6).fill('cross-encoder'));
    expect(server.requests).toHaveLength(0);
    const roomy = await router.score('q', docs, { deadline: Date.now() + 1500 });
    expect(roomy.map((r) => (r as { tier: string }).tier)).toEqual(Array(6).fill('llm-judge'));
    expect(server.requests).toHaveLength(6);
  });

  it('when the judge cannot answer by the deadline, the cheaper score answers (degraded)', async () => {
    // The judge would answer after the test's timeout: only the deadline can end the call.
    server.setHandler(oracleHandler((_q, p) => JUDGE[indexOf(p.text)], { delayMs: 600_000 }));
    const judge = createLlmJudge({ baseURL: server.baseURL, model: 'judge', questions: ONE, expectedLatencyMs: 20 });
    const router = createRouter({
      tiers: [fastPathTier(inlineTier()), llmJudgeTier(judge)],
      routing: { mode: 'cascade', threshold: 0.5 },
    });
    const t0 = Date.now();
    const out = await router.score('q', docs, { deadline: t0 + 200 });
    expect(out.every((x) => x !== null && (x as { tier: string }).tier === 'fast-path')).toBe(true);
    expect(router.stats().deadlinePairs).toBeGreaterThan(0);
    for (let i = 0; i < 50 && server.cancelled() < server.requests.length; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(server.cancelled()).toBe(server.requests.length);
  });
});
