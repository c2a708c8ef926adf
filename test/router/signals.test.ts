import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { createGate } from '../../src/gate/gate.js';
import { InvalidPolicyError } from '../../src/gate/errors.js';
import { createRouter } from '../../src/router/router.js';
import type { TierSpec } from '../../src/router/types.js';
import type { Scorer } from '../../src/types.js';
import { fastTier, instantTier } from './fakes.js';

const declaring = (scorer: Scorer, signals: readonly string[] | undefined): Scorer =>
  signals === undefined ? scorer : { id: scorer.id, signals, score: scorer.score.bind(scorer) };
const fastPath = (signals?: readonly string[]): TierSpec => ({
  name: 'fast-path',
  scorer: declaring(
    fastTier(() => 0.5),
    signals,
  ),
  quality: 1,
  inline: true,
});
const ce = (signals?: readonly string[]): TierSpec => ({
  name: 'cross-encoder',
  scorer: declaring(instantTier('fake-ce'), signals),
  quality: 2,
});

describe('router signals', () => {
  it('declares the union of its tiers’ signals, best tier first, each once', () => {
    const router = createRouter({ tiers: [fastPath(['relevant']), ce(['relevant', 'evidence', 'injection'])] });
    expect(router.signals).toEqual(['relevant', 'evidence', 'injection']);
    const reversed = createRouter({ tiers: [fastPath(['relevant', 'contradicts_premise']), ce(['evidence'])] });
    expect(reversed.signals).toEqual(['evidence', 'relevant', 'contradicts_premise']);
  });

  it('declares nothing when any tier declares nothing', () => {
    expect(createRouter({ tiers: [fastPath(['relevant']), ce()] }).signals).toBeUndefined();
    expect(createRouter({ tiers: [fastPath(), ce(['relevant'])] }).signals).toBeUndefined();
  });

  it('a fixed view declares its tier’s signals; other views the union', () => {
    const router = createRouter({ tiers: [fastPath(['relevant']), ce(['relevant', 'evidence'])] });
    expect(router.view({ mode: 'fixed', fixedTier: 'fast-path' }).signals).toEqual(['relevant']);
    expect(router.view({ mode: 'fixed', fixedTier: 'cross-encoder' }).signals).toEqual(['relevant', 'evidence']);
    expect(router.view({ mode: 'budget' }).signals).toEqual(['relevant', 'evidence']);
  });

  it('rejects a tier whose scorer declares signals that are not a list of names', () => {
    const bad = (signals: unknown): TierSpec => ({ ...ce(), scorer: { ...instantTier(), signals } as Scorer });
    expect(() => createRouter({ tiers: [bad('relevant')] })).toThrow(InvalidArgumentError);
    expect(() => createRouter({ tiers: [bad([''])] })).toThrow(/signals/);
  });

  it('the gate checks a policy against the router’s declared signals', () => {
    const router = createRouter({ tiers: [fastPath(['relevant']), ce(['relevant'])] });
    expect(() => createGate({ scorer: router, policy: { threshold: 0.5, relevanceSignal: 'evidence' } })).toThrow(
      InvalidPolicyError,
    );
    expect(() => createGate({ scorer: router, policy: { threshold: 0.5 } })).not.toThrow();
  });
});
