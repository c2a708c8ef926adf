/**
 * OpenTelemetry spans (src/util/tracing.ts): with `@opentelemetry/api` installed and an SDK
 * registered, a gate call over the router is one `relevance-gate.gate` span holding its decision
 * in counts, with one `relevance-gate.tier` child per tier call; a failing call marks its span.
 * Without the package, the gate and router run as always (a fresh process with it hidden).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGate } from '../../src/gate/gate.js';
import { createRouter } from '../../src/router/router.js';
import type { Scorer } from '../../src/types.js';
import { ce, fastPath, fastTier, indexOf, instantTier, passages } from '../router/fakes.js';

const run = promisify(execFile);
const exporter = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  contextManager.enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
});

afterAll(() => {
  trace.disable();
  context.disable();
});

beforeEach(() => exporter.reset());

const named = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe('OpenTelemetry spans', () => {
  it('a gate call over the router: one gate span with the decision, a child span per tier call', async () => {
    const fast = fastTier((id) => (indexOf(id) < 3 ? 0.9 : 0.1));
    const slow = instantTier('fake-ce', (id) => (indexOf(id) < 2 ? 0.95 : 0.05));
    const router = createRouter({ tiers: [fastPath(fast), ce(slow)], routing: { mode: 'cascade' } });
    const gate = createGate({ scorer: router, policy: { threshold: 0.5 } });
    const result = await gate.filter('a query', passages(10), { budgetMs: 10_000 });

    const [gateSpan, ...more] = named('relevance-gate.gate');
    expect(more).toHaveLength(0);
    expect(gateSpan.attributes).toMatchObject({
      'relevance_gate.scorer': router.id,
      'relevance_gate.passages': 10,
      'relevance_gate.included': result.included.length,
      'relevance_gate.excluded': result.excluded.length,
      'relevance_gate.conflicting': 0,
      'relevance_gate.unscored': 0,
      'relevance_gate.insufficient_context': result.stats.insufficientContext,
    });
    expect(gateSpan.attributes['relevance_gate.budget_ms']).toBeGreaterThan(9_000);
    const tierSpans = named('relevance-gate.tier');
    expect(tierSpans.length).toBeGreaterThanOrEqual(1);
    for (const span of tierSpans) expect(parentOf(span)).toBe(gateSpan.spanContext().spanId);
    const pairsByTier = new Map<string, number>();
    for (const span of tierSpans) {
      const tier = String(span.attributes['relevance_gate.tier']);
      pairsByTier.set(tier, (pairsByTier.get(tier) ?? 0) + Number(span.attributes['relevance_gate.pairs']));
    }
    // Every pair went through some tier call, and the tier spans count what the tiers executed.
    expect(pairsByTier.get('fast-path')).toBe(fast.executed.length);
    expect(pairsByTier.get('cross-encoder') ?? 0).toBe(slow.executed.length);
  });

  it("a scorer's failure ends its span with an error status", async () => {
    const failing: Scorer = {
      id: 'failing',
      async score() {
        throw new Error('backend down');
      },
    };
    const router = createRouter({ tiers: [fastPath(failing)], routing: { mode: 'cascade' } });
    await createGate({ scorer: router }).filter('q', passages(3));
    const [tierSpan] = named('relevance-gate.tier');
    expect(tierSpan.status.code).toBe(SpanStatusCode.ERROR);
    expect(tierSpan.status.message).toBe('backend down');
    expect(named('relevance-gate.gate')[0].attributes['relevance_gate.unscored']).toBe(3);
  });

  it('nests under the caller’s active span', async () => {
    const tracer = trace.getTracer('test');
    const gate = createGate({ scorer: fastTier(() => 0.9) });
    await tracer.startActiveSpan('http request', async (parent) => {
      await gate.filter('q', passages(2));
      parent.end();
    });
    const [outer] = named('http request');
    expect(parentOf(named('relevance-gate.gate')[0])).toBe(outer.spanContext().spanId);
  });

  it('the API is looked up when the first gate is created, not inside the first call (its budget)', async () => {
    const script = `
      const { createRequire } = await import('node:module');
      const cache = createRequire(process.cwd() + '/').cache;
      const loaded = () => Object.keys(cache).some((k) => k.includes('@opentelemetry/api'));
      const { createGate } = await import('./src/gate/gate.ts');
      const before = loaded();
      createGate({ scorer: { id: 's', score: async (_q, ps) => ps.map(() => ({ relevant: 0.9 })) } });
      console.log(JSON.stringify({ before, afterCreate: loaded() }));
    `;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 60_000,
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}')).toEqual({ before: false, afterCreate: true });
  });

  it('without @opentelemetry/api installed, the gate and router run as always', async () => {
    const script = `
      const { createGate } = await import('./src/gate/gate.ts');
      const { createRouter } = await import('./src/router/router.ts');
      const tier = { id: 't', score: async (_q, ps) => ps.map(() => ({ probabilities: { relevant: 0.9 }, tier: 'fast-path' })) };
      const router = createRouter({ tiers: [{ name: 'fast-path', scorer: tier, quality: 1, inline: true }] });
      const r = await createGate({ scorer: router }).filter('q', [{ id: 'a', text: 'x' }, { id: 'b', text: 'y' }]);
      let found = true;
      try { await import('@opentelemetry/api'); } catch { found = false; }
      console.log(JSON.stringify({ included: r.included.length, found }));
    `;
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        '--import',
        join(import.meta.dirname, '..', 'adapters', 'fixtures', 'hide-packages.mjs'),
        '--input-type=module',
        '-e',
        script,
      ],
      { env: { ...process.env, RG_HIDE_PACKAGES: '@opentelemetry/api' }, timeout: 60_000 },
    );
    expect(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}')).toEqual({ included: 2, found: false });
  });
});
