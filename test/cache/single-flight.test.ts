import { describe, expect, it } from 'vitest';
import { AbortedError } from '../../src/errors.js';
import { expectedScore, missScorer, newLog, passagesOf, relevanceOf, sleep, useCaches } from './helpers.js';

const SCORER = 'ce@v1';
const cache = useCaches();

describe('single-flight', () => {
  it('scores a pair once when two calls miss it concurrently, and both get the same score', async () => {
    const c = cache();
    const passages = passagesOf(6);
    const logA = newLog();
    const logB = newLog();
    // B overlaps A on p2..p5 and adds p6, p7.
    const passagesB = [...passages.slice(2), ...passagesOf(2, 'x')];
    const a = c.resolve({ scorerId: SCORER, query: 'q', passages }, missScorer('q', passages, logA, { delayMs: 30 }));
    const b = c.resolve(
      { scorerId: SCORER, query: 'q', passages: passagesB },
      missScorer('q', passagesB, logB, { delayMs: 5 }),
    );
    const [ra, rb] = await Promise.all([a, b]);
    expect(logA.calls).toEqual([['p0', 'p1', 'p2', 'p3', 'p4', 'p5']]);
    expect(logB.calls).toEqual([['x0', 'x1']]);
    expect(ra.cached).toEqual([false, false, false, false, false, false]);
    expect(rb.cached).toEqual([true, true, true, true, false, false]);
    for (let i = 0; i < passagesB.length; i++)
      expect(relevanceOf(rb.results[i])).toBe(expectedScore('q', passagesB[i]));
    expect(c.stats()).toMatchObject({ inflightShared: 4, misses: 8, hits: 4, inflight: 0 });
  });

  it('shares one scoring among many concurrent identical calls', async () => {
    const c = cache();
    const passages = passagesOf(20);
    const log = newLog();
    const outs = await Promise.all(
      Array.from({ length: 10 }, () =>
        c.resolve({ scorerId: SCORER, query: 'same', passages }, missScorer('same', passages, log, { delayMs: 10 })),
      ),
    );
    expect(log.scoredPairs()).toBe(20);
    expect(outs.filter((o) => o.cached.every((x) => !x))).toHaveLength(1);
    for (const o of outs)
      for (let i = 0; i < 20; i++) expect(relevanceOf(o.results[i])).toBe(expectedScore('same', passages[i]));
  });

  it("a follower re-scores when the leader's scoring throws; the leader's caller gets the error", async () => {
    const c = cache();
    const passages = passagesOf(3);
    const logLeader = newLog();
    const logFollower = newLog();
    const leader = c.resolve(
      { scorerId: SCORER, query: 'q', passages },
      missScorer('q', passages, logLeader, {
        delayMs: 10,
        intercept: () => {
          throw new Error('model crashed');
        },
      }),
    );
    const follower = c.resolve({ scorerId: SCORER, query: 'q', passages }, missScorer('q', passages, logFollower));
    const leaderRejects = expect(leader).rejects.toThrow('model crashed');
    await leaderRejects;
    const out = await follower;
    expect(out.cached).toEqual([false, false, false]);
    expect(logFollower.calls).toEqual([['p0', 'p1', 'p2']]);
    for (let i = 0; i < 3; i++) expect(relevanceOf(out.results[i])).toBe(expectedScore('q', passages[i]));
    expect(c.stats()).toMatchObject({ followerRescores: 3, inflight: 0, entries: 3 });
  });

  it("a follower is not failed by the leader caller's abort", async () => {
    const c = cache();
    const passages = passagesOf(4);
    const controller = new AbortController();
    const leader = c.resolve(
      { scorerId: SCORER, query: 'q', passages },
      missScorer('q', passages, newLog(), { delayMs: 1000 }),
      { signal: controller.signal },
    );
    const logFollower = newLog();
    const follower = c.resolve(
      { scorerId: SCORER, query: 'q', passages },
      missScorer('q', passages, logFollower, { delayMs: 5 }),
    );
    const leaderRejects = expect(leader).rejects.toThrow();
    setTimeout(() => controller.abort(), 10);
    const out = await follower;
    expect(out.results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore('q', p)));
    expect(logFollower.calls).toEqual([['p0', 'p1', 'p2', 'p3']]);
    await leaderRejects;
  });

  it('a follower whose leader got null re-scores the pair (null is never shared)', async () => {
    const c = cache();
    const passages = passagesOf(2);
    const leader = c.resolve(
      { scorerId: SCORER, query: 'q', passages },
      missScorer('q', passages, newLog(), { delayMs: 10, intercept: () => [null, null] }),
    );
    const logFollower = newLog();
    const follower = c.resolve({ scorerId: SCORER, query: 'q', passages }, missScorer('q', passages, logFollower));
    expect((await leader).results).toEqual([null, null]);
    expect((await follower).results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore('q', p)));
    expect(logFollower.calls).toEqual([['p0', 'p1']]);
  });

  it("a follower's own abort rejects it at once with AbortedError, without disturbing the leader", async () => {
    const c = cache();
    const passages = passagesOf(2);
    const logLeader = newLog();
    const leader = c.resolve(
      { scorerId: SCORER, query: 'q', passages },
      missScorer('q', passages, logLeader, { delayMs: 300 }),
    );
    const controller = new AbortController();
    const logFollower = newLog();
    const follower = c.resolve({ scorerId: SCORER, query: 'q', passages }, missScorer('q', passages, logFollower), {
      signal: controller.signal,
    });
    let leaderDone = false;
    void leader.then(() => {
      leaderDone = true;
    });
    setTimeout(() => controller.abort(), 5);
    await expect(follower).rejects.toBeInstanceOf(AbortedError);
    expect(leaderDone).toBe(false); // the follower did not wait for the leader's answer
    expect((await leader).cached).toEqual([false, false]);
    expect(logFollower.calls).toEqual([]);
    expect(c.stats().entries).toBe(2);
  });

  it("a follower scores pairs itself when its deadline comes before the leader's answer", async () => {
    const c = cache();
    const passages = passagesOf(2);
    const leader = c.resolve(
      { scorerId: SCORER, query: 'q', passages },
      missScorer('q', passages, newLog(), { delayMs: 400 }),
    );
    const logFollower = newLog();
    const seen: (number | undefined)[] = [];
    const follower = c.resolve(
      { scorerId: SCORER, query: 'q', passages },
      missScorer('q', passages, logFollower, { intercept: (_ids, o) => void seen.push(o.deadline) }),
      { deadline: Date.now() + 20 },
    );
    let leaderDone = false;
    void leader.then(() => {
      leaderDone = true;
    });
    const out = await follower;
    expect(leaderDone).toBe(false); // answered before the leader, by scoring the pairs itself
    expect(logFollower.calls).toEqual([['p0', 'p1']]);
    expect(seen).toHaveLength(1);
    expect(out.results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore('q', p)));
    await leader;
  });

  it('a passage repeated within one call is scored once', async () => {
    const c = cache();
    const p = { id: 'a', text: 'twice' };
    const log = newLog();
    const out = await c.resolve(
      { scorerId: SCORER, query: 'q', passages: [p, { id: 'b', text: 'other' }, p] },
      missScorer('q', [p, { id: 'b', text: 'other' }, p], log),
    );
    expect(log.calls).toEqual([['a', 'b']]);
    expect(out.results[2]).toEqual(out.results[0]);
    expect(out.results[0]).not.toBeNull();
  });

  it('stops waiting and rejects when aborted before the call', async () => {
    const c = cache();
    const controller = new AbortController();
    controller.abort();
    await expect(
      c.resolve({ scorerId: SCORER, query: 'q', passages: passagesOf(1) }, missScorer('q', passagesOf(1), newLog()), {
        signal: controller.signal,
      }),
    ).rejects.toBeInstanceOf(AbortedError);
  });

  it('cleans up after a leader abort so later calls score again', async () => {
    const c = cache();
    const passages = passagesOf(2);
    const controller = new AbortController();
    const leader = c.resolve(
      { scorerId: SCORER, query: 'q', passages },
      missScorer('q', passages, newLog(), { delayMs: 1000 }),
      { signal: controller.signal },
    );
    await sleep(5);
    controller.abort();
    await expect(leader).rejects.toThrow();
    expect(c.stats().inflight).toBe(0);
    const log = newLog();
    await c.resolve({ scorerId: SCORER, query: 'q', passages }, missScorer('q', passages, log));
    expect(log.calls).toEqual([['p0', 'p1']]);
  });
});
