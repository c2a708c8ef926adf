import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { createGate } from '../../src/gate/gate.js';
import type { Passage, Scorer } from '../../src/types.js';
import { useCaches } from './helpers.js';

const newCache = useCaches();

/** A scorer whose answer depends on metadata.source_type, as an LLM judge's does. */
function metadataScorer(calls: string[][]): Scorer {
  return {
    id: 'reads-source-type',
    signals: ['relevant'],
    metadataKeys: ['source_type'],
    async score(_query: string, passages: readonly Passage[]) {
      calls.push(passages.map((p) => `${p.id}:${String(p.metadata?.source_type)}`));
      return passages.map((p) => ({ relevant: p.metadata?.source_type === 'forum' ? 0.2 : 0.9 }));
    },
  };
}

describe('scorers that read metadata', () => {
  it('a pair whose metadata value changed is rescored, not served the other value’s score', async () => {
    const calls: string[][] = [];
    const gate = createGate({ scorer: metadataScorer(calls), cache: newCache(), policy: { threshold: 0.5 } });
    const paper = { id: 'p', text: 'the same text', metadata: { source_type: 'paper', other: 1 } };
    const forum = { id: 'p', text: 'the same text', metadata: { source_type: 'forum', other: 1 } };
    const first = await gate.filter('q', [paper]);
    const second = await gate.filter('q', [forum]);
    expect(first.included.map((i) => i.relevance)).toEqual([0.9]);
    expect(second.excluded.map((i) => [i.relevance, i.cached])).toEqual([[0.2, false]]);
    // Metadata the scorer does not read does not split the key.
    const third = await gate.filter('q', [{ ...paper, metadata: { source_type: 'paper', other: 2 } }]);
    expect(third.included.map((i) => [i.relevance, i.cached])).toEqual([[0.9, true]]);
    expect(calls).toEqual([['p:paper'], ['p:forum']]);
  });

  it('scorers without metadataKeys keep metadata out of the key', async () => {
    const calls: string[][] = [];
    const scorer: Scorer = { ...metadataScorer(calls), metadataKeys: undefined, id: 'ignores-metadata' };
    const gate = createGate({ scorer, cache: newCache(), policy: { threshold: 0.5 } });
    await gate.filter('q', [{ id: 'p', text: 't', metadata: { source_type: 'paper' } }]);
    const again = await gate.filter('q', [{ id: 'p', text: 't', metadata: { source_type: 'forum' } }]);
    expect(again.included.map((i) => i.cached)).toEqual([true]);
    expect(calls).toHaveLength(1);
  });

  it('metadata the key cannot hold is a typed error, and a malformed metadataKeys list is refused', async () => {
    const cache = newCache();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const request = { scorerId: 's', metadataKeys: ['source_type'], query: 'q' };
    await expect(
      cache.resolve({ ...request, passages: [{ id: 'p', text: 't', metadata: { source_type: cyclic } }] }, async () => [
        { relevant: 0.5 },
      ]),
    ).rejects.toThrow(InvalidArgumentError);
    expect(() =>
      cache.lookup({ scorerId: 's', metadataKeys: [1 as unknown as string], query: 'q', passages: [] }),
    ).toThrow(InvalidArgumentError);
  });
});
