import { describe, expect, it } from 'vitest';
import { crossEncoderTier } from '../../src/router/tiers.js';
import type { CrossEncoder, CrossEncoderInfo } from '../../src/tiers/cross-encoder/cross-encoder.js';

/** A cross-encoder whose only working parts are the backlog and the estimate. */
function encoderWithBacklog(backlog: () => number): CrossEncoder {
  const info = { id: 'fake-ce', contract: { signalNames: ['relevant'] } } as unknown as CrossEncoderInfo;
  return {
    info,
    score: () => Promise.reject(new Error('not scored in this test')),
    stats: () => {
      throw new Error('the tier read the full stats object');
    },
    pendingPairs: backlog,
    estimateWaitMs: () => 0,
    close: () => Promise.resolve(),
  } as unknown as CrossEncoder;
}

describe('crossEncoderTier', () => {
  it("reads the encoder's backlog from pendingPairs, never from the stats object the router would build on every call", () => {
    let backlog = 0;
    const spec = crossEncoderTier(encoderWithBacklog(() => backlog));
    expect(spec.pendingPairs?.()).toBe(0);
    backlog = 37;
    expect(spec.pendingPairs?.()).toBe(37);
  });
});
