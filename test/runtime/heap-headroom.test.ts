/**
 * keepHeapHeadroom: a process holding 192 MiB of headroom takes far fewer major collections for
 * the same promoted garbage than one left to V8's sizing; the growth factor is clamped; bad
 * values are typed errors; releasing every holder is safe to repeat.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { growthPercentFor, keepHeapHeadroom } from '../../src/util/heap-headroom.js';

const FIXTURE = join(import.meta.dirname, 'heap-churn.fixture.ts');

function majorsWith(headroomMb: number): number {
  const out = execFileSync(process.execPath, ['--import', 'tsx', FIXTURE, String(headroomMb)], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  const result = JSON.parse(out.trim().split('\n').pop() as string) as { headroomMb: number; majors: number };
  expect(result.headroomMb).toBe(headroomMb);
  return result.majors;
}

describe('keepHeapHeadroom', () => {
  it('cuts major collections for the same promoted garbage (at most half of V8 sizing alone)', () => {
    const own = majorsWith(0);
    const held = majorsWith(192);
    expect(own).toBeGreaterThanOrEqual(6); // the workload does make V8 collect the old generation
    expect(held).toBeLessThanOrEqual(own / 2);
  }, 120_000);

  it('sizes the growth from the live heap, clamped to [50 %, 1000 %]', () => {
    const MiB = 1024 * 1024;
    expect(growthPercentFor(192 * MiB, 64 * MiB)).toBe(300);
    expect(growthPercentFor(192 * MiB, 8 * MiB)).toBe(1000);
    expect(growthPercentFor(192 * MiB, 0)).toBe(1000);
    expect(growthPercentFor(192 * MiB, 2048 * MiB)).toBe(50);
  });

  it('refuses a negative or non-finite headroom; 0 and repeated releases are no-ops', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => keepHeapHeadroom(bad)).toThrow(InvalidArgumentError);
    keepHeapHeadroom(0)();
    const release = keepHeapHeadroom(16);
    release();
    release();
  });
});
