/**
 * Fuzz: random and mutated bodies against every POST route of a real server. Not one response
 * may be ≥ 500, the process must survive, every error must be in the route's protocol format and
 * carry a request id. CI runs a short form; `RELEVANCE_GATE_FUZZ_BODIES=10000` runs the long one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { createFuzzer, type FuzzCase } from './fuzz-bodies.js';
import { start } from './helpers.js';

const COUNT = Number(process.env.RELEVANCE_GATE_FUZZ_BODIES ?? 1000);
const SEED = Number(process.env.RELEVANCE_GATE_FUZZ_SEED ?? 7);
const CONCURRENCY = 8;
const TEI_TYPES = new Set(['Empty', 'Validation', 'Tokenizer', 'Overloaded', 'Backend', 'Unhealthy']);

let server: RelevanceGateServer;
let url: string;

beforeAll(async () => {
  server = await start({
    models: { cascade: { type: 'router', tiers: ['fast-path'], routing: 'fixed' } },
  });
  url = server.url as string;
});

afterAll(async () => {
  await server?.close();
});

/** Why a response breaks the contract, or undefined when it is fine. */
function problem(c: FuzzCase, status: number, headers: Headers, text: string): string | undefined {
  if (status >= 500) return `status ${status}`;
  if (!headers.get('x-request-id')) return 'no x-request-id';
  if (status < 400) {
    if (c.path === '/v1/gate/stream') {
      for (const line of text.trim().split('\n')) {
        const event = JSON.parse(line) as { type: string };
        if (event.type === 'error') return `stream error event ${line.slice(0, 200)}`;
      }
      return undefined;
    }
    JSON.parse(text);
    return undefined;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `error body is not JSON: ${text.slice(0, 100)}`;
  }
  const b = body as Record<string, unknown>;
  if (/\bat .+:\d+:\d+|node_modules|\/work\//.test(text)) return `error body leaks internals: ${text.slice(0, 200)}`;
  switch (c.protocol) {
    case 'cohere':
      return typeof b.message === 'string' && Object.keys(b).every((k) => k === 'message' || k === 'id')
        ? undefined
        : `not a Cohere error: ${text.slice(0, 200)}`;
    case 'tei':
      return typeof b.error === 'string' && TEI_TYPES.has(b.error_type as string) && Object.keys(b).length === 2
        ? undefined
        : `not a TEI error: ${text.slice(0, 200)}`;
    case 'gate': {
      const e = b.error as Record<string, unknown> | undefined;
      return typeof e?.type === 'string' && typeof e.message === 'string' && typeof b.request_id === 'string'
        ? undefined
        : `not a gate error: ${text.slice(0, 200)}`;
    }
  }
}

describe(`fuzz: ${COUNT} random and mutated bodies`, () => {
  it('no 5xx, no crash, every error in its protocol format', async () => {
    const next = createFuzzer(SEED);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    const worker = async (): Promise<void> => {
      while (sent < COUNT) {
        sent++;
        const c = next();
        let status = 0;
        let headers = new Headers();
        let text = '';
        try {
          const res = await fetch(`${url}${c.path}`, {
            method: 'POST',
            headers: c.contentType === '' ? {} : { 'content-type': c.contentType },
            body: c.body,
          });
          status = res.status;
          headers = res.headers;
          text = await res.text();
        } catch (error) {
          // The server may close a connection after a 413 while a 10 MB body is still being sent.
          if (c.label === '10 MB string') continue;
          failures.push(`${c.path} ${c.label}: request failed: ${(error as Error).message}`);
          continue;
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        const why = problem(c, status, headers, text);
        if (why !== undefined && failures.length < 20) failures.push(`${c.path} ${c.label}: ${why}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    console.log(
      `fuzz ${COUNT} bodies (seed ${SEED}): statuses ${JSON.stringify([...statuses].sort((a, b) => a[0] - b[0]))}`,
    );
    expect(failures).toEqual([]);
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
    const live = await fetch(`${url}/health/ready`);
    expect(live.status).toBe(200);
  }, 600_000);
});
