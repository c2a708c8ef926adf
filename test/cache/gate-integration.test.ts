/** The score cache behind the real gate, imported from the package root as users would. */
import { describe, expect, it } from 'vitest';
import { createGate, type Passage, type Scorer, type ScoreOptions } from '../../src/index.js';
import { expectedScore, passagesOf, useCaches } from './helpers.js';

interface CountingScorer extends Scorer {
  readonly calls: string[][];
}

function scorer(id: string, delayMs = 0, fail = false): CountingScorer {
  const calls: string[][] = [];
  return {
    id,
    calls,
    async score(query: string, passages: readonly Passage[], options?: ScoreOptions) {
      calls.push(passages.map((p) => p.id));
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      if (fail) throw new Error('scorer down');
      if (options?.signal?.aborted) throw new Error('aborted');
      return passages.map((p) => ({ probabilities: { relevant: expectedScore(query, p) }, tier: 'test' }));
    },
  };
}

const cache = useCaches();

function allItems(r: {
  included: readonly { id: string; cached: boolean | 'approximate'; relevance: number | null }[];
  conflicting: readonly { id: string; cached: boolean | 'approximate'; relevance: number | null }[];
  excluded: readonly { id: string; cached: boolean | 'approximate'; relevance: number | null }[];
}) {
  return [...r.included, ...r.conflicting, ...r.excluded].sort((a, b) =>
    a.id.localeCompare(b.id, 'en', { numeric: true }),
  );
}

describe('score cache through createGate', () => {
  it('scores only misses, marks hits cached, and decides identically from cached signals', async () => {
    const c = cache();
    const s = scorer('ce@v1');
    const gate = createGate({ scorer: s, cache: c });
    const passages = passagesOf(20);
    const first = await gate.filter('what is a relevance gate', passages);
    expect(s.calls).toHaveLength(1);
    expect(allItems(first).every((item) => !item.cached)).toBe(true);

    const extended = [...passages, ...passagesOf(3, 'new')];
    const second = await gate.filter('what  is a relevance gate ', extended);
    expect(s.calls[1]).toEqual(['new0', 'new1', 'new2']);
    const items = allItems(second);
    expect(
      items
        .filter((i) => i.cached)
        .map((i) => i.id)
        .sort(),
    ).toEqual(passages.map((p) => p.id).sort());
    expect(second.stats.cacheHits).toBe(20);
    const firstById = new Map(allItems(first).map((i) => [i.id, i]));
    for (const item of items) {
      if (item.id.startsWith('new')) continue;
      expect(item.relevance).toBe(firstById.get(item.id)?.relevance);
    }
    expect(first.included.map((i) => i.id)).toEqual(
      second.included.filter((i) => !i.id.startsWith('new')).map((i) => i.id),
    );
    expect(c.stats()).toMatchObject({ hits: 20, misses: 23 });
  });

  it('a new model version misses; concurrent gate calls score shared pairs once', async () => {
    const c = cache();
    const v1 = scorer('ce@v1', 20);
    const gate = createGate({ scorer: v1, cache: c });
    const passages = passagesOf(10);
    await Promise.all([gate.filter('q', passages), gate.filter('q', passages), gate.filter('q', passages)]);
    expect(v1.calls.flat()).toHaveLength(10);
    const v2 = scorer('ce@v2');
    const r = await createGate({ scorer: v2, cache: c }).filter('q', passages);
    expect(v2.calls.flat()).toHaveLength(10);
    expect(r.stats.cacheHits).toBe(0);
  });

  it('does not cache a failing scorer: the next call scores again', async () => {
    const c = cache();
    const broken = scorer('ce@v1', 0, true);
    const r = await createGate({ scorer: broken, cache: c }).filter('q', passagesOf(3));
    expect(r.stats.unscored).toBe(3);
    expect(c.stats().entries).toBe(0);
    const healthy = scorer('ce@v1');
    const again = await createGate({ scorer: healthy, cache: c }).filter('q', passagesOf(3));
    expect(healthy.calls).toHaveLength(1);
    expect(again.stats.unscored).toBe(0);
  });
});
