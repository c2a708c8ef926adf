/**
 * `bench --url`: the open-loop generator over HTTP (gate and Cohere protocols) against a real
 * server, and the HTTP floor child process; the same BenchPoint figures as in-process.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadHttpWorkload,
  runHttpPoints,
  startFloorServer,
  type HttpBenchOptions,
} from '../../src/tooling/loadgen/http-bench.js';
import { formatTable } from '../../src/tooling/loadgen/report.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { SHARED_DATA, start } from './helpers.js';

let server: RelevanceGateServer;
const options: HttpBenchOptions = {
  collection: join(SHARED_DATA, 'scifact'),
  k: 5,
  qps: [40],
  durationSec: 1,
  warmupSec: 0.3,
  budgetMs: 500,
  seed: 3,
  log: () => undefined,
};

beforeAll(async () => {
  server = await start();
});

afterAll(async () => {
  await server?.close();
});

describe('open loop over HTTP', () => {
  it('drives the gate and Cohere protocols and reports the usual point', async () => {
    const { workload } = loadHttpWorkload(options);
    const points = await runHttpPoints(options, workload, [
      { label: 'http:gate', url: server.url as string, protocol: 'gate', scrapeMetrics: true },
      { label: 'http:cohere', url: server.url as string, protocol: 'cohere', model: 'fast-path' },
    ]);
    expect(points.map((p) => p.routing)).toEqual(['http:gate', 'http:cohere']);
    for (const p of points) {
      expect(p.requests).toBeGreaterThan(20);
      expect(p.errors).toBe(0);
      expect(p.pairs).toBe(p.requests * 5);
      expect(p.latencyMs.p50).toBeGreaterThan(0);
    }
    // The gate protocol reports tiers per pair: the fast path (fresh or cached).
    expect(points[0].tierShare['fast-path'] + points[0].tierShare.cache).toBeCloseTo(1, 5);
    expect(formatTable(points)).toContain('http:gate');
  }, 60_000);

  it('the HTTP floor answers in a child process', async () => {
    const floor = await startFloorServer();
    try {
      const { workload } = loadHttpWorkload(options);
      const [point] = await runHttpPoints(options, workload, [
        { label: 'http-floor', url: floor.url, protocol: 'gate' },
      ]);
      expect(point.errors).toBe(0);
      expect(point.pairs).toBe(point.requests * 5);
    } finally {
      await floor.stop();
    }
  }, 60_000);
});
