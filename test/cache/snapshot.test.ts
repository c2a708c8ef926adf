import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SnapshotError } from '../../src/cache/errors.js';
import type { ScoreCache } from '../../src/cache/score-cache.js';
import { expectedScore, missScorer, newLog, passagesOf, relevanceOf, useCaches } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-cache-snap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cache = useCaches();

const passages = passagesOf(50);
async function fill(c: ScoreCache, query = 'q'): Promise<void> {
  await c.resolve({ scorerId: 'm@1', query, passages }, missScorer(query, passages, newLog()));
}
async function hitsAfterWarmStart(c: ScoreCache, query = 'q') {
  const log = newLog();
  const out = await c.resolve({ scorerId: 'm@1', query, passages }, missScorer(query, passages, log));
  return { out, log };
}

async function writeGoodSnapshot(name: string): Promise<string> {
  const source = cache();
  await fill(source);
  const path = join(dir, name);
  const report = await source.snapshot(path);
  expect(report.entries).toBe(50);
  return path;
}

describe('snapshots', () => {
  it('round-trips L1 through a file: every pair hits with its original score and scoredAt', async () => {
    const path = await writeGoodSnapshot('round.snap');
    const target = cache();
    const report = await target.warmStart(path);
    expect(report).toMatchObject({ loaded: 50, skippedExpired: 0, skippedOverBudget: 0 });
    const { out, log } = await hitsAfterWarmStart(target);
    expect(log.calls).toEqual([]);
    expect(out.cached.every(Boolean)).toBe(true);
    expect(out.results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore('q', p)));
    expect(out.results[0]).toEqual({
      probabilities: { relevant: expectedScore('q', passages[0]) },
      raw: { relevant: 0.5 },
      tier: 'test',
    });
  });

  it('loads via the fromSnapshot option', async () => {
    const path = await writeGoodSnapshot('option.snap');
    const target = cache({ maxBytes: 1 << 20, fromSnapshot: path });
    expect(target.warmStartResult).toMatchObject({ loaded: 50 });
    expect((await hitsAfterWarmStart(target)).log.calls).toEqual([]);
  });

  it('keeps the most recently used entries when the snapshot exceeds maxBytes', async () => {
    const path = await writeGoodSnapshot('big.snap');
    const small = cache({ maxBytes: 8192 });
    const report = await small.warmStart(path);
    expect(report.loaded).toBeGreaterThan(0);
    expect(report.loaded + report.skippedOverBudget).toBe(50);
    expect(small.stats().bytes).toBeLessThanOrEqual(8192);
    expect(small.stats().evictions).toBe(0);
  });

  it('skips entries older than ttlMs', async () => {
    let now = 1_000_000;
    const source = cache({ maxBytes: 1 << 20, clock: () => now });
    await fill(source);
    const path = join(dir, 'ttl.snap');
    await source.snapshot(path);
    now += 10_000;
    const target = cache({ maxBytes: 1 << 20, ttlMs: 5_000, clock: () => now });
    expect(await target.warmStart(path)).toMatchObject({ loaded: 0, skippedExpired: 50 });
  });

  const corruptions: Array<[string, (bytes: Buffer) => Buffer, string]> = [
    [
      'a flipped payload bit',
      (b) => {
        const c = Buffer.from(b);
        c[c.length - 7] ^= 0x10;
        return c;
      },
      'checksum',
    ],
    ['a truncated file', (b) => b.subarray(0, b.length - 100), 'truncated'],
    ['a truncated header', (b) => b.subarray(0, 20), 'truncated'],
    ['trailing garbage', (b) => Buffer.concat([b, Buffer.from('junk')]), 'malformed'],
    ['a foreign file', () => Buffer.from('{"hello":"world"}'), 'foreign'],
    ['an empty file', () => Buffer.alloc(0), 'foreign'],
    [
      'a future format version',
      (b) => {
        const c = Buffer.from(b);
        c.writeUInt32LE(99, 8);
        return c;
      },
      'unsupported-version',
    ],
  ];
  for (const [what, corrupt, reason] of corruptions) {
    it(`refuses ${what} with SnapshotError(${reason}) and the cache starts empty`, async () => {
      const good = await writeGoodSnapshot(`good-${reason}.snap`);
      const bad = join(dir, `bad-${what.replace(/\W+/g, '-')}.snap`);
      writeFileSync(bad, corrupt(readFileSync(good)));
      const target = cache();
      const error = await target.warmStart(bad).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SnapshotError);
      expect(error).toMatchObject({ code: 'RG_ERR_CACHE_SNAPSHOT', reason, path: bad });
      expect(target.stats()).toMatchObject({ entries: 0, bytes: 0 });
      const viaOption = cache({ maxBytes: 1 << 20, fromSnapshot: bad });
      expect(viaOption.warmStartResult).toBeInstanceOf(SnapshotError);
      expect(viaOption.stats().entries).toBe(0);
      expect((await hitsAfterWarmStart(viaOption)).log.scoredPairs()).toBe(50);
    });
  }

  it('refuses a well-checksummed snapshot whose entries are not scores', async () => {
    const { Packr } = await import('msgpackr');
    const { hash64Bytes } = await import('../../src/cache/hash.js');
    const payload = new Packr({ useRecords: false }).pack({
      keySchema: 1,
      createdAt: 1,
      entries: [['k', 1, { relevant: 'high' }]],
    });
    const header = Buffer.alloc(32);
    header.write('RGSCACHE', 0, 'latin1');
    header.writeUInt32LE(1, 8);
    header.writeBigUInt64LE(BigInt(payload.length), 16);
    header.writeBigUInt64LE(hash64Bytes(payload), 24);
    const path = join(dir, 'forged.snap');
    writeFileSync(path, Buffer.concat([header, payload]));
    await expect(cache().warmStart(path)).rejects.toMatchObject({ reason: 'malformed' });
  });

  it('reports a missing file as not-found, and a refused warm start leaves a filled cache unchanged', async () => {
    const c = cache();
    await fill(c);
    await expect(c.warmStart(join(dir, 'nope.snap'))).rejects.toMatchObject({ reason: 'not-found' });
    expect(c.stats().entries).toBe(50);
  });
});
