import { describe, expect, it } from 'vitest';
import { loadCollection } from '../../src/tooling/eval/collection.js';
import type { Gate, GateResult } from '../../src/gate/types.js';
import { MAX_LATE_ANSWERS, runOpenLoopPhase } from '../../src/tooling/loadgen/open-loop.js';
import { lateAnswersLine } from '../../src/tooling/loadgen/bench-command.js';
import { HttpStatusError } from '../../src/tooling/loadgen/errors.js';
import type { BenchPoint } from '../../src/tooling/loadgen/report.js';
import { createRng, ZipfSampler } from '../../src/tooling/loadgen/random.js';
import { buildWorkload, type Workload } from '../../src/tooling/loadgen/workload.js';
import type { Passage } from '../../src/types.js';

describe('Zipf sampler', () => {
  it('draws ranks with frequencies ∝ 1/(r+1)^s', () => {
    const z = new ZipfSampler(10, 1, createRng(7));
    const counts = new Array(10).fill(0);
    const draws = 200_000;
    for (let i = 0; i < draws; i++) counts[z.next()]++;
    const h10 = Array.from({ length: 10 }, (_, r) => 1 / (r + 1)).reduce((a, b) => a + b);
    for (let r = 0; r < 10; r++) {
      expect(z.probability(r)).toBeCloseTo(1 / (r + 1) / h10, 12);
      expect(Math.abs(counts[r] / draws - z.probability(r))).toBeLessThan(0.005);
    }
  });

  it('s = 0 is uniform, and a seed gives the same sequence', () => {
    const z = new ZipfSampler(4, 0, createRng(1));
    for (let r = 0; r < 4; r++) expect(z.probability(r)).toBeCloseTo(0.25, 12);
    const a = new ZipfSampler(100, 1.2, createRng(3));
    const b = new ZipfSampler(100, 1.2, createRng(3));
    expect(Array.from({ length: 50 }, () => a.next())).toEqual(Array.from({ length: 50 }, () => b.next()));
  });
});

describe('workload', () => {
  const med = loadCollection(new URL('../../../shared/data/med', import.meta.url).pathname);

  it('synthesises distinct query variants as pairs of real queries, deterministically, each with its own BM25 top-k', () => {
    const w1 = buildWorkload(med, { k: 10, distinct: 120, seed: 5 });
    const w2 = buildWorkload(med, { k: 10, distinct: 120, seed: 5 });
    expect(w1.queries).toHaveLength(120);
    expect(w1.collectionQueries).toBe(30);
    expect(w1.syntheticQueries).toBe(90);
    expect(new Set(w1.queries.map((q) => q.text)).size).toBe(120);
    expect(w1.queries.map((q) => q.text)).toEqual(w2.queries.map((q) => q.text));
    const originals = new Set(med.queries.map((q) => q.text));
    for (const q of w1.queries) {
      expect(q.passages.length).toBeGreaterThan(0);
      expect(q.passages.length).toBeLessThanOrEqual(10);
      if (q.synthetic) {
        expect(originals.has(q.text)).toBe(false);
        // "<query a> <query b>" of two collection queries
        expect(
          [...originals].some((o) => q.text.startsWith(`${o} `) && originals.has(q.text.slice(o.length + 1))),
        ).toBe(true);
      } else expect(originals.has(q.text)).toBe(true);
    }
  });

  it('restart() replays the same draw sequence; Zipf concentrates draws on few queries', () => {
    const w = buildWorkload(med, { k: 5, distinct: 200, zipf: 1.0, seed: 2 });
    const first = Array.from({ length: 30 }, () => w.next().text);
    w.restart();
    expect(Array.from({ length: 30 }, () => w.next().text)).toEqual(first);
    const counts = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const t = w.next().text;
      counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    const top = Math.max(...counts.values()) / 20_000;
    // Zipf(1) over 200: rank 1 has 1/H(200) ≈ 17 % of draws.
    expect(top).toBeGreaterThan(0.15);
    expect(top).toBeLessThan(0.2);
  });
});

