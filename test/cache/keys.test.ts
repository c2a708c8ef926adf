import { describe, expect, it } from 'vitest';
import { createScoreCache, type ScoreCache } from '../../src/cache/score-cache.js';
import type { Passage } from '../../src/types.js';
import { expectedScore, missScorer, newLog, passagesOf, relevanceOf, useCaches } from './helpers.js';

const SCORER = 'minilm-l6@sha256:aaaa/maxlen=256';
const cache = useCaches();

async function run(c: ScoreCache, query: string, passages: readonly Passage[], scorerId = SCORER, salt?: string) {
  const log = newLog();
  const out = await c.resolve({ scorerId, query, passages }, missScorer(query, passages, log, { salt }));
  return { ...out, log };
}

describe('score cache keys', () => {
  it('serves a repeated pair from the cache with the scorer result intact', async () => {
    const c = cache();
    const passages = passagesOf(5);
    const first = await run(c, 'what is a gate', passages);
    expect(first.cached).toEqual([false, false, false, false, false]);
    expect(first.log.scoredPairs()).toBe(5);
    const second = await run(c, 'what is a gate', passages);
    expect(second.cached).toEqual([true, true, true, true, true]);
    expect(second.log.calls).toEqual([]);
    for (let i = 0; i < 5; i++) {
      expect(relevanceOf(second.results[i])).toBe(expectedScore('what is a gate', passages[i]));
      expect(second.results[i]).toEqual({
        probabilities: { relevant: expectedScore('what is a gate', passages[i]) },
        raw: { relevant: 0.5 },
        tier: 'test',
      });
    }
    const s = c.stats();
    expect(s).toMatchObject({ hits: 5, misses: 5, l1Hits: 5, entries: 5 });
  });

  it('misses when a passage text is edited, and only that passage is rescored', async () => {
    const c = cache();
    const passages = passagesOf(4);
    await run(c, 'q', passages);
    const edited = passages.map((p, i) => (i === 2 ? { ...p, text: `${p.text}.` } : p));
    const again = await run(c, 'q', edited);
    expect(again.cached).toEqual([true, true, false, true]);
    expect(again.log.calls).toEqual([['p2']]);
    expect(relevanceOf(again.results[2])).toBe(expectedScore('q', edited[2]));
  });

  it('misses when the same id carries a different text, a new title, or no title vs empty title', async () => {
    const c = cache();
    await run(c, 'q', [{ id: 'a', text: 'one' }]);
    expect((await run(c, 'q', [{ id: 'a', text: 'two' }])).cached).toEqual([false]);
    expect((await run(c, 'q', [{ id: 'a', text: 'one', title: 'T' }])).cached).toEqual([false]);
    expect((await run(c, 'q', [{ id: 'a', text: 'one', title: '' }])).cached).toEqual([false]);
    // title/text boundary cannot be forged by moving characters between them
    await run(c, 'q', [{ id: 'b', title: 'ab', text: 'c' }]);
    expect((await run(c, 'q', [{ id: 'b', title: 'a', text: 'bc' }])).cached).toEqual([false]);
    // and the originals still hit
    expect(
      (
        await run(c, 'q', [
          { id: 'a', text: 'one' },
          { id: 'a2', text: 'x' },
        ])
      ).cached,
    ).toEqual([true, false]);
  });

  it('misses when another passage id has the same text (the id is part of the key)', async () => {
    const c = cache();
    await run(c, 'q', [{ id: 'a', text: 'same' }]);
    expect((await run(c, 'q', [{ id: 'b', text: 'same' }])).cached).toEqual([false]);
  });

  it('misses when caller features change (the fast-path tier reads them)', async () => {
    const c = cache();
    await run(c, 'q', [{ id: 'a', text: 't', features: { bm25: 1.5, rank: 1 } }]);
    expect((await run(c, 'q', [{ id: 'a', text: 't', features: { rank: 1, bm25: 1.5 } }])).cached).toEqual([true]);
    expect((await run(c, 'q', [{ id: 'a', text: 't', features: { bm25: 1.25, rank: 1 } }])).cached).toEqual([false]);
    expect((await run(c, 'q', [{ id: 'a', text: 't' }])).cached).toEqual([false]);
    await run(c, 'q', [{ id: 'v', text: 't', features: new Float32Array([1, 2]) }]);
    expect((await run(c, 'q', [{ id: 'v', text: 't', features: new Float32Array([1, 2]) }])).cached).toEqual([true]);
    expect((await run(c, 'q', [{ id: 'v', text: 't', features: new Float32Array([1, 3]) }])).cached).toEqual([false]);
    expect((await run(c, 'q', [{ id: 'v', text: 't', features: [1, 2] }])).cached).toEqual([false]);
  });

  it('misses for a different scorer id (model version / tier settings)', async () => {
    const c = cache();
    const passages = passagesOf(3);
    await run(c, 'q', passages, 'minilm@v1');
    const v2 = await run(c, 'q', passages, 'minilm@v2', 'v2');
    expect(v2.cached).toEqual([false, false, false]);
    expect(relevanceOf(v2.results[0])).toBe(expectedScore('v2q', passages[0]));
    expect((await run(c, 'q', passages, 'minilm@v1')).cached).toEqual([true, true, true]);
    expect(relevanceOf((await run(c, 'q', passages, 'minilm@v2')).results[0])).toBe(expectedScore('v2q', passages[0]));
  });

  it('normalises queries by default: NFC, trimmed, whitespace collapsed; case kept', async () => {
    const c = cache();
    const passages = passagesOf(2);
    await run(c, 'café  au lait', passages); // NFC é
    expect((await run(c, '  cafe\u0301 au\t\nlait ', passages)).cached).toEqual([true, true]); // NFD é, odd spaces
    expect((await run(c, 'Café au lait', passages)).cached).toEqual([false, false]);
    expect((await run(c, 'café au laits', passages)).cached).toEqual([false, false]);
  });

  it('case-folds when configured, and accepts a custom normaliser', async () => {
    const folded = cache({ maxBytes: 1 << 20, normalizeQuery: { caseFold: true } });
    const passages = passagesOf(2);
    await run(folded, 'Apple Pie', passages);
    expect((await run(folded, 'apple pie', passages)).cached).toEqual([true, true]);
    const custom = cache({ maxBytes: 1 << 20, normalizeQuery: (q) => q.replace(/[?!.]+$/, '') });
    await run(custom, 'why?', passages);
    expect((await run(custom, 'why', passages)).cached).toEqual([true, true]);
    expect((await run(custom, ' why', passages)).cached).toEqual([false, false]);
  });

  it('never caches null or malformed results, and hands cached results out frozen', async () => {
    const c = cache();
    const passages = passagesOf(3);
    const log = newLog();
    const first = await c.resolve(
      { scorerId: SCORER, query: 'q', passages },
      missScorer('q', passages, log, {
        intercept: () => [null, { relevant: Number.NaN }, { relevant: 0.25 }],
      }),
    );
    expect(first.results[0]).toBeNull();
    expect(first.results[2]).toEqual({ relevant: 0.25 });
    const second = await run(c, 'q', passages);
    expect(second.cached).toEqual([false, false, true]);
    expect(second.log.calls).toEqual([['p0', 'p1']]);
    expect(c.stats()).toMatchObject({ nullResults: 1, uncacheable: 1 });
    const hit = (await run(c, 'q', passages)).results[2] as Record<string, number>;
    expect(Object.isFrozen(hit)).toBe(true);
    expect(() => {
      hit.relevance = 1;
    }).toThrow(TypeError);
    expect(relevanceOf((await run(c, 'q', passages)).results[2])).toBe(0.25);
  });

  it('rejects malformed requests with typed errors and scores nothing', async () => {
    const c = cache();
    const log = newLog();
    const scoreMisses = missScorer('q', [], log);
    await expect(c.resolve({ scorerId: '', query: 'q', passages: [] }, scoreMisses)).rejects.toMatchObject({
      code: 'RG_ERR_INVALID_ARGUMENT',
    });
    await expect(
      c.resolve({ scorerId: 's', query: 'q', passages: [{ id: 1, text: 'x' } as unknown as Passage] }, scoreMisses),
    ).rejects.toMatchObject({ code: 'RG_ERR_INVALID_ARGUMENT' });
    await expect(
      c.resolve({ scorerId: 's', query: 'q', passages: [{ id: 'a', text: 'x' }] }, async () => []),
    ).rejects.toMatchObject({ code: 'RG_ERR_SCORE_MISSES_CONTRACT' });
    expect(() => createScoreCache({ maxBytes: 10 })).toThrow(/maxBytes/);
    expect(c.stats().inflight).toBe(0);
    expect(log.calls).toEqual([]);
  });
});
