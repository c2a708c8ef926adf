/**
 * The bench counts refusals (HTTP 429) apart from errors: over the measured window only, so the
 * summary's parts never overlap and add up to the requests sent (answered + refused + failed +
 * unfinished), and its HTTP status counts are those of the same requests.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadHttpWorkload, runHttpPoints, type HttpBenchOptions } from '../../src/tooling/loadgen/http-bench.js';
import { HttpStatusError } from '../../src/tooling/loadgen/errors.js';
import { type LoadTarget, runOpenLoopPhase, type TargetResult } from '../../src/tooling/loadgen/open-loop.js';
import { formatRequestOutcomes, formatTable } from '../../src/tooling/loadgen/report.js';
import type { Workload, WorkloadQuery } from '../../src/tooling/loadgen/workload.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { SHARED_DATA, slowScorer, start } from './helpers.js';

function fixedWorkload(): Workload {
  const query: WorkloadQuery = {
    text: 'q',
    passages: [
      { id: '0', text: 'a' },
      { id: '1', text: 'b' },
    ],
    synthetic: false,
  };
  return {
    queries: [query],
    collectionQueries: 1,
    syntheticQueries: 0,
    k: 2,
    zipf: undefined,
    meanPassages: 2,
    next: () => query,
    restart: () => undefined,
  };
}

describe('open-loop phase outcomes', () => {
  it('a refusal is not an error; answered + refused + failed + unfinished = requests', async () => {
    let calls = 0;
    const target: LoadTarget = {
      async filter(_query, passages): Promise<TargetResult> {
        const i = calls++;
        await new Promise((r) => setTimeout(r, 1));
        if (i % 4 === 0) throw new HttpStatusError(429, '{"message":"overloaded"}');
        if (i % 4 === 1) throw new HttpStatusError(500, '{"message":"boom"}');
        if (i % 8 === 2) throw new Error('socket hang up');
        return {
          tier: { scorer: 'http', name: 'http', counts: {} },
          stats: { retrieved: passages.length, unscored: i % 8 === 3 ? 1 : 0, unscoredByReason: {} },
          errors: [],
          status: 200,
        };
      },
    };
    const phase = await runOpenLoopPhase({
      gate: target,
      workload: fixedWorkload(),
      qps: 400,
      durationSec: 0.5,
      warmupSec: 0.25,
      budgetMs: 200,
      seed: 1,
    });
    expect(calls).toBeGreaterThan(phase.requests); // warm-up requests are not counted
    const answered = phase.completed - phase.refused - phase.thrown;
    expect(answered + phase.refused + phase.thrown + phase.unfinished).toBe(phase.requests);
    expect(phase.refused).toBeGreaterThan(0);
    expect(phase.statuses['429']).toBe(phase.refused);
    expect(phase.statuses['200']).toBe(answered);
    // Failures: the 500s plus the connection errors (no status).
    expect(phase.thrown).toBeGreaterThan(phase.statuses['500']);
    expect(phase.errors).toBe(phase.thrown + phase.withUnscoredPairs + phase.unfinished);
    expect(phase.errors).toBeLessThan(phase.requests - phase.refused + 1);
    expect(phase.firstErrors.join(' ')).not.toMatch(/HTTP 429/);
    const line = formatRequestOutcomes(phase);
    expect(line).toBe(
      `${phase.requests} requests: ${answered} answered, ${phase.refused} refused (429), ${phase.thrown} failed, ` +
        `${phase.unfinished} unfinished [HTTP ${Object.entries(phase.statuses)
          .map(([s, n]) => `${s}×${n}`)
          .join(' ')}]; errors ${phase.errors} (${phase.thrown} failed + ${phase.unfinished} unfinished + ` +
        `${phase.withUnscoredPairs} answered with unscored pairs)`,
    );
  });
});

describe('bench --url against an overloaded server', () => {
  let server: RelevanceGateServer;
  beforeAll(async () => {
    // One request of 5 pairs in flight at most, each taking 60 ms: most of 60 rps is refused.
    server = await start({
      models: { slow: { type: 'scorer', scorer: slowScorer(60), maxInFlightPairs: 5 } },
      defaultModel: 'slow',
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('reports the 429s as refused, not errors, and the parts add up', async () => {
    const options: HttpBenchOptions = {
      collection: join(SHARED_DATA, 'scifact'),
      k: 5,
      qps: [60],
      durationSec: 1.5,
      warmupSec: 0.5,
      budgetMs: 1000,
      seed: 11,
      log: (line) => lines.push(line),
    };
    const lines: string[] = [];
    const { workload } = loadHttpWorkload(options);
    const [point] = await runHttpPoints(options, workload, [
      { label: 'http:slow', url: server.url as string, protocol: 'cohere', model: 'slow' },
    ]);
    expect(point.refused).toBeGreaterThan(0);
    expect(point.errors).toBe(0);
    const line = lines.find((l) => l.startsWith('http:slow'));
    const m =
      /(\d+) requests: (\d+) answered, (\d+) refused \(429\), (\d+) failed, (\d+) unfinished \[HTTP ([^\]]*)\]; errors (\d+)/.exec(
        line ?? '',
      );
    expect(m, line).not.toBeNull();
    const [requests, answered, refused, failed, unfinished] = (m as RegExpExecArray).slice(1, 6).map(Number);
    expect(requests).toBe(point.requests);
    expect(answered + refused + failed + unfinished).toBe(requests);
    expect(refused).toBe(point.refused);
    const statuses = Object.fromEntries(
      (m as RegExpExecArray)[6].split(' ').map((s) => s.split('×').map(Number) as [number, number]),
    );
    expect(statuses[429]).toBe(refused);
    expect(statuses[200]).toBe(answered);
    expect(Number((m as RegExpExecArray)[7])).toBe(point.errors);
    expect(formatTable([point])).toMatch(/errors\s+refused/);
  }, 60_000);
});
