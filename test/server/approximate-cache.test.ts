/**
 * `serve` with cache.approximate: queries embedded by a bi-encoder folder (a tiny generated one: a
 * bag of words, so reordered words embed identically), reuses marked `cached: 'approximate'` in
 * /v1/gate's output and counted in /metrics.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeTinyBiEncoderDir } from '../embedding/tiny-bi-encoder.js';
import { postJson, start } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-approx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const documents = [
  'Transduction in Bacillus subtilis by temperate phages moves genetic markers between strains.',
  'Wind tunnel measurements of boundary layer transition on a swept wing.',
  'Bacteriophages of Bacillus subtilis: lysogeny, transduction and host range.',
];

interface GateJson {
  included: { cached: unknown }[];
  excluded: { cached: unknown }[];
}

describe('serve with the approximate query cache', () => {
  it("marks reused pairs cached: 'approximate' on /v1/gate and counts them in /metrics", async () => {
    const model = writeTinyBiEncoderDir(join(dir, 'bi'));
    const server = await start({ cache: { approximate: { embeddingModel: model, threshold: 0.99 } } });
    try {
      const first = await postJson(`${server.url}/v1/gate`, {
        query: 'phage transduction bacillus',
        passages: documents,
      });
      expect(first.status).toBe(200);
      const second = await postJson(`${server.url}/v1/gate`, {
        query: 'bacillus phage transduction',
        passages: documents,
      });
      expect(second.status).toBe(200);
      const body = second.body as GateJson;
      const marks = [...body.included, ...body.excluded].map((i) => i.cached);
      expect(marks).toEqual(documents.map(() => 'approximate'));
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      // At least this request's 3 pairs (the start-up warm-up may add its own).
      const hits = Number(/^relevance_gate_cache_approximate_hits_total (\d+)$/m.exec(metrics)?.[1]);
      expect(hits).toBeGreaterThanOrEqual(3);
      expect(metrics).toContain('# TYPE relevance_gate_cache_approximate_lookups_total counter');
      expect(metrics).toContain('# TYPE relevance_gate_cache_approximate_embed_failures_total counter');
      expect(metrics).toMatch(/^relevance_gate_cache_approximate_queries [1-9]\d*$/m);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('is off by default: the counters are there and stay 0', async () => {
    const server = await start();
    try {
      await postJson(`${server.url}/v1/gate`, { query: 'phage transduction bacillus', passages: documents });
      await postJson(`${server.url}/v1/gate`, { query: 'bacillus phage transduction', passages: documents });
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toContain('# TYPE relevance_gate_cache_approximate_hits_total counter');
      expect(metrics).toMatch(/^relevance_gate_cache_approximate_hits_total 0$/m);
    } finally {
      await server.close();
    }
  }, 60_000);
});
