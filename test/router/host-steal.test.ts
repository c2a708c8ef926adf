import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readStealTicks, sampleSteal } from '../../src/tooling/loadgen/host-steal.js';

const linux = existsSync('/proc/stat');

describe('host steal sampling', () => {
  it.runIf(linux)('reads a non-negative, non-decreasing steal counter from /proc/stat', () => {
    const a = readStealTicks();
    const b = readStealTicks();
    expect(a).toBeTypeOf('number');
    expect(a as number).toBeGreaterThanOrEqual(0);
    expect(b as number).toBeGreaterThanOrEqual(a as number);
  });

  it.runIf(linux)('keeps steal per bucket from the start on, nothing before it', async () => {
    const start = performance.now() + 60; // the first 60 ms are "warm-up"
    const sampler = sampleSteal(start, 50);
    await new Promise((r) => setTimeout(r, 260));
    const buckets = sampler.stop();
    expect(Array.isArray(buckets)).toBe(true);
    // 200 ms after the start at 50 ms per bucket: 3 to 4 buckets, each a multiple of the 10 ms tick.
    expect((buckets as number[]).length).toBeGreaterThanOrEqual(3);
    expect((buckets as number[]).length).toBeLessThanOrEqual(5);
    for (const ms of buckets as number[]) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms % 10).toBe(0);
    }
  });
});