function fakeWorkload(): Workload {
  const q = { text: 'q', passages: [{ id: 'a', text: 'x' }] as Passage[], synthetic: false };
  return {
    queries: [q],
    collectionQueries: 1,
    syntheticQueries: 0,
    k: 1,
    zipf: undefined,
    meanPassages: 1,
    next: () => q,
    restart: () => undefined,
  };
}

/** One second of 100 requests/s against `gate`, 100 ms budgets, the 2 ms bound. */
function oneSecondAt100Qps(gate: Gate, seed: number) {
  return runOpenLoopPhase({
    gate,
    workload: fakeWorkload(),
    qps: 100,
    durationSec: 1,
    warmupSec: 0,
    budgetMs: 100,
    lateBoundMs: 2,
    seed,
  });
}

function instantGate(stallFirstMs: number): Gate & { calls: number } {
  let calls = 0;
  const result = (): GateResult => ({
    query: 'q',
    queryClass: undefined,
    included: [],
    conflicting: [],
    excluded: [],
    stats: { retrieved: 1, unscored: 0, unscoredByReason: {} } as GateResult['stats'],
    tier: { scorer: 'x', name: 'fast-path', counts: { 'fast-path': 1 } },
    timings: { scoringMs: 0, totalMs: 0 },
    errors: [],
  });
  return {
    get calls() {
      return calls;
    },
    scorer: { id: 'x', score: async () => [] },
    mode: 'threshold',
    operatingPoint: undefined,
    async filter() {
      calls++;
      if (calls === 20) {
        // Block the event loop: requests scheduled meanwhile are sent late.
        const until = performance.now() + stallFirstMs;
        while (performance.now() < until) {
          /* busy */
        }
      }
      return result() as never;
    },
    stream: () => {
      throw new Error('unused');
    },
    reroute: () => {
      throw new Error('unused');
    },
  } as Gate & { calls: number };
}

describe('open-loop generator', () => {
  it('measures latency from the scheduled send time (coordinated omission): a stall shows up in the latencies', async () => {
    const gate = instantGate(120);
    const r = await runOpenLoopPhase({
      gate,
      workload: fakeWorkload(),
      qps: 200,
      durationSec: 1,
      warmupSec: 0,
      budgetMs: undefined,
      seed: 1,
    });
    // ~200 requests offered in 1 s (Poisson), all answered instantly by the fake gate...
    expect(r.requests).toBeGreaterThan(140);
    expect(r.requests).toBeLessThan(260);
    expect(r.errors).toBe(0);
    expect(r.pairsByTier).toEqual({ 'fast-path': r.requests });
    // ...yet the ~24 requests scheduled during the 120 ms stall waited for it, and that is measured.
    expect(r.scheduleLagMs.max).toBeGreaterThan(90);
    expect(r.latencyMs.max).toBeGreaterThan(90);
    expect(r.latencyMs.p90).toBeGreaterThan(r.latencyMs.p50);
  });
});

