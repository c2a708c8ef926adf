/**
 * Configuration: defaults (loopback, 8080, the shipped fast path as `fast-path`), validation that
 * names the bad field, layering file < environment < flags, and the cross-encoder sizing rule.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  configFromEnvironment,
  defaultCrossEncoderThreads,
  mergeConfigInputs,
  readConfigFile,
  resolveServerConfig,
  ServerConfigError,
} from '../../src/server/index.js';

describe('resolveServerConfig', () => {
  it('defaults: 127.0.0.1:8080, fast-path served and default, 2 MB body, 1000 documents, no key', () => {
    const c = resolveServerConfig();
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(8080);
    expect(c.defaultModel).toBe('fast-path');
    expect(c.models).toEqual({ 'fast-path': { type: 'fast-path' } });
    expect(c.limits.bodyBytes).toBe(2 * 1024 * 1024);
    expect(c.limits.documentsPerRequest).toBe(1000);
    expect(c.apiKey).toBeUndefined();
    expect(c.processes).toBe(1);
    expect(c.cache.enabled).toBe(true);
  });

  it('refuses typos and bad values naming the field', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ prot: 1 }, /config\.prot/],
      [{ port: 70000 }, /port/],
      [{ limits: { bodyBytes: 10 } }, /limits\.bodyBytes/],
      [{ models: { x: { type: 'magic' } } }, /models\.x\.type/],
      [{ models: { x: { type: 'fast-path', dri: 'a' } } }, /models\.x\.dri/],
      [{ models: { r: { type: 'router', tiers: ['missing'] } } }, /missing/],
      [
        { models: { r: { type: 'router', tiers: ['fast-path'] }, r2: { type: 'router', tiers: ['r'] } } },
        /is a router/,
      ],
      [{ defaultModel: 'nope' }, /defaultModel/],
      [{ cache: { redisUrl: 'http://x' } }, /redis/],
      [{ cache: { redisTimeoutMs: 0 } }, /cache\.redisTimeoutMs/],
      [{ cache: { redisCluster: [] } }, /cache\.redisCluster must be a non-empty list of "host:port"/],
      [{ cache: { redisCluster: ['redis://h:1'] } }, /cache\.redisCluster/],
      [{ cache: { redisUrl: 'redis://h:1', redisCluster: ['h:1'] } }, /exclude each other/],
      [{ cache: { redisLeaseMs: -1 } }, /cache\.redisLeaseMs/],
      [{ models: { 'bad name!': { type: 'fast-path' } } }, /model names/],
    ];
    for (const [input, message] of bad) {
      expect(() => resolveServerConfig(input as never)).toThrow(ServerConfigError);
      expect(() => resolveServerConfig(input as never)).toThrow(message);
    }
  });

  it('refuses each kind of bad value in one style, with the project-prefixed code', () => {
    const bad: Array<[unknown, string]> = [
      [{ host: '' }, 'host must be a non-empty string, got ""'],
      [{ logLevel: 'loud' }, 'logLevel must be one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
      [{ cache: { enabled: 1 } }, 'cache.enabled must be a boolean, got 1'],
      [{ admission: { predictive: 'no' } }, 'admission.predictive must be a boolean, got "no"'],
      [{ budgetMs: 0 }, 'budgetMs must be a finite number > 0, got 0'],
      [{ drainDelayMs: 1.5 }, 'drainDelayMs must be an integer ≥ 0, got 1.5'],
      [{ limits: 5 }, 'limits must be an object, got 5'],
      [
        { models: { r: { type: 'router', tiers: ['fast-path'], routing: 'x' } } },
        'models.r.routing must be one of fixed, budget, cascade, got "x"',
      ],
      [
        { models: { r: { type: 'router', tiers: ['fast-path'], headroom: 2 } } },
        'models.r.headroom must be a number in (0, 1], got 2',
      ],
      [
        { models: { c: { type: 'cross-encoder', dir: 'x', truncation: 'x' } } },
        'models.c.truncation must be one of longest_first, only_second, got "x"',
      ],
      [
        { models: { c: { type: 'cross-encoder', dir: 'x', workers: 0 } } },
        'models.c.workers must be an integer in [1, 256], got 0',
      ],
      [
        { cache: { tll: 1 } },
        'cache.tll is not a known option (enabled, l1Mb, redisUrl, redisCluster, ttlMs, redisTimeoutMs, redisLeaseMs, approximate)',
      ],
    ];
    for (const [input, message] of bad) {
      let error: unknown;
      try {
        resolveServerConfig(input as never);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ServerConfigError);
      expect((error as ServerConfigError).message).toBe(message);
      expect((error as ServerConfigError).code).toBe('RG_ERR_SERVER_CONFIG');
    }
    expect(() => configFromEnvironment({ RELEVANCE_GATE_PORT: 'eighty' })).toThrow(
      'RELEVANCE_GATE_PORT must be a number, got "eighty"',
    );
  });

  it('server errors carry one project-prefixed code per class', () => {
    expect(new ServerConfigError('x').code).toBe('RG_ERR_SERVER_CONFIG');
    for (const kind of ['overloaded', 'invalid_request', 'internal'] as const) {
      const error = new ApiError(kind, 'x');
      expect(error.code).toBe('RG_ERR_API');
      expect(error.kind).toBe(kind);
    }
  });

  it('the shipped example config is valid', async () => {
    const { packageRoot } = await import('../../src/util/package-root.js');
    const c = resolveServerConfig(await readConfigFile(join(packageRoot(), 'examples', 'server-config.json')));
    expect(Object.keys(c.models)).toEqual(['fast-path', 'minilm', 'cascade', 'budget']);
    expect(c.models.cascade).toMatchObject({ type: 'router', routing: 'cascade', tiers: ['fast-path', 'minilm'] });
  });

  it('resolves model paths against baseDir', () => {
    const c = resolveServerConfig({ baseDir: '/srv/rg', models: { ce: { type: 'cross-encoder', dir: 'models/ce' } } });
    expect((c.models.ce as { dir: string }).dir).toBe('/srv/rg/models/ce');
  });
});

describe('layering', () => {
  it('file < environment < flags, field by field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rg-config-'));
    try {
      const file = join(dir, 'server.json');
      await writeFile(
        file,
        JSON.stringify({
          port: 9000,
          limits: { documentsPerRequest: 50 },
          models: { ce: { type: 'cross-encoder', dir: 'ce' } },
        }),
      );
      const fromFile = await readConfigFile(file);
      const env = configFromEnvironment({
        RELEVANCE_GATE_PORT: '9100',
        RELEVANCE_GATE_API_KEY: 'k',
        RELEVANCE_GATE_REDIS_URL: 'redis://r:6379',
      });
      const flags = { host: '0.0.0.0', limits: { bodyBytes: 4096 } };
      const c = resolveServerConfig(mergeConfigInputs(fromFile, env, flags));
      expect(c.port).toBe(9100);
      expect(c.host).toBe('0.0.0.0');
      expect(c.apiKey).toBe('k');
      expect(c.cache.redisUrl).toBe('redis://r:6379');
      expect(c.limits).toMatchObject({ documentsPerRequest: 50, bodyBytes: 4096 });
      // Relative paths in a file are relative to the file.
      expect((c.models.ce as { dir: string }).dir).toBe(join(dir, 'ce'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a config file that is not JSON, and YAML', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rg-config-'));
    try {
      await writeFile(join(dir, 'a.json'), '{ port: 1 }');
      await expect(readConfigFile(join(dir, 'a.json'))).rejects.toThrow(/not valid JSON/);
      await writeFile(join(dir, 'a.yaml'), 'port: 1');
      await expect(readConfigFile(join(dir, 'a.yaml'))).rejects.toThrow(/YAML/);
      await expect(readConfigFile(join(dir, 'missing.json'))).rejects.toThrow(/cannot read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects a non-numeric environment number', () => {
    expect(() => configFromEnvironment({ RELEVANCE_GATE_PORT: 'eighty' })).toThrow(/RELEVANCE_GATE_PORT/);
  });
});

describe('defaultCrossEncoderThreads', () => {
  it('leaves one core per HTTP process, splits the rest into ≤ 4 workers × intra-op threads', () => {
    expect(defaultCrossEncoderThreads(1, 1, 16)).toEqual({ workers: 4, intraOpThreads: 3 });
    expect(defaultCrossEncoderThreads(4, 1, 16)).toEqual({ workers: 3, intraOpThreads: 1 });
    expect(defaultCrossEncoderThreads(4, 2, 16)).toEqual({ workers: 1, intraOpThreads: 1 });
    expect(defaultCrossEncoderThreads(1, 1, 2)).toEqual({ workers: 1, intraOpThreads: 1 });
    expect(defaultCrossEncoderThreads(2, 1, 2)).toEqual({ workers: 1, intraOpThreads: 1 });
    for (const [p, ce, cores] of [
      [1, 1, 8],
      [2, 1, 8],
      [3, 2, 16],
      [1, 1, 64],
      [8, 1, 64],
    ] as const) {
      const { workers, intraOpThreads } = defaultCrossEncoderThreads(p, ce, cores);
      expect(p * (1 + ce * workers * intraOpThreads)).toBeLessThanOrEqual(cores);
    }
  });
});
