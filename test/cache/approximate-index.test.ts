/** The approximate query index alone: LSH candidates, the exact cosine check, bounds, seeds, partitions. */
import { describe, expect, it } from 'vitest';
import { QueryIndex, unitVector } from '../../src/cache/approximate/query-index.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

const DIM = 64;

function randomUnit(random: () => number, dim = DIM): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = random() - 0.5;
  return unitVector(v) as Float32Array;
}

/** A unit vector at exactly `cosine` to unit `base`, in a random direction. */
function atCosine(base: Float32Array, cosine: number, random: () => number): Float32Array {
  const r = randomUnit(random, base.length);
  let d = 0;
  for (let i = 0; i < base.length; i++) d += r[i] * base[i];
  const orth = unitVector(r.map((x, i) => x - d * base[i])) as Float32Array;
  const s = Math.sqrt(1 - cosine * cosine);
  return unitVector(base.map((x, i) => cosine * x + s * orth[i])) as Float32Array;
}

function cos(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

describe('unitVector', () => {
  it('normalises and refuses what is not a direction', () => {
    const v = unitVector([3, 4]) as Float32Array;
    expect(Array.from(v)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
    expect(unitVector([0, 0])).toBeUndefined();
    expect(unitVector([])).toBeUndefined();
    expect(unitVector([1, Number.NaN])).toBeUndefined();
    expect(unitVector([1, Number.POSITIVE_INFINITY])).toBeUndefined();
    expect(unitVector('1,2')).toBeUndefined();
    expect(unitVector(new Float32Array(20_000).fill(1))).toBeUndefined();
  });
});

describe('QueryIndex', () => {
  it('finds a query above the threshold, most similar first, and never one below it (exact cosine check)', () => {
    const random = mulberry32(1);
    const index = new QueryIndex();
    const base = randomUnit(random);
    const near = atCosine(base, 0.99, random);
    const nearer = atCosine(base, 0.995, random);
    const far = atCosine(base, 0.9, random);
    index.remember('p', 'near', near, ['a']);
    index.remember('p', 'nearer', nearer, ['a']);
    index.remember('p', 'far', far, ['a']);
    const found = index.find('p', base, 0.95);
    expect(found.map((m) => m.query.scope)).toEqual(['nearer', 'near']);
    expect(found[0].cosine).toBeCloseTo(cos(base, nearer), 5);
    for (const m of index.find('p', base, 0.5)) expect(m.cosine).toBeGreaterThanOrEqual(0.5);
    expect(index.find('p', base, 0.999)).toEqual([]);
    // The query itself is left out.
    expect(index.find('p', near, 0.95, 'near').map((m) => m.query.scope)).not.toContain('near');
  });

  it('finds near queries with high recall at the default bands (LSH misses cost recall only)', () => {
    const random = mulberry32(7);
    const index = new QueryIndex();
    let found = 0;
    const n = 300;
    for (let i = 0; i < n; i++) {
      const base = randomUnit(random);
      index.remember('p', `q${i}`, atCosine(base, 0.95, random), ['x']);
      if (index.find('p', base, 0.94).some((m) => m.query.scope === `q${i}`)) found++;
    }
    expect(found / n).toBeGreaterThan(0.97);
  });

  it('keeps partitions apart: another scorer or scope never matches', () => {
    const random = mulberry32(3);
    const index = new QueryIndex();
    const v = randomUnit(random);
    index.remember('scorer-a|policy-1', 's', v, ['k']);
    expect(index.find('scorer-a|policy-1', v, 0.9)).toHaveLength(1);
    expect(index.find('scorer-b|policy-1', v, 0.9)).toEqual([]);
    expect(index.find('scorer-a|policy-2', v, 0.9)).toEqual([]);
  });

  it('hashes alike for the same seed and differently for another', () => {
    const random = mulberry32(5);
    const vectors = Array.from({ length: 50 }, () => randomUnit(random));
    const probe = (seed: number) => {
      const index = new QueryIndex({ seed, bands: 1, bitsPerBand: 12 });
      for (const [i, v] of vectors.entries()) index.remember('p', `q${i}`, v, ['k']);
      // With one 12-bit band, a query is found only through an exact bucket match.
      return vectors.map((v) => index.find('p', v, -1).length);
    };
    expect(probe(11)).toEqual(probe(11));
    const a = probe(11).join();
    const b = probe(12).join();
    // Bucket co-membership depends on the hyperplanes: some vector lands with different company.
    expect(a === b && probe(13).join() === a).toBe(false);
  });

  it('stays within maxQueries and maxBytes, least recently used out first', () => {
    const random = mulberry32(9);
    const index = new QueryIndex({ maxQueries: 3 });
    const vs = Array.from({ length: 5 }, () => randomUnit(random));
    for (const [i, v] of vs.slice(0, 3).entries()) index.remember('p', `q${i}`, v, ['k']);
    index.touch('p', { scope: 'q0', passages: new Set(), terms: undefined });
    index.remember('p', 'q3', vs[3], ['k']);
    expect(index.stats()).toMatchObject({ queries: 3, evictions: 1 });
    expect(index.find('p', vs[1], 0.999)).toEqual([]); // q1 was the least recently used
    expect(index.find('p', vs[0], 0.999)).toHaveLength(1);

    const small = new QueryIndex({ maxBytes: 20_000 });
    for (let i = 0; i < 200; i++) small.remember('p', `q${i}`, randomUnit(random), [`passage-${i}`]);
    const stats = small.stats();
    expect(stats.bytes).toBeLessThanOrEqual(20_000);
    expect(stats.queries).toBeGreaterThan(0);
    expect(stats.evictions).toBe(200 - stats.queries);
  });

  it('bounds passage keys per query and forgets one on request', () => {
    const random = mulberry32(10);
    const index = new QueryIndex({ maxPassagesPerQuery: 2 });
    const v = randomUnit(random);
    index.remember('p', 's', v, ['a', 'b', 'c']);
    index.remember('p', 's', v, ['d']);
    const [match] = index.find('p', v, 0.99);
    expect([...match.query.passages]).toEqual(['a', 'b']);
    const before = index.stats().bytes;
    index.forgetPassage('p', match.query, 'a');
    expect([...match.query.passages]).toEqual(['b']);
    expect(index.stats().bytes).toBeLessThan(before);
  });

  it('refuses bad options', () => {
    expect(() => new QueryIndex({ bitsPerBand: 30 })).toThrow(/bitsPerBand/);
    expect(() => new QueryIndex({ maxQueries: 0 })).toThrow(/maxQueries/);
  });
});