describe('open-loop generator: the deadline bound and unscored requests', () => {
  it('counts requests answered beyond budget + bound, after the deadline, and with every pair unscored', async () => {
    let calls = 0;
    let delayed = 0;
    let unscoredCalls = 0;
    const result = (unscored: number): GateResult =>
      ({
        query: 'q',
        queryClass: undefined,
        included: [],
        conflicting: [],
        excluded: [],
        stats: { retrieved: 1, unscored, unscoredByReason: unscored > 0 ? { timeout: 1 } : {} },
        tier: { scorer: 'x', name: 'fast-path', counts: unscored > 0 ? {} : { 'fast-path': 1 } },
        timings: { scoringMs: 0, totalMs: 0 },
        errors: [],
      }) as unknown as GateResult;
    const gate = {
      scorer: { id: 'x', score: async () => [] },
      async filter() {
        calls++;
        const n = calls;
        if (n % 7 === 0) {
          unscoredCalls++;
          return result(1);
        }
        if (n % 5 === 0) {
          delayed++;
          await new Promise((r) => setTimeout(r, 400)); // far beyond the 250 ms budget
        }
        return result(0);
      },
    } as unknown as Gate;
    const r = await runOpenLoopPhase({
      gate,
      workload: fakeWorkload(),
      qps: 100,
      durationSec: 1,
      warmupSec: 0,
      budgetMs: 250,
      lateBoundMs: 2,
      timelineBucketSec: 0.5,
      seed: 3,
    });
    expect(r.requests).toBe(calls);
    expect(delayed).toBeGreaterThan(5);
    expect(r.lateBoundMs).toBe(2);
    expect(r.lateBeyondBound).toBe(delayed);
    expect(r.afterDeadline).toBe(delayed);
    expect(r.lateServerOnTime).toBeNull(); // the target reports no time of its own
    expect(r.allUnscored).toBe(unscoredCalls);
    expect(r.withUnscoredPairs).toBe(unscoredCalls);
    // Buckets of half a second: their counts add up to the totals.
    expect(r.timeline.length).toBeGreaterThanOrEqual(2);
    expect(r.timeline.reduce((s, b) => s + b.late, 0)).toBe(delayed);
    expect(r.timeline.reduce((s, b) => s + b.allUnscored, 0)).toBe(unscoredCalls);
    expect(r.latencyMs.p9999).toBeGreaterThanOrEqual(r.latencyMs.p999);
    expect(r.latencyMs.max).toBeGreaterThan(390);
  });

  it("splits the late answers by the target's own timing: answered in time by the server, late on the way back", async () => {
    let calls = 0;
    let lateOnTheWay = 0;
    const result = (serverMs: number) => ({
      tier: { scorer: 'x', name: 'http', counts: { 'fast-path': 1 } },
      stats: { retrieved: 1, unscored: 0, unscoredByReason: {} },
      errors: [],
      status: 200,
      serverMs,
      ...(serverMs > 100 ? { degraded: { deadline: 1 } } : {}),
    });
    const gate = {
      async filter() {
        calls++;
        if (calls % 4 !== 0) return result(5);
        await new Promise((r) => setTimeout(r, 300)); // beyond the 100 ms budget either way
        if (calls % 8 === 0) {
          lateOnTheWay++;
          return result(20); // the server says it answered in 20 ms
        }
        return result(300);
      },
    } as unknown as Gate;
    const r = await oneSecondAt100Qps(gate, 5);
    expect(lateOnTheWay).toBeGreaterThan(0);
    expect(r.lateBeyondBound).toBe(Math.floor(calls / 4));
    expect(r.thrown).toBe(0);
    expect(r.lateServerOnTime).toBe(lateOnTheWay);
    // Per bucket too: the buckets' counts add up to the phase's.
    expect(r.timeline.reduce((s, b) => s + b.lateServerOnTime, 0)).toBe(lateOnTheWay);
    // Each late answer is kept for reading: its server time, which side was late, its labels.
    expect(r.lateAnswers).toHaveLength(r.lateBeyondBound);
    expect(r.lateAnswers.filter((a) => a.serverOnTime === true)).toHaveLength(lateOnTheWay);
    for (const a of r.lateAnswers) {
      expect(a.latencyMs).toBeGreaterThan(102);
      expect(a.serverOnTime).toBe(a.serverMs === 20);
      expect(a.degraded).toEqual(a.serverMs === 300 ? { deadline: 1 } : undefined);
      expect(a.pairsByTier).toEqual({ 'fast-path': 1 });
      expect(r.timeline[a.second]!.late).toBeGreaterThan(0);
    }
    const line = lateAnswersLine({ ...r, routing: 'http:gate', lateAnswers: r.lateAnswers } as unknown as BenchPoint);
    const serverLate = r.lateBeyondBound - lateOnTheWay;
    expect(line).toContain(
      `the first ${r.lateBeyondBound} of ${r.lateBeyondBound}): HTTP 200 × ${r.lateBeyondBound}; ${serverLate} late and ${lateOnTheWay} on time`,
    );
    expect(line).toContain(`${serverLate} with degraded pairs (deadline ${serverLate})`);
  });

  it('keeps what a late refusal said: its message, the server time and the write lag it came with', async () => {
    let calls = 0;
    const gate = {
      async filter() {
        calls++;
        if (calls % 2 === 0) {
          const n = calls;
          await new Promise((r) => setTimeout(r, 120));
          const text = `{"message":"overloaded: the request waited ${100 + n} ms, past its 100 ms budget"}`;
          throw new HttpStatusError(429, text, { serverMs: 0.2, writeMs: 0.1 });
        }
        return {
          tier: { scorer: 'x', name: 'http', counts: { 'fast-path': 1 } },
          stats: { retrieved: 1, unscored: 0, unscoredByReason: {} },
          errors: [],
          status: 200,
        };
      },
    } as unknown as Gate;
    const r = await oneSecondAt100Qps(gate, 3);
    expect(r.refused).toBeGreaterThan(10);
    expect(r.lateBeyondBound).toBe(r.refused); // every refusal came after 120 ms (late), every answer at once
    expect(r.thrown).toBe(0);
    for (const a of r.lateAnswers) {
      expect(a.status).toBe(429);
      expect(a.serverMs).toBe(0.2);
      expect(a.serverOnTime).toBe(true);
      expect(a.writeMs).toBe(0.1);
      expect(a.message).toMatch(/^HTTP 429: .*overloaded: the request waited \d+ ms, past its 100 ms budget/);
    }
    const line = lateAnswersLine({ ...r, routing: 'http:gate', lateAnswers: r.lateAnswers } as unknown as BenchPoint);
    expect(line).toContain(`HTTP 429 × ${r.refused}; 0 late and ${r.refused} on time by the target's own time`);
    expect(line).toContain('write lag max 0 ms');
    // One kind of refusal, its numbers blanked, counted once per answer.
    expect(line).toContain(
      `refused or failed: ${r.refused} × "HTTP N: {"message":"overloaded: the request waited N ms, past its N ms budget"}"`,
    );
  });

  it("names a stall of the generator's own process: the late requests' bucket shows the send lag", async () => {
    // The generator's event loop blocks 150 ms in the 20th call: requests due meanwhile go out late.
    const gate = instantGate(150);
    const r = await runOpenLoopPhase({
      gate,
      workload: fakeWorkload(),
      qps: 100,
      durationSec: 1,
      warmupSec: 0,
      budgetMs: 50,
      lateBoundMs: 2,
      timelineBucketSec: 0.25,
      seed: 9,
    });
    expect(gate.calls).toBeGreaterThan(20);
    // The answers were instant: the late requests are the ones the stall held back (before sending
    // them, or before reading an answer that had come).
    expect(r.lateBeyondBound).toBeGreaterThan(0);
    const stalled = r.timeline.filter((b) => b.late > 0);
    for (const b of stalled) expect(b.maxSendLagMs).toBeGreaterThan(50);
    expect(Math.max(...r.timeline.map((b) => b.maxSendLagMs))).toBeGreaterThanOrEqual(100);
    // Each late answer carries its send lag: most were sent late; one sent just before the stall
    // was answered at once but read after it (the stall's receive side).
    expect(r.lateAnswers.length).toBe(Math.min(r.lateBeyondBound, MAX_LATE_ANSWERS));
    expect(r.lateAnswers.filter((a) => a.sendLagMs > 50).length).toBeGreaterThan(r.lateAnswers.length / 2);
    for (const a of r.lateAnswers) {
      expect(a.latencyMs).toBeGreaterThan(52);
      expect(a.latencyMs).toBeGreaterThanOrEqual(a.sendLagMs);
      expect(a.serverMs).toBeUndefined();
    }
  });

  it('without a budget nothing is late and the bound is null', async () => {
    const r = await runOpenLoopPhase({
      gate: instantGate(0),
      workload: fakeWorkload(),
      qps: 50,
      durationSec: 0.3,
      warmupSec: 0,
      budgetMs: undefined,
      seed: 1,
    });
    expect(r.lateBoundMs).toBeNull();
    expect(r.lateBeyondBound).toBe(0);
    expect(r.afterDeadline).toBe(0);
  });
});
