/**
 * Small parts of the server: admission (bound, oversized requests, Retry-After from the drain
 * rate), the API-key check, and text truncation that never splits a surrogate pair.
 */
import { describe, expect, it, vi } from 'vitest';
import { AdmissionController, createApiKeyCheck } from '../../src/server/index.js';
import { hasLoneSurrogate, toWellFormed, truncateChars, truncateTokens } from '../../src/server/text.js';

describe('AdmissionController', () => {
  it('admits up to the bound, refuses beyond it, and frees on release (once)', () => {
    const a = new AdmissionController(10);
    const t1 = a.tryAdmit(6);
    expect(t1).toBeDefined();
    expect(a.tryAdmit(5)).toBeUndefined();
    const t2 = a.tryAdmit(4);
    expect(a.pairsInFlight).toBe(10);
    t1?.release();
    t1?.release();
    expect(a.pairsInFlight).toBe(4);
    t2?.release();
    expect(a.pairsInFlight).toBe(0);
  });

  it('admits a request larger than the bound only when nothing else is in flight', () => {
    const a = new AdmissionController(10);
    const big = a.tryAdmit(25);
    expect(big).toBeDefined();
    expect(a.tryAdmit(1)).toBeUndefined();
    big?.release();
    const small = a.tryAdmit(1);
    expect(a.tryAdmit(25)).toBeUndefined();
    small?.release();
  });

  it('Retry-After is the excess over the observed drain rate, within [1, 30] s', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const a = new AdmissionController(100);
      expect(a.retryAfterSec(50)).toBe(1); // nothing measured yet
      // 100 pairs finish every 250 ms: 400 pairs/s.
      for (let i = 0; i < 8; i++) {
        a.tryAdmit(100)?.release();
        vi.advanceTimersByTime(250);
      }
      expect(a.drainRate).toBeCloseTo(400, 0);
      const held = a.tryAdmit(100);
      // 100 in flight + 1300 more = 1300 over the bound → 1300 / 400 = 3.25 → 4 s.
      expect(a.retryAfterSec(1300)).toBe(4);
      expect(a.retryAfterSec(1_000_000)).toBe(30);
      held?.release();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('createApiKeyCheck', () => {
  it('accepts exactly "Bearer <key>" (scheme case-insensitive)', () => {
    const check = createApiKeyCheck('k3y');
    expect(check('Bearer k3y')).toBe(true);
    expect(check('bearer k3y')).toBe(true);
    expect(check('Bearer k3y ')).toBe(true);
    expect(check('Bearer k3')).toBe(false);
    expect(check('Bearer k3yy')).toBe(false);
    expect(check('k3y')).toBe(false);
    expect(check('Basic k3y')).toBe(false);
    expect(check(undefined)).toBe(false);
    expect(check('')).toBe(false);
  });
});

describe('text', () => {
  it('truncateChars never splits a surrogate pair, from either end', () => {
    const s = 'ab😀cd'; // 😀 is two UTF-16 units at 2..3
    expect(truncateChars(s, 3)).toBe('ab');
    expect(truncateChars(s, 4)).toBe('ab😀');
    expect(truncateChars(s, 3, 'left')).toBe('cd');
    expect(truncateChars(s, 4, 'left')).toBe('😀cd');
    expect(truncateChars(s, 100)).toBe(s);
  });

  it('truncateTokens keeps the first n whitespace tokens, the text itself when it has no more', () => {
    expect(truncateTokens('a  b c d', 2)).toBe('a  b');
    expect(truncateTokens('a b ', 2)).toBe('a b ');
    expect(truncateTokens('a', 3)).toBe('a');
  });

  it('detects and repairs unpaired surrogates only', () => {
    expect(hasLoneSurrogate('ok 😀')).toBe(false);
    expect(hasLoneSurrogate('bad \ud800 x')).toBe(true);
    expect(hasLoneSurrogate('bad \udc00')).toBe(true);
    expect(toWellFormed('a\ud800b')).toBe('a\ufffdb');
    expect(toWellFormed('😀')).toBe('😀');
  });
});
