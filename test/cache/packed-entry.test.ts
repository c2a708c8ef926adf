import { describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { EntryPolicy } from '../../src/cache/entry-policy.js';
import { L1Cache } from '../../src/cache/l1-cache.js';
import { readChars } from '../../src/cache/l1-shard.js';
import { MAX_PACKED_VALUES, MAX_SHAPES, packEntry, unpackEntry } from '../../src/cache/packed-entry.js';
import { zeroCacheCounters } from '../../src/cache/stats.js';

const roundTrip = (entry: CacheEntry): CacheEntry => unpackEntry(packEntry(entry));

describe('packed L1 entries', () => {
  it('give back every signal, raw value, tier and time exactly, as one string', () => {
    const entries: CacheEntry[] = [
      { result: { relevant: 0.5948669214322747 }, scoredAt: 1_796_620_251_953 },
      {
        result: {
          probabilities: { relevant: 0.1 + 0.2, ranking: 5e-324 },
          raw: { relevant: -3.1172845363616943, ranking: 1.7976931348623157e308 },
          tier: 'fast-path',
        },
        scoredAt: 1_796_620_251_953.25,
      },
      { result: { probabilities: { relevant: 1, evidence: 0 } }, scoredAt: 0 },
      { result: { probabilities: { relevant: 0 }, raw: { relevant: -0 }, tier: 'a|b' }, scoredAt: 7 },
      { result: { '1': 0.25, '0': 0.75, relevant: 0.5 }, scoredAt: 3 },
    ];
    for (const entry of entries) {
      const packed = packEntry(entry);
      expect(typeof packed).toBe('string');
      const back = unpackEntry(packed);
      expect(back).toEqual(entry);
      expect(Object.keys(back.result)).toEqual(Object.keys(entry.result));
    }
    const zero = roundTrip(entries[3] as CacheEntry).result as unknown as { raw: { relevant: number } };
    expect(Object.is(zero.raw.relevant, -0)).toBe(true);
  });

  it('are what the L1 stores: the packed form per entry, read back equal, expiring by scoredAt', () => {
    const counters = zeroCacheCounters();
    const l1 = new L1Cache(1 << 20, new EntryPolicy(1000, 0, []), counters);
    const entry: CacheEntry = {
      result: { probabilities: { relevant: 0.75 }, raw: { relevant: 1.25 }, tier: 'fast-path' },
      scoredAt: 5000,
    };
    l1.set('key', entry);
    expect(l1.store.read('key', false, readChars)).toBe(packEntry(entry));
    expect(l1.get('key', 5999)).toEqual(entry);
    expect(l1.peek('key')).toEqual(entry);
    expect(l1.get('key', 6000)).toBeUndefined();
    expect(counters.expired).toBe(1);
    expect(l1.entries).toBe(0);
  });

  it('hand every reader its own frozen result, so no caller can change what another reads', () => {
    const packed = packEntry({
      result: { probabilities: { relevant: 0.9 }, raw: { relevant: 2.2 }, tier: 'cross-encoder' },
      scoredAt: 1,
    });
    const a = unpackEntry(packed).result as { probabilities: Record<string, number>; raw: Record<string, number> };
    const b = unpackEntry(packed).result as { probabilities: Record<string, number>; raw: Record<string, number> };
    expect(a).not.toBe(b);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.probabilities)).toBe(true);
    expect(Object.isFrozen(a.raw)).toBe(true);
    expect(() => {
      a.probabilities.relevant = 0;
    }).toThrow(TypeError);
    expect(b.probabilities.relevant).toBe(0.9);
  });

  it('keeps a result with more values than it packs as JSON, exact, without interning its shape', () => {
    for (const n of [MAX_PACKED_VALUES, MAX_PACKED_VALUES + 1, 200_000]) {
      const probabilities: Record<string, number> = {};
      for (let i = 0; i < n; i++) probabilities[`s${i}`] = i / n;
      const entry: CacheEntry = { result: { probabilities, tier: 'wide' }, scoredAt: 11 };
      const packed = packEntry(entry);
      // At the bound it packs as doubles (8 bytes each, after the shape and time); past it, JSON.
      expect(packed.startsWith('[')).toBe(n > MAX_PACKED_VALUES);
      if (n === MAX_PACKED_VALUES) expect(packed.length).toBe(8 * (n + 2));
      expect(unpackEntry(packed)).toEqual(entry);
    }
  });

  it('keeps results of shapes past the interned table as JSON, still exact', () => {
    let last = '';
    for (let i = 0; i <= MAX_SHAPES; i++) {
      const entry: CacheEntry = { result: { [`signal-${i}`]: i / (MAX_SHAPES + 1) }, scoredAt: i };
      last = packEntry(entry);
      expect(unpackEntry(last)).toEqual(entry);
    }
    expect(last.startsWith('[')).toBe(true);
    const detailed: CacheEntry = {
      result: { probabilities: { fresh: 0.125 }, raw: { fresh: -1.5 }, tier: 'x' },
      scoredAt: 9,
    };
    const back = roundTrip(detailed).result as { probabilities: object; raw: object };
    expect(back).toEqual(detailed.result);
    expect(Object.isFrozen(back)).toBe(true);
    expect(Object.isFrozen(back.probabilities)).toBe(true);
    expect(Object.isFrozen(back.raw)).toBe(true);
  });
});
