/**
 * What the cache trusts: results are cached (and entries read back from Redis or a snapshot) only
 * if they are valid scores — probabilities in [0, 1], finite raw values, a required signal, not
 * scored in the future — and the content hash is a function of the exact passage strings,
 * identical between the native addon and its JS fallback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import xxhashFactory from 'xxhash-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry } from '../../src/cache/codec.js';
import { contentHash, contentHashFallback, nativeContentHash } from '../../src/cache/hash.js';
import { KEY_SCHEMA_VERSION } from '../../src/cache/keys.js';
import { createScoreCache } from '../../src/cache/score-cache.js';
import { encodeSnapshot } from '../../src/cache/snapshot.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { nativeHash } from '../../src/native/hash.js';
import type { ScorerPairResult } from '../../src/types.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-cache-trust-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const passages = [
  { id: 'a', text: 'first passage' },
  { id: 'b', text: 'second passage', title: 'T' },
];

function scoring(results: ScorerPairResult[]) {
  let calls = 0;
  return {
    scoreMisses: async (idx: readonly number[]) => {
      calls++;
      return idx.map((i) => results[i]);
    },
    calls: () => calls,
  };
}

describe('results the cache refuses to store', () => {
  it.each([
    ['probability 5', { probabilities: { relevant: 5 } }],
    ['probability -0.5', { probabilities: { relevant: -0.5 } }],
    ['no relevance signal', { probabilities: { injection: 0.2 } }],
    ['plain record above 1', { relevant: 1.5 }],
    ['NaN raw value', { probabilities: { relevant: 0.5 }, raw: { relevant: Number.NaN } }],
  ] as Array<[string, ScorerPairResult]>)(
    '%s: returned to the caller, counted uncacheable, rescored next time',
    async (_, bad) => {
      const cache = createScoreCache({ maxBytes: 1 << 20 });
      const s = scoring([bad, { probabilities: { relevant: 0.25 } }]);
      const request = { scorerId: 'm', query: 'q', passages };
      const first = await cache.resolve(request, s.scoreMisses);
      expect(first.results[0]).toEqual(bad);
      await cache.resolve(request, s.scoreMisses);
      expect(s.calls()).toBe(2);
      expect(cache.stats()).toMatchObject({ uncacheable: 2, stores: 1 });
    },
  );

  it('requiredSignals: [] accepts any signal; a custom list is honoured', async () => {
    const any = createScoreCache({ maxBytes: 1 << 20, requiredSignals: [] });
    const s = scoring([{ probabilities: { injection: 0.2 } }, { probabilities: { injection: 0.9 } }]);
    await any.resolve({ scorerId: 'm', query: 'q', passages }, s.scoreMisses);
    await any.resolve({ scorerId: 'm', query: 'q', passages }, s.scoreMisses);
    expect(s.calls()).toBe(1);
    expect(() => createScoreCache({ maxBytes: 1 << 20, requiredSignals: [''] })).toThrow(InvalidArgumentError);
    expect(() => createScoreCache({ maxBytes: 1 << 20, maxClockSkewMs: -1 })).toThrow(InvalidArgumentError);
  });

  it('an entry that decodes must still be a valid score (the codec refuses out-of-range values)', () => {
    const bytes = encodeEntry({ result: { probabilities: { relevant: 5 } }, scoredAt: Date.now() });
    expect(decodeEntry(bytes)).toBeUndefined();
    const ok = encodeEntry({ result: { probabilities: { relevant: 1 } }, scoredAt: 1 });
    expect(decodeEntry(ok)?.result).toEqual({ probabilities: { relevant: 1 } });
  });
});

describe('snapshot entries are trusted like L2 entries', () => {
  it('skips entries scored in the future or without a required signal (skippedInvalid)', async () => {
    let now = 1_000_000;
    const source = createScoreCache({ maxBytes: 1 << 20, clock: () => now });
    await source.resolve(
      { scorerId: 'm', query: 'q', passages },
      scoring([{ probabilities: { relevant: 0.1 } }, { probabilities: { relevant: 0.2 } }]).scoreMisses,
    );
    const good = join(dir, 'good.snap');
    await source.snapshot(good);
    // The same entries, forged: one scored 1e300 (never expires under a TTL), one without relevance.
    const forged = join(dir, 'forged.snap');
    await writeFile(
      forged,
      encodeSnapshot(
        [
          { key: 'k1', entry: { result: { probabilities: { relevant: 0.5 } }, scoredAt: 1e300 } },
          { key: 'k2', entry: { result: { probabilities: { injection: 0.5 } }, scoredAt: now } },
          { key: 'k3', entry: { result: { probabilities: { relevant: 0.5 } }, scoredAt: now + 500 } },
        ],
        now,
      ),
    );
    now += 10;
    const target = createScoreCache({ maxBytes: 1 << 20, ttlMs: 86_400_000, clock: () => now });
    expect(await target.warmStart(forged)).toMatchObject({ loaded: 1, skippedInvalid: 2 });
    expect(await target.warmStart(good)).toMatchObject({ loaded: 2, skippedInvalid: 0 });
  });
});

describe('content hash', () => {
  it('is native here, and the JS fallback gives identical values on random strings', () => {
    expect(nativeContentHash()).toBe(true);
    const rand = mulberry32(3);
    const alphabet = ['a', ' ', 'é', 'ÿ', '東', '😀', '\ud800', '\udfff', '\u0000', 'Ā', '\u0301'];
    for (let i = 0; i < 2000; i++) {
      const len = Math.floor(rand() ** 3 * 5000);
      let text = '';
      while (text.length < len) text += alphabet[Math.floor(rand() * alphabet.length)];
      const title = rand() < 0.3 ? undefined : text.slice(0, Math.floor(rand() * 20));
      expect(contentHash({ text, title })).toBe(contentHashFallback(text, title));
    }
  });

  it('is a function of the exact content: representation, lone surrogates, title boundaries', () => {
    const wide = 'é東'.repeat(50).replace(/東/g, ''); // Latin-1 content held in a two-byte string
    expect(contentHash({ text: wide })).toBe(contentHash({ text: 'é'.repeat(50) }));
    expect(contentHash({ text: '\ud800' })).not.toBe(contentHash({ text: '\ufffd' }));
    expect(contentHash({ text: '\ud800' })).not.toBe(contentHash({ text: '\udbff' }));
    expect(contentHash({ text: 'ab', title: 'c' })).not.toBe(contentHash({ text: 'b', title: 'ca' }));
    expect(contentHash({ text: 'x', title: '' })).not.toBe(contentHash({ text: 'x' }));
    expect(contentHash({ text: 'ÿ' })).not.toBe(contentHash({ text: 'ÿ\u0000' }));
  });

  it('the native string hash is XXH64 (checked against xxhash-wasm on the same bytes)', async () => {
    const xxhash = await xxhashFactory();
    const native = nativeHash();
    expect(native).toBeDefined();
    const rand = mulberry32(9);
    for (let i = 0; i < 500; i++) {
      const bytes = new Uint8Array(Math.floor(rand() * 300));
      for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(rand() * 256);
      const hi = Math.floor(rand() * 2 ** 32);
      const lo = Math.floor(rand() * 2 ** 32);
      const want = xxhash
        .h64Raw(bytes, (BigInt(hi) << 32n) | BigInt(lo))
        .toString(16)
        .padStart(16, '0');
      expect(native?.hashBytes(bytes, hi, lo)).toBe(want);
    }
    expect(() => native?.hashBytes('x' as never, 0, 0)).toThrow(TypeError);
    expect(() => native?.hashString('x', -1, 0)).toThrow(TypeError);
    expect(() => native?.hashContent(5 as never)).toThrow(TypeError);
  });

  it('keys moved to schema version 2 with the new hash (older Redis entries and snapshots never match)', () => {
    expect(KEY_SCHEMA_VERSION).toBe(2);
  });
});
