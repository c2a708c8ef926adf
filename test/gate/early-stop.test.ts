import { describe, expect, it } from 'vitest';
import { createGate, DeadlineExceededError, type GateItem, type GatePolicy, type Scorer } from '../../src/index.js';
import { ids, passages, relevanceScorer, slowScorer } from './helpers.js';

async function collect(iterable: AsyncIterable<GateItem>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of iterable) out.push(item.id);
  return out;
}

describe('rank-order early stopping', () => {
  // Passes (threshold 0.5) at ranks 0,1,2, then 3 and 6, then none.
  const values = [0.9, 0.8, 0.7, 0.6, 0.2, 0.1, 0.55, 0.3, 0.2, 0.1, 0.9, 0.9];

  it('scores in rank-order chunks and stops when the window pass rate drops below minRate', async () => {
    const scorer = relevanceScorer(values);
    const r = await createGate({ scorer, policy: { earlyStop: { window: 4, minRate: 0.5, chunk: 2 } } }).filter(
      'q',
      passages(12),
    );
    // After chunk [0,1]: window not full. [2,3]: 4/4. [4,5]: 2/4. [6,7]: 1/4 < 0.5 → stop.
    expect(scorer.calls.map((c) => c.ids)).toEqual([
      ['p0', 'p1'],
      ['p2', 'p3'],
      ['p4', 'p5'],
      ['p6', 'p7'],
    ]);
    expect(r.stats).toMatchObject({ retrieved: 12, scored: 8, skippedByEarlyStop: 4, unscored: 0, passed: 5 });
    const skipped = r.excluded.filter((i) => i.rule === 'early-stop');
    expect(ids(skipped)).toEqual(['p8', 'p9', 'p10', 'p11']);
    expect(skipped.every((i) => i.signals === null && i.reason === undefined)).toBe(true);
    expect(ids(r.included)).toEqual(['p0', 'p1', 'p2', 'p3', 'p6']);
  });

  it('minRate boundary is strict: a rate equal to minRate continues, straddled by 0.01', async () => {
    // window 4, chunk 4: first chunk [0..3] has 2 passes → rate 0.5.
    const v = [0.9, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1];
    const run = async (minRate: number) =>
      (
        await createGate({
          scorer: relevanceScorer(v),
          policy: { earlyStop: { window: 4, minRate, chunk: 4 } },
        }).filter('q', passages(8))
      ).stats.skippedByEarlyStop;
    expect(await run(0.5)).toBe(0);
    expect(await run(0.49)).toBe(0);
    expect(await run(0.51)).toBe(4);
  });

  it('minRate 0 never stops (chunked scoring only); window larger than k never stops', async () => {
    const a = relevanceScorer(values);
    expect(
      (
        await createGate({ scorer: a, policy: { earlyStop: { window: 2, minRate: 0, chunk: 5 } } }).filter(
          'q',
          passages(12),
        )
      ).stats.skippedByEarlyStop,
    ).toBe(0);
    expect(a.calls).toHaveLength(3);
    const b = relevanceScorer(values.map(() => 0));
    expect(
      (
        await createGate({ scorer: b, policy: { earlyStop: { window: 50, minRate: 1, chunk: 3 } } }).filter(
          'q',
          passages(12),
        )
      ).stats.skippedByEarlyStop,
    ).toBe(0);
  });

  it('a deadline during chunked scoring marks the rest timeout, not early-stop', async () => {
    // Chunk 1 answers at 50 ms, 25 ms inside the 75 ms budget; chunk 2 would answer at 100 ms, 25 ms
    // past it: a margin of 25 ms each way against event-loop stalls on a loaded machine.
    const slow = slowScorer(50);
    const r = await createGate({ scorer: slow, policy: { earlyStop: { window: 2, minRate: 0.5, chunk: 2 } } }).filter(
      'q',
      passages(10),
      { budgetMs: 75 },
    );
    expect(r.stats.skippedByEarlyStop).toBe(0);
    expect(r.stats.scored).toBe(2);
    expect(r.stats.unscoredByReason.timeout).toBe(8);
  });

  it("a chunk that came back 'timeout' ends the call as timeout even before the clock reaches the deadline", async () => {
    // The deadline timer can fire a fraction of a millisecond before now() reaches the deadline, and a
    // scorer may give up at the deadline itself: here the second chunk's scorer gives up while the
    // gate's own deadline (10 s away) has not passed. Its two pairs must not count as failed passes in
    // the window (window 2 would then stop early), and the rest is 'timeout', not 'early-stop'.
    let calls = 0;
    const scorer: Scorer = {
      id: 'gives-up',
      score: async (_q, ps) => {
        calls++;
        if (calls === 2) throw new DeadlineExceededError();
        return ps.map(() => ({ relevant: 0.9 }));
      },
    };
    const r = await createGate({ scorer, policy: { earlyStop: { window: 2, minRate: 0.5, chunk: 2 } } }).filter(
      'q',
      passages(10),
      { budgetMs: 10_000 },
    );
    expect(calls).toBe(2);
    expect(r.stats.skippedByEarlyStop).toBe(0);
    expect(r.stats.scored).toBe(2);
    expect(r.stats.unscoredByReason.timeout).toBe(8);
    expect(r.excluded.filter((i) => i.rule === 'early-stop')).toHaveLength(0);
  });
});

