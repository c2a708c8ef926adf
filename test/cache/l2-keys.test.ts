/**
 * The Redis key layout (hash tag per request scope, lease keys beside values) and the request
 * options of the shared L2 that need no Redis to check.
 */
import { describe, expect, it } from 'vitest';
import { pairKey, redisLeaseKey, redisValueKey, scopeHash, SCOPE_CHARS } from '../../src/cache/keys.js';
import { createScoreCache } from '../../src/cache/score-cache.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { missScorer, newLog, passagesOf } from './helpers.js';

describe('Redis keys', () => {
  const scope = scopeHash('ce@v1', 'a query', 'default');
  const key = pairKey(scope, { id: 'doc{7}', text: 'some text' });

  it('puts the scope in a hash tag, then the content hash and the id verbatim', () => {
    expect(scope).toHaveLength(SCOPE_CHARS);
    const value = redisValueKey('rg:score:', key);
    expect(value).toBe(`rg:score:{${scope}}${key.slice(SCOPE_CHARS)}`);
    expect(value.endsWith('doc{7}')).toBe(true);
    // The tag Redis Cluster hashes is the first {…}: the scope, whatever braces the id holds.
    expect(/\{([^}]*)\}/.exec(value)?.[1]).toBe(scope);
  });

  it('gives a lease key the same tag (same slot) and a remainder no value key can have', () => {
    const lease = redisLeaseKey('rg:score:', key);
    expect(lease).toBe(`rg:score:{${scope}}!${key.slice(SCOPE_CHARS)}`);
    expect(/\{([^}]*)\}/.exec(lease)?.[1]).toBe(scope);
    expect(lease).not.toBe(redisValueKey('rg:score:', key));
    expect(/^[0-9a-f]/.test(key.slice(SCOPE_CHARS))).toBe(true);
  });
});

describe('shared-L2 options without Redis', () => {
  it('prefetch without Redis promotes nothing; shared is false', async () => {
    const c = createScoreCache({ maxBytes: 1 << 20 });
    expect(c.shared).toBe(false);
    expect(await c.prefetch([{ scorerId: 's', query: 'q', passages: passagesOf(3) }])).toBe(0);
    await c.close();
  });

  it('refuses a request whose l2 option is not { read?, lease? } of booleans', async () => {
    const c = createScoreCache({ maxBytes: 1 << 20 });
    const passages = passagesOf(2);
    for (const l2 of [null, 'no', { lease: 'no' }, { read: 1 }])
      await expect(
        c.resolve({ scorerId: 's', query: 'q', passages, l2: l2 as never }, missScorer('q', passages, newLog())),
      ).rejects.toThrow(InvalidArgumentError);
    await c.close();
  });
});
