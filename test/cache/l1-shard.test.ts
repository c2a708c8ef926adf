/**
 * The off-heap L1 shard against a reference LRU (a Map in recency order, the same byte bound):
 * random operations over keys and values of every width, long values, replacements, deletes and
 * clears; evictions counted once each and in LRU order; the arena compacted many times over.
 */
import { describe, expect, it } from 'vitest';
import { ENTRY_OVERHEAD_BYTES, entryBytes, L1Shard, readChars } from '../../src/cache/l1-shard.js';

/** The behaviour the shard must have: a recency-ordered Map bounded by entryBytes. */
class ReferenceLru {
  readonly map = new Map<string, string>();
  bytes = 0;
  evictions = 0;
  constructor(private readonly maxBytes: number) {}
  get(key: string): string | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: string, value: string): void {
    this.delete(key);
    const size = entryBytes(key, value);
    if (size > this.maxBytes) return;
    while (this.bytes + size > this.maxBytes) {
      const [oldest] = this.map.keys();
      this.delete(oldest);
      this.evictions++;
    }
    this.map.set(key, value);
    this.bytes += size;
  }
  delete(key: string): boolean {
    const value = this.map.get(key);
    if (value === undefined) return false;
    this.map.delete(key);
    this.bytes -= entryBytes(key, value);
    return true;
  }
}

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABETS = ['abcdef0123456789', 'é\u00ff\u0080x', '日本語\u0100z', '\ud83d\ude00\u0000q'];

function text(next: () => number, maxLength: number): string {
  const alphabet = ALPHABETS[Math.floor(next() * ALPHABETS.length)];
  const length = Math.floor(next() * maxLength);
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[Math.floor(next() * alphabet.length)];
  return s;
}

describe('L1Shard', () => {
  it('matches a reference LRU over 60,000 random operations (every width, compactions, evictions)', () => {
    const maxBytes = 24 * 1024;
    let evictions = 0;
    const shard = new L1Shard(maxBytes, () => evictions++);
    const reference = new ReferenceLru(maxBytes);
    const next = random(7);
    const keys = Array.from({ length: 400 }, (_, i) => `${i}:${text(next, 12)}`);
    for (let op = 0; op < 60_000; op++) {
      const key = keys[Math.floor(next() * keys.length)];
      const roll = next();
      if (roll < 0.45) {
        const value = text(next, roll < 0.01 ? 4000 : 120);
        shard.set(key, value);
        reference.set(key, value);
      } else if (roll < 0.85) expect(shard.get(key)).toBe(reference.get(key));
      else if (roll < 0.95) expect(shard.peek(key)).toBe(reference.map.get(key));
      else if (roll < 0.9995) expect(shard.delete(key)).toBe(reference.delete(key));
      else {
        shard.clear();
        reference.map.clear();
        reference.bytes = 0;
      }
      if (op % 1000 === 0) {
        expect(shard.size).toBe(reference.map.size);
        expect(shard.bytes).toBe(reference.bytes);
        expect([...shard.entriesOldestFirst(readChars)]).toEqual([...reference.map.entries()]);
      }
    }
    expect(evictions).toBe(reference.evictions);
    expect(evictions).toBeGreaterThan(1000);
    expect(shard.bytes).toBeLessThanOrEqual(maxBytes);
  });

  it('keeps keys that differ only past Latin-1 or in lone surrogates apart, and values beyond one decoding chunk whole', () => {
    const shard = new L1Shard(1 << 20, () => undefined);
    shard.set('k\u0101', 'wide key');
    shard.set('k\u0001', 'narrow key');
    shard.set('k\u0101\u0000', 'longer');
    // UTF-8 would write all three as U+FFFD.
    shard.set('k\ud800', 'lone high');
    shard.set('k\udc00', 'lone low');
    shard.set('k\ufffd', 'replacement character');
    expect(shard.get('k\u0101')).toBe('wide key');
    expect(shard.get('k\u0001')).toBe('narrow key');
    expect(shard.get('k\u0101\u0000')).toBe('longer');
    expect(shard.get('k\ud800')).toBe('lone high');
    expect(shard.get('k\udc00')).toBe('lone low');
    expect(shard.get('k\ufffd')).toBe('replacement character');
    expect(shard.get('k')).toBeUndefined();
    const keys = [...shard.entriesOldestFirst(readChars)].map(([key]) => key);
    expect(keys.slice(3)).toEqual(['k\ud800', 'k\udc00', 'k\ufffd']);
    const long = Array.from({ length: 20_000 }, (_, i) => String.fromCharCode(i % 256)).join('');
    const longWide = `${long}\u4e00`;
    shard.set('long', long);
    shard.set('long wide', longWide);
    expect(shard.get('long')).toBe(long);
    expect(shard.get('long wide')).toBe(longWide);
    expect(shard.bytes).toBe(
      entryBytes('k\ud800', 'lone high') +
        entryBytes('k\udc00', 'lone low') +
        entryBytes('k\ufffd', 'replacement character') +
        entryBytes('k\u0101', 'wide key') +
        entryBytes('k\u0001', 'narrow key') +
        entryBytes('k\u0101\u0000', 'longer') +
        entryBytes('long', long) +
        entryBytes('long wide', longWide),
    );
  });

  it('counts a key in UTF-8 and a wide value at two bytes a character, with the arena slack, and stores nothing larger than its bound', () => {
    // Bytes, plus an eighth of them (rounded up) for the arena's slack.
    expect(entryBytes('abcd', 'efgh')).toBe(ENTRY_OVERHEAD_BYTES + 9);
    expect(entryBytes('ab\u0100d', 'efgh')).toBe(ENTRY_OVERHEAD_BYTES + 11); // Ā: two bytes of UTF-8
    expect(entryBytes('ab\ud800d', 'efgh')).toBe(ENTRY_OVERHEAD_BYTES + 14); // a lone surrogate: UTF-16
    expect(entryBytes('abcd', 'ef\u0100h')).toBe(ENTRY_OVERHEAD_BYTES + 14);
    let evictions = 0;
    const shard = new L1Shard(ENTRY_OVERHEAD_BYTES + 10, () => evictions++);
    shard.set('a', 'b');
    shard.set('a', 'x'.repeat(100)); // too large: not stored, and the old value is gone
    expect(shard.get('a')).toBeUndefined();
    expect(shard.size).toBe(0);
    expect(shard.bytes).toBe(0);
    expect(evictions).toBe(0);
  });

  it('stays within its bound and serves the newest entries while a full shard churns', () => {
    const maxBytes = 64 * 1024;
    let evictions = 0;
    const shard = new L1Shard(maxBytes, () => evictions++);
    const value = (i: number) => `value ${i} `.repeat(1 + (i % 7));
    for (let i = 0; i < 50_000; i++) {
      shard.set(`key ${i}`, value(i));
      expect(shard.bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(shard.size + evictions).toBe(50_000);
    for (let i = 50_000 - 50; i < 50_000; i++) expect(shard.get(`key ${i}`)).toBe(value(i));
    expect(shard.get('key 0')).toBeUndefined();
  });
});
