import { describe, expect, it } from 'vitest';
import { estimateEntryBytes } from '../../src/cache/entry-size.js';
import type { Passage } from '../../src/types.js';
import { expectedScore, missScorer, newLog, passagesOf, relevanceOf, useCaches } from './helpers.js';

const cache = useCaches();

/** Small deterministic PRNG so failures reproduce. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('L1 byte bound and TTL', () => {
  it('keeps estimated bytes ≤ maxBytes under random concurrent load, counts evictions, never mixes pairs up', async () => {
    const maxBytes = 48 * 1024;
    const c = cache({ maxBytes });
    const random = prng(42);
    const pool: Passage[] = Array.from({ length: 3000 }, (_, i) => ({
      id: `doc-${i}-${'x'.repeat(Math.floor(random() * 40))}`,
      text: `text ${i} ${'lorem '.repeat(Math.floor(random() * 30))}`,
      ...(random() < 0.3 ? { title: `title ${i} ünïcödé` } : {}),
    }));
    const queries = Array.from({ length: 40 }, (_, i) => `query ${i} ${'日本'.repeat(i % 3)}`);
    let maxSeen = 0;
    for (let round = 0; round < 60; round++) {
      const calls = Array.from({ length: 8 }, () => {
        const k = 1 + Math.floor(random() * 30);
        const start = Math.floor(random() * (pool.length - k));
        const passages = pool.slice(start, start + k);
        const query = queries[Math.floor(random() * queries.length)];
        return {
          query,
          passages,
          promise: c.resolve({ scorerId: 'm@1', query, passages }, missScorer(query, passages, newLog())),
        };
      });
      for (const call of calls) {
        const out = await call.promise;
        for (let i = 0; i < call.passages.length; i++)
          expect(relevanceOf(out.results[i])).toBe(expectedScore(call.query, call.passages[i]));
        const s = c.stats();
        expect(s.bytes).toBeLessThanOrEqual(maxBytes);
        maxSeen = Math.max(maxSeen, s.bytes);
      }
    }
    const s = c.stats();
    expect(s.evictions).toBeGreaterThan(100);
    // every stored entry is either still there or was evicted (no TTL here, no replacement)
    expect(s.stores - s.evictions).toBe(s.entries);
    expect(maxSeen).toBeGreaterThan(maxBytes * 0.8);
    expect(s.hits + s.misses).toBeGreaterThan(0);
    c.clear();
    expect(c.stats()).toMatchObject({ bytes: 0, entries: 0 });
  });

  it('estimates entry size from key and value, a key by its UTF-8 bytes', () => {
    const entry = { result: { relevant: 0.5 }, scoredAt: 1 };
    const narrow = estimateEntryBytes('k'.repeat(104), entry);
    const wide = estimateEntryBytes('日'.repeat(104), entry);
    // 日 is three bytes of UTF-8: 208 more bytes, plus the arena's slack on them (an eighth).
    expect(wide - narrow).toBe(234);
    const detailed = estimateEntryBytes('k'.repeat(100), {
      result: {
        probabilities: { relevant: 0.5, answer: 0.1 },
        raw: { relevant: 0.1, answer: -2 },
        tier: 'cross-encoder',
      },
      scoredAt: 1,
    });
    expect(detailed).toBeGreaterThan(narrow);
  });

  it('evicts least recently used first', async () => {
    const c = cache({ maxBytes: 4096 });
    const passages = passagesOf(200);
    const one = async (p: Passage) =>
      (await c.resolve({ scorerId: 'm', query: 'q', passages: [p] }, missScorer('q', [p], newLog()))).cached[0];
    await one(passages[0]);
    for (let i = 1; i < 200; i++) {
      await one(passages[i]);
      expect(await one(passages[0])).toBe(true); // kept warm, never evicted
    }
    expect(c.stats().evictions).toBeGreaterThan(0);
    expect(await one(passages[1])).toBe(false); // cold, evicted long ago
  });

  it('expires entries ttlMs after they were scored (injected clock)', async () => {
    let now = 1_000_000;
    const c = cache({ maxBytes: 1 << 20, ttlMs: 60_000, clock: () => now });
    const passages = passagesOf(3);
    const log = newLog();
    const call = () => c.resolve({ scorerId: 'm', query: 'q', passages }, missScorer('q', passages, log));
    await call();
    now += 59_999;
    expect((await call()).cached).toEqual([true, true, true]);
    now += 1;
    expect((await call()).cached).toEqual([false, false, false]);
    expect(log.calls).toHaveLength(2);
    expect(c.stats()).toMatchObject({ expired: 3, entries: 3 });
    now += 30_000;
    expect((await call()).cached).toEqual([true, true, true]); // rescored at +60s, so still fresh
  });

  it('expires with a real clock too', async () => {
    const c = cache({ maxBytes: 1 << 20, ttlMs: 30 });
    const passages = passagesOf(2);
    const call = () => c.resolve({ scorerId: 'm', query: 'q', passages }, missScorer('q', passages, newLog()));
    await call();
    expect((await call()).cached).toEqual([true, true]);
    await new Promise((r) => setTimeout(r, 45));
    expect((await call()).cached).toEqual([false, false]);
  });
});
