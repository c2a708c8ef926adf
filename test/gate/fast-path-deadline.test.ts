import { afterEach, describe, expect, it, vi } from 'vitest';
import { AbortedError, InvalidArgumentError } from '../../src/errors.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import { createGate } from '../../src/gate/gate.js';
import { loadFastPathScorer } from '../../src/tiers/fast-path/fast-path-scorer.js';
import type { DetailedPairScore, Passage } from '../../src/types.js';

const WORDS = ['swept', 'wing', 'boundary', 'layer', 'turbulent', 'leading', 'edge', 'flow', 'pressure', 'heat'];
function passages(k: number, words = 30): Passage[] {
  return Array.from({ length: k }, (_, i) => ({
    id: `p${i}`,
    title: i % 3 === 0 ? `study ${i} of ${WORDS[i % WORDS.length]}` : undefined,
    text: Array.from({ length: words }, (_, j) => WORDS[(i * 7 + j * 3) % WORDS.length]).join(' '),
  }));
}
const relevance = (r: unknown): number | null => (r === null ? null : (r as DetailedPairScore).probabilities.relevant);
const QUERY = 'swept wing boundary layer transition';

describe('fast path: long synchronous work is cut into slices that yield and check the deadline', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a pair scores exactly the same in a slice as in one pass', async () => {
    const whole = await loadFastPathScorer();
    const sliced = await loadFastPathScorer(undefined, { sliceChars: 300 });
    const ps = passages(20);
    const a = (await whole.score(QUERY, ps)).map(relevance);
    const b = (await sliced.score(QUERY, ps)).map(relevance);
    expect(b.every((x) => x !== null)).toBe(true);
    expect(b).toEqual(a);
  });

  it('between slices the event loop runs (timers and other requests are not held up)', async () => {
    const sliced = await loadFastPathScorer(undefined, { sliceChars: 300 });
    const whole = await loadFastPathScorer();
    const ps = passages(20);
    const ranBeforeAnswer = async (scorer: typeof sliced): Promise<boolean> => {
      let ran = false;
      setImmediate(() => {
        ran = true;
      });
      await scorer.score(QUERY, ps);
      return ran;
    };
    expect(await ranBeforeAnswer(sliced)).toBe(true);
    // One slice (the ordinary request) answers within the same turn: no yield, no added latency.
    expect(await ranBeforeAnswer(whole)).toBe(false);
  });

  it('pairs of slices not started by the deadline come back null; the gate marks them timeout', async () => {
    const scorer = await loadFastPathScorer(undefined, { sliceChars: 300 });
    let now = 1_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    // Time passes the deadline at the first yield, after the first slice.
    setImmediate(() => {
      now += 1000;
    });
    const ps = passages(20);
    const out = await scorer.score(QUERY, ps, { deadline: now + 500 });
    const scored = out.filter((r) => r !== null).length;
    expect(scored).toBeGreaterThan(0);
    expect(scored).toBeLessThan(ps.length);
    // The scored ones are the first slice, with their true scores.
    const truth = (await scorer.score(QUERY, ps)).map(relevance);
    out.forEach((r, i) => {
      if (r !== null) expect(relevance(r)).toBe(truth[i]);
    });

    const gate = createGate({ scorer, clock: () => Date.now() });
    setImmediate(() => {
      now += 1000;
    });
    const result = await gate.filter(QUERY, ps, { deadline: now + 500 });
    expect(result.stats.unscored).toBeGreaterThan(0);
    expect(result.stats.unscored).toBeLessThan(ps.length);
    expect(Object.keys(result.stats.unscoredByReason)).toEqual(['timeout']);
  });

  it('an abort between slices rejects the call with AbortedError', async () => {
    const scorer = await loadFastPathScorer(undefined, { sliceChars: 300 });
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    await expect(scorer.score(QUERY, passages(20), { signal: controller.signal })).rejects.toThrow(AbortedError);
  });

  it('a malformed passage is still refused with the typed error, and sliceChars is validated', async () => {
    const scorer = await loadFastPathScorer(undefined, { sliceChars: 300 });
    const bad = [...passages(20), { id: 'x', text: 42 } as unknown as Passage];
    await expect(scorer.score(QUERY, bad)).rejects.toThrow(InvalidArgumentError);
    await expect(loadFastPathScorer(undefined, { sliceChars: 0 })).rejects.toThrow(InvalidArgumentError);
  });

  it('the scorer is warmed up at load: a small batch, then a request large enough to be sliced and cut', async () => {
    const spy = vi.spyOn(LexicalFeaturizer.prototype, 'featurizeAsync');
    const scorer = await loadFastPathScorer();
    expect(spy.mock.calls.length).toBeGreaterThan(1);
    expect(spy.mock.calls[0][1].length).toBeGreaterThan(0);
    // The later calls are slices of one request over sliceChars, one passage over maxPassageChars.
    const sliced = spy.mock.calls.slice(1).flatMap((call) => call[1] as Passage[]);
    expect(sliced.some((p) => p.text.length > 65_536)).toBe(true);
    expect(await scorer.warmUp()).toBeGreaterThanOrEqual(0);
  });

  it('a slice that would end past the deadline is not started, and one slow slice does not stop later calls', async () => {
    const scorer = await loadFastPathScorer(undefined, { sliceChars: 300 });
    const ps = passages(20);
    // Every slice seen as taking a second: the estimate says no later slice fits a 500 ms deadline.
    const realNow = performance.now.bind(performance);
    let skew = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => {
      skew += 1000;
      return realNow() + skew;
    });
    await scorer.score(QUERY, ps, { deadline: Date.now() + 3_600_000 });
    vi.restoreAllMocks();
    const first = await scorer.score(QUERY, ps, { deadline: Date.now() + 500 });
    expect(first[0]).not.toBeNull(); // the first slice always runs while time is left
    expect(first.some((r) => r === null)).toBe(true);
    // Each skip halves the estimate: a few calls later every slice fits again.
    let all = false;
    for (let i = 0; i < 30 && !all; i++)
      all = (await scorer.score(QUERY, ps, { deadline: Date.now() + 500 })).every((r) => r !== null);
    expect(all).toBe(true);
  });
});
