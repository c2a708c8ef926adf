/**
 * createScoreCache's options: defaults, the values refused (an InvalidArgumentError naming the
 * option, the message style of src/util/validate-options.ts), and unknown keys, top level and
 * under `redis`, refused rather than ignored. Nothing here connects to Redis: every refusal
 * happens before a client is created.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_L2_LEASE_MS,
  DEFAULT_L2_PREFIX,
  DEFAULT_L2_TTL_MS,
  DEFAULT_MAX_CLOCK_SKEW_MS,
  DEFAULT_REQUIRED_SIGNALS,
  resolveRedisOptions,
  resolveScoreCacheOptions,
} from '../../src/cache/options.js';
import { createScoreCache, type ScoreCacheOptions } from '../../src/cache/score-cache.js';
import { InvalidArgumentError } from '../../src/errors.js';

function refusal(options: unknown): Error {
  try {
    createScoreCache(options as ScoreCacheOptions);
  } catch (error) {
    return error as Error;
  }
  throw new Error('accepted');
}

describe('createScoreCache options', () => {
  it('defaults', () => {
    const resolved = resolveScoreCacheOptions({ maxBytes: 8192.7 });
    expect(resolved).toMatchObject({
      maxBytes: 8192,
      maxAgeMs: undefined,
      clock: Date.now,
      requiredSignals: DEFAULT_REQUIRED_SIGNALS,
      maxClockSkewMs: DEFAULT_MAX_CLOCK_SKEW_MS,
      redis: undefined,
      fromSnapshot: undefined,
    });
    expect(Object.isFrozen(resolved.requiredSignals)).toBe(true);
  });

  it('the maximum age is ttlMs, capped by the L2 TTL with Redis', () => {
    expect(resolveScoreCacheOptions({ maxBytes: 8192, ttlMs: 60_000 }).maxAgeMs).toBe(60_000);
    expect(resolveScoreCacheOptions({ maxBytes: 8192, ttlMs: Number.POSITIVE_INFINITY }).maxAgeMs).toBe(
      Number.POSITIVE_INFINITY,
    );
    const l2 = { url: 'redis://127.0.0.1:1' };
    expect(resolveScoreCacheOptions({ maxBytes: 8192, redis: l2 }).maxAgeMs).toBe(DEFAULT_L2_TTL_MS);
    expect(resolveScoreCacheOptions({ maxBytes: 8192, ttlMs: 60_000, redis: l2 }).maxAgeMs).toBe(60_000);
    expect(resolveScoreCacheOptions({ maxBytes: 8192, ttlMs: 60_000, redis: { ...l2, ttlMs: 1000 } }).maxAgeMs).toBe(
      1000,
    );
  });

  it('Redis defaults; numbers rounded up', () => {
    expect(resolveRedisOptions({ url: 'redis://h:1' }, undefined)).toEqual({
      url: 'redis://h:1',
      cluster: undefined,
      username: undefined,
      password: undefined,
      tls: false,
      leaseMs: DEFAULT_L2_LEASE_MS,
      prefix: DEFAULT_L2_PREFIX,
      signingKey: undefined,
      ttlMs: DEFAULT_L2_TTL_MS,
      timeoutMs: 5,
      writeTimeoutMs: 1000,
      maxPendingWrites: 64,
      reconnectMaxDelayMs: 1000,
      failureThreshold: 3,
      cooldownMs: 1000,
      connectTimeoutMs: 1000,
    });
    expect(resolveRedisOptions({ url: 'redis://h:1', timeoutMs: 0.5 }, 2500.5)).toMatchObject({
      ttlMs: 2501,
      timeoutMs: 1,
    });
  });

  it.each([
    ['no object', undefined, 'createScoreCache needs an options object'],
    ['maxBytes below 4096', { maxBytes: 10 }, 'maxBytes must be a number from 4096 to 549755813888 (512 GiB), got 10'],
    [
      'maxBytes above 512 GiB',
      { maxBytes: 2 ** 40 },
      'maxBytes must be a number from 4096 to 549755813888 (512 GiB), got 1099511627776',
    ],
    [
      'maxBytes NaN',
      { maxBytes: Number.NaN },
      'maxBytes must be a number from 4096 to 549755813888 (512 GiB), got NaN',
    ],
    [
      'maxBytes as a string',
      { maxBytes: '65536' },
      'maxBytes must be a number from 4096 to 549755813888 (512 GiB), got "65536"',
    ],
    ['ttlMs 0', { maxBytes: 8192, ttlMs: 0 }, 'ttlMs must be a number > 0 (Infinity: never), got 0'],
    ['clock not a function', { maxBytes: 8192, clock: 5 }, 'clock must be a function, got 5'],
    ['requiredSignals with ""', { maxBytes: 8192, requiredSignals: [''] }, 'requiredSignals must be an array'],
    ['maxClockSkewMs -1', { maxBytes: 8192, maxClockSkewMs: -1 }, 'maxClockSkewMs must be a finite number ≥ 0, got -1'],
    ['fromSnapshot a number', { maxBytes: 8192, fromSnapshot: 3 }, 'fromSnapshot must be a file path (string), got 3'],
    ['redis null', { maxBytes: 8192, redis: null }, 'redis must be an object { url, ... }, got null'],
    ['redis without url', { maxBytes: 8192, redis: {} }, 'redis.url must be a non-empty string'],
    [
      'redis with url and cluster',
      { maxBytes: 8192, redis: { url: 'redis://h:1', cluster: [{ host: 'h', port: 1 }] } },
      'redis takes url (one server) or cluster (Redis Cluster nodes), not both',
    ],
    ['redis.cluster empty', { maxBytes: 8192, redis: { cluster: [] } }, 'redis.cluster must be a non-empty array'],
    [
      'a cluster node without a port',
      { maxBytes: 8192, redis: { cluster: [{ host: 'h' }] } },
      'redis.cluster[0] must be { host: a non-empty string, port: an integer 1..65535 }',
    ],
    [
      'a password beside a url',
      { maxBytes: 8192, redis: { url: 'redis://h:1', password: 'secret' } },
      'redis.username, redis.password and redis.tls go with redis.cluster',
    ],
    [
      'redis.leaseMs -1',
      { maxBytes: 8192, redis: { url: 'redis://h:1', leaseMs: -1 } },
      'redis.leaseMs must be a finite number ≥ 0, got -1',
    ],
    [
      'redis.timeoutMs 0',
      { maxBytes: 8192, redis: { url: 'redis://h:1', timeoutMs: 0 } },
      'redis.timeoutMs must be a finite number > 0, got 0',
    ],
  ])('refuses %s', (_, options, message) => {
    const error = refusal(options);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toContain(message);
  });

  it('refuses unknown keys, naming every allowed one', () => {
    const top = refusal({ maxBytes: 8192, ttl: 1000 });
    expect(top).toBeInstanceOf(InvalidArgumentError);
    expect(top.message).toBe(
      'createScoreCache.ttl is not an option (maxBytes, ttlMs, normalizeQuery, redis, fromSnapshot, clock, requiredSignals, maxClockSkewMs, approximate)',
    );
    const nested = refusal({ maxBytes: 8192, redis: { url: 'redis://h:1', timeout: 5 } });
    expect(nested).toBeInstanceOf(InvalidArgumentError);
    expect(nested.message).toMatch(/^redis\.timeout is not an option \(url, prefix, ttlMs, timeoutMs, /);
  });

  it('keys present with the value undefined are known keys, and mean the default', () => {
    const cache = createScoreCache({ maxBytes: 8192, ttlMs: undefined, redis: undefined, clock: undefined });
    expect(cache.stats()).toMatchObject({ maxBytes: 8192, l2Enabled: false });
  });
});
