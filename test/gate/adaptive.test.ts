import { describe, expect, it } from 'vitest';
import { createGate, InvalidPolicyError, type GatePolicy } from '../../src/index.js';
import { countWords } from '../../src/gate/policies/adaptive.js';
import { passages, relevanceScorer } from './helpers.js';

const VALUES = [0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75];

async function thresholdFor(policy: GatePolicy, query: string, queryClass?: string) {
  const gate = createGate({ scorer: relevanceScorer(VALUES), policy });
  const r = await gate.filter(query, passages(VALUES.length), queryClass === undefined ? {} : { queryClass });
  return { threshold: r.stats.threshold, returned: r.stats.returned };
}

describe('query-adaptive thresholds', () => {
  it('counts whitespace-separated words (Unicode spaces included)', () => {
    expect(countWords('')).toBe(0);
    expect(countWords('  one  ')).toBe(1);
    expect(countWords('a b\tc\nd\u00a0e\u3000f')).toBe(6);
  });

  it('by query length: first bucket with words ≤ maxWords, straddling the bucket edge', async () => {
    const policy: GatePolicy = {
      threshold: 0.5,
      thresholdByQueryLength: [
        { maxWords: 2, threshold: 0.7 },
        { maxWords: 5, threshold: 0.4 },
      ],
    };
    expect(await thresholdFor(policy, 'one two')).toEqual({ threshold: 0.7, returned: 1 });
    expect(await thresholdFor(policy, 'one two three')).toEqual({ threshold: 0.4, returned: 4 });
    expect(await thresholdFor(policy, 'a b c d e')).toMatchObject({ threshold: 0.4 });
    expect(await thresholdFor(policy, 'a b c d e f')).toMatchObject({ threshold: 0.5 });
  });

  it('by caller-supplied query class; an unknown class uses the next rule', async () => {
    const policy: GatePolicy = { threshold: 0.5, thresholdByQueryClass: { navigational: 0.7, exploratory: 0.3 } };
    expect(await thresholdFor(policy, 'q', 'navigational')).toEqual({ threshold: 0.7, returned: 1 });
    expect(await thresholdFor(policy, 'q', 'exploratory')).toEqual({ threshold: 0.3, returned: 5 });
    expect(await thresholdFor(policy, 'q', 'other')).toMatchObject({ threshold: 0.5 });
    expect(await thresholdFor(policy, 'q', 'toString')).toMatchObject({ threshold: 0.5 });
    expect(await thresholdFor(policy, 'q')).toMatchObject({ threshold: 0.5 });
  });

  it('callback gets the query, class, word count and base threshold and takes precedence over maps', async () => {
    const seen: unknown[] = [];
    const policy: GatePolicy = {
      threshold: 0.5,
      thresholdByQueryClass: { x: 0.9 },
      thresholdFn: (query, ctx) => {
        seen.push([query, ctx]);
        return ctx.queryWords > 2 ? 0.2 : 0.6;
      },
    };
    expect(await thresholdFor(policy, 'a b c', 'x')).toEqual({ threshold: 0.2, returned: 6 });
    expect(seen[0]).toEqual(['a b c', { queryClass: 'x', queryWords: 3, baseThreshold: 0.5 }]);
  });

  it('a callback returning an invalid threshold is refused with a typed error', async () => {
    const gate = createGate({ scorer: relevanceScorer(VALUES), policy: { thresholdFn: () => Number.NaN } });
    await expect(gate.filter('q', passages(1))).rejects.toThrow(InvalidPolicyError);
    await expect(gate.filter('q', passages(1))).rejects.toThrow(/thresholdFn/);
    const throwing = createGate({
      scorer: relevanceScorer(VALUES),
      policy: {
        thresholdFn: () => {
          throw new Error('no class');
        },
      },
    });
    await expect(throwing.filter('q', passages(1))).rejects.toThrow(/policy\.thresholdFn: threw: no class/);
  });

  it("'related' mode uses relatedThreshold over every other option", async () => {
    const policy: GatePolicy = { threshold: 0.5, mode: 'related', relatedThreshold: 0.2, thresholdFn: () => 0.9 };
    expect(await thresholdFor(policy, 'q')).toEqual({ threshold: 0.2, returned: 6 });
    expect(await thresholdFor({ mode: 'related' }, 'q')).toEqual({ threshold: 0.25, returned: 6 });
  });

  it('per-call overrides switch mode without touching the gate policy', async () => {
    const gate = createGate({ scorer: relevanceScorer(VALUES), policy: { threshold: 0.6 } });
    const related = await gate.filter('q', passages(VALUES.length), {
      policy: { mode: 'related', relatedThreshold: 0.3 },
    });
    expect(related.stats.returned).toBe(5);
    const plain = await gate.filter('q', passages(VALUES.length));
    expect(plain.stats.threshold).toBe(0.6);
    expect(plain.stats.returned).toBe(2);
  });

  it('rejects bad adaptive options naming the field', () => {
    const scorer = relevanceScorer([]);
    expect(() =>
      createGate({
        scorer,
        policy: {
          thresholdByQueryLength: [
            { maxWords: 3, threshold: 0.5 },
            { maxWords: 3, threshold: 0.4 },
          ],
        },
      }),
    ).toThrow(/thresholdByQueryLength\[1\]\.maxWords/);
    expect(() => createGate({ scorer, policy: { thresholdByQueryClass: { a: 2 } } })).toThrow(
      /thresholdByQueryClass\.a/,
    );
    expect(() => createGate({ scorer, policy: { mode: 'loose' as never } })).toThrow(/policy\.mode/);
    expect(() => createGate({ scorer, policy: { relatedThreshold: -0.1 } })).toThrow(/relatedThreshold/);
  });
});
