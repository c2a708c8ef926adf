import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { entryBytes, readChars } from '../../src/cache/l1-shard.js';
import { L1Store, MAX_SHARDS, SHARD_TARGET_BYTES, shardCountFor } from '../../src/cache/l1-store.js';
import { pairKey, scopeHash } from '../../src/cache/keys.js';
import { expectedScore, missScorer, newLog, passagesOf, relevanceOf, useCaches } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-l1-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cache = useCaches();

describe('L1 shards', () => {
  it('uses one shard (exact LRU) for small caches and powers of two up to MAX_SHARDS for large ones', () => {
    expect(shardCountFor(4096)).toBe(1);
    expect(shardCountFor(SHARD_TARGET_BYTES)).toBe(1);
    expect(shardCountFor(SHARD_TARGET_BYTES + 1)).toBe(2);
    expect(shardCountFor(256 * 1024 * 1024)).toBe(128);
    expect(shardCountFor(64 * 1024 ** 3)).toBe(MAX_SHARDS);
  });

  it('spreads pair keys of one query evenly, so no Map grows far past its share', () => {
    const store = new L1Store({ maxBytes: 256 * 1024 * 1024, onEvict: () => {} });
    const scope = scopeHash('m@1', 'one popular query', 'k2|t');
    const n = 100_000;
    for (let i = 0; i < n; i++) store.set(pairKey(scope, { id: `d${i}`, text: `passage ${i}` }), `v${i}`);
    expect(store.size).toBe(n);
    const mean = n / store.shardCount;
    // Uniform hashing: the fullest of 128 shards sits within a few standard deviations of the mean.
    expect(store.largestShardSize).toBeLessThan(mean * 1.25);
    for (let i = 0; i < n; i += 997)
      expect(store.read(pairKey(scope, { id: `d${i}`, text: `passage ${i}` }), true, readChars)).toBe(`v${i}`);
  });

  it('keeps estimated bytes ≤ maxBytes across shards and counts evictions once each', () => {
    let evictions = 0;
    const maxBytes = 8 * SHARD_TARGET_BYTES;
    const store = new L1Store({ maxBytes, onEvict: () => evictions++ });
    expect(store.shardCount).toBe(8);
    const scope = scopeHash('m@1', 'q', 'k2|t');
    const n = 40_000; // 40 MB of entries into a 16 MiB bound
    const value = (i: number) => `${i}`.padEnd(820, '.');
    const key = (i: number) => pairKey(scope, { id: `d${String(i).padStart(5, '0')}`, text: `t${i}` });
    const each = entryBytes(key(0), value(0));
    expect(each).toBeGreaterThan(1000);
    for (let i = 0; i < n; i++) store.set(key(i), value(i));
    expect(store.bytes).toBeLessThanOrEqual(maxBytes);
    expect(store.size + evictions).toBe(n);
    expect(store.size).toBeGreaterThan(0.95 * (maxBytes / each));
    // The newest entries are all there, each with its own value.
    for (let i = n - 100; i < n; i++) expect(store.read(key(i), false, readChars)).toBe(value(i));
  });

  it('a multi-shard cache serves every stored pair with its own score and round-trips through a snapshot, newest first', async () => {
    const maxBytes = 16 * SHARD_TARGET_BYTES;
    const source = cache({ maxBytes });
    const queries = Array.from({ length: 40 }, (_, i) => `query ${i}`);
    const passages = passagesOf(250);
    for (const query of queries)
      await source.resolve({ scorerId: 'm@1', query, passages }, missScorer(query, passages, newLog()));
    expect(source.stats().entries).toBe(10_000);
    expect(source.stats().evictions).toBe(0);
    for (const query of queries.slice(0, 3)) {
      const log = newLog();
      const out = await source.resolve({ scorerId: 'm@1', query, passages }, missScorer(query, passages, log));
      expect(log.calls).toEqual([]);
      expect(out.results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore(query, p)));
    }
    const path = join(dir, 'sharded.snap');
    expect((await source.snapshot(path)).entries).toBe(10_000);

    // A target with room for about half: what it loads is the most recently used half, never evicting.
    const target = cache({ maxBytes: Math.floor(source.stats().bytes / 2) });
    const report = await target.warmStart(path);
    expect(report.loaded + report.skippedOverBudget).toBe(10_000);
    expect(report.loaded).toBeGreaterThan(4000);
    expect(target.stats().evictions).toBe(0);
    expect(target.stats().bytes).toBeLessThanOrEqual(target.stats().maxBytes);
    // Most recently used: the three queries read again above, then the last ones filled.
    for (const query of [...queries.slice(0, 3), ...queries.slice(-3)]) {
      const log = newLog();
      const out = await target.resolve({ scorerId: 'm@1', query, passages }, missScorer(query, passages, log));
      expect(log.calls).toEqual([]);
      expect(out.results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore(query, p)));
    }
    // The oldest fills did not make it.
    const log = newLog();
    await target.resolve({ scorerId: 'm@1', query: queries[3], passages }, missScorer(queries[3], passages, log));
    expect(log.scoredPairs()).toBeGreaterThan(200);
  });
});
