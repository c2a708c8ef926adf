import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { createRouter } from '../../src/router/router.js';
import type { RoutedPairScore, TierSpec } from '../../src/router/types.js';
import { fastTier, instantTier } from './fakes.js';

const tiers = (): TierSpec[] => [
  { name: 'fast-path', scorer: fastTier(() => 0.5), quality: 1, inline: true },
  { name: 'cross-encoder', scorer: instantTier('fake-ce', () => 0.9), quality: 2 },
  { name: 'llm-judge', scorer: instantTier('fake-judge', () => 0.1), quality: 3 },
];

describe('cascadeTier', () => {
  it('sends the cascade to the named tier instead of the best one', async () => {
    const router = createRouter({ tiers: tiers(), routing: { mode: 'cascade', cascadeTier: 'cross-encoder' } });
    const out = await router.score(
      'q',
      [
        { id: 'a', text: 'a' },
        { id: 'b', text: 'b' },
      ],
      { deadline: Date.now() + 100 },
    );
    expect(out.map((r) => (r as RoutedPairScore).tier)).toEqual(['cross-encoder', 'cross-encoder']);
    const best = createRouter({ tiers: tiers(), routing: { mode: 'cascade' } });
    const top = await best.score('q', [{ id: 'a', text: 'a' }], { deadline: Date.now() + 100 });
    expect((top[0] as RoutedPairScore).tier).toBe('llm-judge');
  });

  it('refuses an unknown or inline cascade tier', () => {
    expect(() => createRouter({ tiers: tiers(), routing: { mode: 'cascade', cascadeTier: 'nope' } })).toThrow(
      InvalidArgumentError,
    );
    expect(() => createRouter({ tiers: tiers(), routing: { mode: 'cascade', cascadeTier: 'fast-path' } })).toThrow(
      /cascadeTier/,
    );
  });
});