describe('streaming', () => {
  const values = [0.9, 0.2, 0.7, 0.95, 0.1, 0.6, 0.3, 0.8];

  async function compare(policy: GatePolicy) {
    const gate = createGate({ scorer: relevanceScorer(values), policy });
    const filtered = await gate.filter('q', passages(values.length));
    const stream = gate.stream('q', passages(values.length));
    const streamed = await collect(stream);
    const result = await stream.result;
    return { filtered, streamed, result };
  }

  it('yields included items in decision (rank) order, the same set as filter', async () => {
    const { filtered, streamed, result } = await compare({ earlyStop: { window: 3, minRate: 0, chunk: 2 } });
    expect(streamed).toEqual(['p0', 'p2', 'p3', 'p5', 'p7']);
    expect([...streamed].sort()).toEqual(ids(filtered.included).sort());
    expect(ids(result.included)).toEqual(ids(filtered.included));
    expect(result.stats).toEqual({ ...filtered.stats });
  });

  it('yields each chunk as soon as it is decided, before later chunks are scored', async () => {
    let release: () => void = () => undefined;
    const gated = new Promise<void>((r) => (release = r));
    let calls = 0;
    const scorer: Scorer = {
      id: 'gated',
      score: async (_q, ps) => {
        if (calls++ === 1) await gated;
        return ps.map(() => ({ relevant: 0.9 }));
      },
    };
    const stream = createGate({ scorer, policy: { earlyStop: { window: 10, minRate: 0, chunk: 2 } } }).stream(
      'q',
      passages(4),
    );
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.id).toBe('p0');
    expect((await iterator.next()).value?.id).toBe('p1');
    expect(calls).toBe(2); // the second chunk is still blocked
    release();
    expect((await iterator.next()).value?.id).toBe('p2');
    expect((await iterator.next()).value?.id).toBe('p3');
    expect((await iterator.next()).done).toBe(true);
  });

  it('same set as filter under early stop, maxKept, fallback top and fallback none', async () => {
    for (const policy of [
      { earlyStop: { window: 2, minRate: 0.6, chunk: 1 } },
      { maxKept: 2, earlyStop: { window: 3, minRate: 0, chunk: 2 } },
      { threshold: 0.85, minKept: 3, fallback: 'top' as const, earlyStop: { window: 3, minRate: 0, chunk: 3 } },
      { threshold: 0.85, minKept: 3, fallback: 'none' as const },
      { threshold: 0.5, minKept: 2, fallback: 'none' as const, earlyStop: { window: 3, minRate: 0, chunk: 1 } },
    ] satisfies GatePolicy[]) {
      const { filtered, streamed } = await compare(policy);
      expect([...streamed].sort(), JSON.stringify(policy)).toEqual(ids(filtered.included).sort());
    }
  });

  it('with fallback none, nothing is yielded before minKept passes are in hand', async () => {
    const gate = createGate({
      scorer: relevanceScorer(values),
      policy: { threshold: 0.5, minKept: 2, fallback: 'none', earlyStop: { window: 3, minRate: 0, chunk: 1 } },
    });
    const streamed = await collect(gate.stream('q', passages(values.length)));
    expect(streamed).toEqual(['p0', 'p2', 'p3', 'p5', 'p7']);
  });

  it('breaking out of the iteration cancels the remaining chunks; result still settles', async () => {
    const scorer = relevanceScorer(values);
    const stream = createGate({ scorer, policy: { earlyStop: { window: 8, minRate: 0, chunk: 1 } } }).stream(
      'q',
      passages(values.length),
    );
    for await (const item of stream) {
      expect(item.id).toBe('p0');
      break;
    }
    const result = await stream.result;
    expect(scorer.calls.length).toBeLessThan(values.length);
    expect(result.stats.unscoredByReason.aborted).toBeGreaterThan(0);
    expect(result.stats.scored + result.stats.unscored).toBe(values.length);
  });

  it('a scorer failure ends the stream normally with fail-closed pairs in result', async () => {
    const scorer: Scorer = {
      id: 'x',
      score: async () => {
        throw new Error('down');
      },
    };
    const stream = createGate({ scorer }).stream('q', passages(3));
    expect(await collect(stream)).toEqual([]);
    expect((await stream.result).stats.unscoredByReason['scorer-error']).toBe(3);
  });
});
