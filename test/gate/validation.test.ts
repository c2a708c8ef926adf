import { describe, expect, it } from 'vitest';
import {
  createGate,
  DuplicatePassageIdError,
  InvalidArgumentError,
  InvalidPolicyError,
  type Passage,
} from '../../src/index.js';
import { passages, relevanceScorer } from './helpers.js';

describe('input validation', () => {
  const scorer = relevanceScorer(new Array(2000).fill(0.5));
  const gate = createGate({ scorer });

  it('duplicate ids are refused with DuplicatePassageIdError naming the id and positions (small and large k)', async () => {
    const small = [...passages(3), { id: 'p1', text: 'again' }];
    const err = await gate.filter('q', small).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DuplicatePassageIdError);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err).toMatchObject({ id: 'p1', firstIndex: 1, secondIndex: 3, code: 'RG_ERR_DUPLICATE_PASSAGE_ID' });
    expect((err as Error).message).toContain('"p1"');
    const large = [...passages(100), { id: 'p42', text: 'again' }];
    await expect(gate.filter('q', large)).rejects.toMatchObject({ id: 'p42', firstIndex: 42, secondIndex: 100 });
    expect(scorer.calls).toHaveLength(0);
  });

  it('refuses malformed queries and passages with InvalidArgumentError', async () => {
    await expect(gate.filter(42 as never, passages(1))).rejects.toThrow(/query must be a string/);
    await expect(gate.filter('   ', passages(1))).rejects.toThrow(InvalidArgumentError);
    await expect(gate.filter('q', 'nope' as never)).rejects.toThrow(/passages must be an array/);
    await expect(gate.filter('q', [null as never])).rejects.toThrow(/passages\[0\]/);
    await expect(gate.filter('q', [{ id: '', text: 'x' }])).rejects.toThrow(/passages\[0\]\.id/);
    await expect(gate.filter('q', [{ id: 'a', text: 3 } as never])).rejects.toThrow(/passages\[0\]\.text/);
    await expect(gate.filter('q', [{ id: 'a', text: 'x', title: 1 } as never])).rejects.toThrow(/title/);
    await expect(gate.filter('q', [{ id: 'a', text: 'x', features: 'f' } as never])).rejects.toThrow(/features/);
    await expect(gate.filter('q', passages(1), { budgetMs: -1 })).rejects.toThrow(/budgetMs/);
    await expect(gate.filter('q', passages(1), { deadline: Number.NaN })).rejects.toThrow(/deadline/);
    await expect(gate.filter('q', passages(1), { signal: {} as never })).rejects.toThrow(/signal/);
    expect(() =>
      gate.stream('q', [
        { id: 'a', text: 'x' },
        { id: 'a', text: 'y' },
      ]),
    ).toThrow(DuplicatePassageIdError);
  });

  it('bounds k by maxPassages (k = 1000 works by default; more than the bound is refused)', async () => {
    const r = await gate.filter('q', passages(1000));
    expect(r.stats.retrieved).toBe(1000);
    const bounded = createGate({ scorer, maxPassages: 10 });
    await expect(bounded.filter('q', passages(11))).rejects.toThrow(/maxPassages 10/);
    expect((await bounded.filter('q', passages(10))).stats.retrieved).toBe(10);
  });

  it('accepts title, metadata and the three feature forms', async () => {
    const ps: Passage[] = [
      { id: 'a', text: 'x', title: 't', metadata: { url: 'u' }, features: { bm25: 1 } },
      { id: 'b', text: 'y', features: [1, 2] },
      { id: 'c', text: 'z', features: new Float32Array([1]) },
    ];
    expect((await gate.filter('q', ps)).stats.retrieved).toBe(3);
  });

  it('validates policy values with errors naming the field', () => {
    const bad: Array<[object, RegExp]> = [
      [{ threshold: 1.01 }, /policy\.threshold/],
      [{ threshold: -0.01 }, /policy\.threshold/],
      [{ threshold: Number.NaN }, /policy\.threshold/],
      [{ minKept: -1 }, /policy\.minKept/],
      [{ minKept: 1.5 }, /policy\.minKept/],
      [{ maxKept: 0 }, /policy\.maxKept/],
      [{ minKept: 3, maxKept: 2 }, /policy\.minKept/],
      [{ fallback: 'all' }, /policy\.fallback/],
      [{ insufficientBelow: 2 }, /policy\.insufficientBelow/],
      [{ earlyStop: { window: 0, minRate: 0.1, chunk: 1 } }, /policy\.earlyStop\.window/],
      [{ earlyStop: { window: 2, minRate: 1.1, chunk: 1 } }, /policy\.earlyStop\.minRate/],
      [{ earlyStop: { window: 2, minRate: 0.1, chunk: 0 } }, /policy\.earlyStop\.chunk/],
      [{ failOpen: 'yes' }, /policy\.failOpen/],
      [{ relevanceSignal: [] }, /policy\.relevanceSignal/],
      [{ treshold: 0.5 }, /policy\.treshold: is not a policy option/],
      [{ defaultRoute: 'kept' }, /policy\.defaultRoute/],
    ];
    for (const [policy, message] of bad) {
      expect(() => createGate({ scorer, policy: policy as never }), JSON.stringify(policy)).toThrow(InvalidPolicyError);
      expect(() => createGate({ scorer, policy: policy as never })).toThrow(message);
    }
  });

  it('boundary policy values are accepted (threshold 0 and 1, minKept = maxKept)', async () => {
    expect(() => createGate({ scorer, policy: { threshold: 0 } })).not.toThrow();
    expect(() => createGate({ scorer, policy: { threshold: 1, minKept: 2, maxKept: 2 } })).not.toThrow();
  });

  it('per-call overrides are validated too, and null unsets a gate-level value', async () => {
    const capped = createGate({ scorer: relevanceScorer([0.9, 0.8, 0.7]), policy: { maxKept: 1 } });
    await expect(capped.filter('q', passages(3), { policy: { threshold: 3 } })).rejects.toThrow(/policy\.threshold/);
    expect((await capped.filter('q', passages(3))).stats.returned).toBe(1);
    expect((await capped.filter('q', passages(3), { policy: { maxKept: null } })).stats.returned).toBe(3);
  });

  it('validates the gate config', () => {
    expect(() => createGate({ scorer: { id: '', score: async () => [] } })).toThrow(InvalidArgumentError);
    expect(() => createGate({ scorer: {} as never })).toThrow(/config\.scorer/);
    expect(() => createGate({ scorer, cache: {} as never })).toThrow(/config\.cache/);
    expect(() => createGate({ scorer, maxPassages: 0 })).toThrow(/maxPassages/);
    expect(() => createGate({ scorer, polcy: {} } as never)).toThrow(/config\.polcy is not a gate option/);
  });

  it('refuses unknown filter options so a misspelt budget cannot mean "no deadline"', async () => {
    await expect(gate.filter('q', passages(1), { timeoutMs: 5 } as never)).rejects.toThrow(
      /options\.timeoutMs is not a filter option/,
    );
  });
});
