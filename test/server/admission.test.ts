/**
 * Admission, unit by unit and over HTTP: the client start time (`x-request-start`), the event
 * loop's standing-queue test, a model's predicted completion against the time a request has left
 * (and the probe that keeps a stale prediction from refusing forever), the mapping of every
 * deadline-shaped outcome onto the overload answer, and the server-wide concurrent-request bound.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AbortedError, DeadlineExceededError, DisposedError, OverloadedError } from '../../src/errors.js';
import {
  ADMISSION_PROBE_INTERVAL_MS,
  AdmissionController,
  type AdmissionTicket,
  parseRequestStart,
  ServerAdmission,
  STANDING_QUEUE_INTERVAL_MS,
} from '../../src/server/admission.js';
import { formatErrorOf } from '../../src/server/errors.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { cutByDeadline, toApiError } from '../../src/server/scoring.js';
import type { ServedModel } from '../../src/server/registry.js';
import type { GateItem } from '../../src/index.js';
import { gatedScorer, postJson, start } from './helpers.js';

describe('x-request-start', () => {
  it('reads nginx seconds, milliseconds and microseconds, with or without t=', () => {
    expect(parseRequestStart('t=1700000000.123')).toBeCloseTo(1_700_000_000_123, 0);
    expect(parseRequestStart('1700000000123')).toBe(1_700_000_000_123);
    expect(parseRequestStart('t=1700000000123456')).toBeCloseTo(1_700_000_000_123.456, 3);
    expect(parseRequestStart(['t=1700000000.5', 'x'])).toBe(1_700_000_000_500);
    for (const bad of ['', 'soon', 't=', '-5', '1e12', 't=1.2.3', '99999999999999999999'])
      expect(parseRequestStart(bad), bad).toBeUndefined();
    expect(parseRequestStart(undefined)).toBeUndefined();
  });

  it('counts from the client time when it is earlier and not in the future; off when configured so', () => {
    const loop = { turnWait: () => ({ waitedMs: 2, unseenMs: 7 }) };
    const on = new ServerAdmission(
      { maxConcurrentRequests: 4, maxQueueMs: 5, requestStartHeader: true, predictive: true },
      loop,
    );
    const now = Date.now();
    const past = on.stamp(`t=${((now - 500) / 1000).toFixed(3)}`);
    expect(past.arrivalMs).toBeLessThanOrEqual(now - 499);
    expect(past.unseenMs).toBe(0); // the client's time covers the unseen wait
    const ancient = on.stamp('t=1700000.5'); // seconds since 1970 plus a few days: not this request's send time
    expect(ancient.arrivalMs).toBeGreaterThanOrEqual(now - 2);
    const future = on.stamp(String(now + 60_000));
    expect(future.arrivalMs).toBeGreaterThanOrEqual(now - 2);
    expect(future.unseenMs).toBe(7);
    const off = new ServerAdmission(
      { maxConcurrentRequests: 4, maxQueueMs: 5, requestStartHeader: false, predictive: true },
      loop,
    );
    expect(off.stamp(String(now - 500)).arrivalMs).toBeGreaterThanOrEqual(now - 2);
  });
});

describe('standing queue of the event loop', () => {
  it('needs every wait above maxQueueMs for the interval; one short wait resets it', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      let wait = { waitedMs: 0, unseenMs: 0 };
      const a = new ServerAdmission(
        { maxConcurrentRequests: 100, maxQueueMs: 5, requestStartHeader: true, predictive: true },
        { turnWait: () => wait },
      );
      wait = { waitedMs: 9, unseenMs: 0 };
      a.stamp(undefined);
      expect(a.queued(9)).toBe(false); // a burst: not (yet) a standing queue
      vi.advanceTimersByTime(STANDING_QUEUE_INTERVAL_MS / 2);
      wait = { waitedMs: 1, unseenMs: 6 }; // the turn before it counts too
      a.stamp(undefined);
      expect(a.standingQueue).toBe(false);
      vi.advanceTimersByTime(STANDING_QUEUE_INTERVAL_MS / 2);
      a.stamp(undefined);
      expect(a.standingQueue).toBe(true);
      expect(a.queued(1)).toBe(false); // early in its turn: served
      expect(a.queued(6)).toBe(true); // past maxQueueMs in its turn: refused
      wait = { waitedMs: 0, unseenMs: 3 };
      a.stamp(undefined);
      expect(a.standingQueue).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('bounds the requests being served', () => {
    const a = new ServerAdmission(
      { maxConcurrentRequests: 2, maxQueueMs: 5, requestStartHeader: true, predictive: true },
      { turnWait: () => ({ waitedMs: 0, unseenMs: 0 }) },
    );
    expect(a.enter()).toBe(true);
    expect(a.enter()).toBe(true);
    expect(a.enter()).toBe(false);
    a.leave();
    expect(a.enter()).toBe(true);
    expect(a.requestsInFlight).toBe(2);
  });
});

function admitted(outcome: ReturnType<AdmissionController['admit']>): AdmissionTicket {
  if (!('release' in outcome)) throw new Error(`refused: ${outcome.message}`);
  return outcome;
}

describe('AdmissionController: predicted completion against the time left', () => {
  it('a model on the event loop: refuses what its fitted service time says cannot finish', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const a = new AdmissionController(10_000, {});
      expect(a.predictMs(20)).toBeUndefined(); // nothing measured: admitted
      // 0.5 ms + 0.05 ms per pair, measured on requests of 10 to 200 pairs.
      for (let i = 0; i < 30; i++) {
        const pairs = 10 + (i % 20) * 10;
        const t = admitted(a.admit(pairs, { ageMs: 0, budgetMs: 1000, marginMs: 5 }));
        vi.advanceTimersByTime(0.5 + 0.05 * pairs);
        t.release(pairs);
      }
      expect(a.capacity.msPerPair).toBeCloseTo(0.05, 2);
      expect(a.predictMs(1000) as number).toBeGreaterThan(45);
      const refused = a.admit(1000, { ageMs: 10, budgetMs: 50, marginMs: 5 });
      expect('release' in refused).toBe(false);
      if (!('release' in refused)) {
        expect(refused.reason).toBe('predicted');
        expect(refused.retryAfterSec).toBeGreaterThanOrEqual(1);
      }
      admitted(a.admit(100, { ageMs: 10, budgetMs: 50, marginMs: 5 })).release(100);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a queued model: the pairs ahead count at its measured time per pair; an idle model is probed', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      let ahead = 0;
      const a = new AdmissionController(10_000, { pairsAhead: () => ahead, estimateMs: (pairs) => pairs * 4 });
      expect(a.predictMs(8)).toBe(32); // the tier's own estimate before the fit has samples
      for (let i = 0; i < 20; i++) {
        const t = admitted(a.admit(8, { ageMs: 0, budgetMs: 1000, marginMs: 5 }));
        vi.advanceTimersByTime(40); // 5 ms per pair
        t.release(8);
      }
      expect(a.capacity.msPerPair).toBeCloseTo(5, 1);
      ahead = 80;
      expect(a.predictMs(8) as number).toBeCloseTo(88 * 5, 0);
      const refused = a.admit(8, { ageMs: 0, budgetMs: 300, marginMs: 5 });
      expect('release' in refused).toBe(false);
      // Idle (nothing ahead, nothing in flight) and not admitted for a while: a probe goes through
      // even though the (stale) prediction says no.
      ahead = 0;
      vi.advanceTimersByTime(ADMISSION_PROBE_INTERVAL_MS);
      const probe = admitted(a.admit(200, { ageMs: 0, budgetMs: 300, marginMs: 5 }));
      expect('release' in a.admit(200, { ageMs: 0, budgetMs: 300, marginMs: 5 })).toBe(false);
      probe.release();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a router: its fastest tier decides; not predictive: the pair bound only', () => {
    const router = new AdmissionController(100, { answerMs: (pairs) => pairs * 2 });
    expect('release' in router.admit(10, { ageMs: 0, budgetMs: 30, marginMs: 5 })).toBe(true);
    expect('release' in router.admit(20, { ageMs: 0, budgetMs: 30, marginMs: 5 })).toBe(false);
    const bounds = new AdmissionController(10, { answerMs: () => 1e9, predictive: false });
    const t = admitted(bounds.admit(10, { ageMs: 0, budgetMs: 1, marginMs: 5 }));
    const full = bounds.admit(1, { ageMs: 0, budgetMs: 1000, marginMs: 5 });
    expect('release' in full ? 'admitted' : full.reason).toBe('pairs');
    t.release();
  });
});

describe('deadline-shaped outcomes are the overload answer', () => {
  it('maps deadline, abort and queue errors to overloaded, a closed model to unavailable, the rest to internal', () => {
    expect(toApiError(new DeadlineExceededError()).kind).toBe('overloaded');
    expect(toApiError(new AbortedError('gone')).kind).toBe('overloaded');
    expect(toApiError(new OverloadedError('full')).kind).toBe('overloaded');
    expect(toApiError(new DisposedError('cross-encoder')).kind).toBe('unavailable');
    expect(toApiError(new Error('bug')).kind).toBe('internal');
    for (const error of [new DeadlineExceededError(), new AbortedError('gone'), new DisposedError('x')])
      expect(toApiError(error).retryAfterSec).toBeGreaterThanOrEqual(1);
  });

  it('a pair a fast path or router answered with nothing is cut by the deadline; a custom scorer only late', () => {
    const item = (reason: GateItem['reason']) => ({ reason }) as GateItem;
    const model = (type: string) => ({ description: { type } }) as unknown as ServedModel;
    const at = (type: string, endedAtMs: number) => ({
      model: model(type),
      budgetMs: 100,
      deadlineMs: 1000,
      endedAtMs,
    });
    expect(cutByDeadline(item('scorer-null'), at('router', 0))).toBe(true);
    expect(cutByDeadline(item('scorer-null'), at('fast-path', 0))).toBe(true);
    expect(cutByDeadline(item('scorer-null'), at('scorer', 900))).toBe(false);
    expect(cutByDeadline(item('scorer-null'), at('scorer', 980))).toBe(true);
    expect(cutByDeadline(item('timeout'), at('scorer', 0))).toBe(true);
    expect(cutByDeadline(item('aborted'), at('scorer', 0))).toBe(true);
    expect(cutByDeadline(item('scorer-error'), at('router', 2000))).toBe(false);
  });

  it('formats an overload answer without an Error in each protocol', () => {
    expect(formatErrorOf('cohere', 'overloaded', 'busy', 'id1')).toEqual({
      status: 429,
      body: { id: 'id1', message: 'busy' },
    });
    expect(formatErrorOf('tei', 'overloaded', 'busy', 'id1')).toEqual({
      status: 429,
      body: { error: 'busy', error_type: 'Overloaded' },
    });
    expect(formatErrorOf('gate', 'overloaded', 'busy', 'id1')).toEqual({
      status: 429,
      body: { error: { type: 'overloaded', message: 'busy' }, request_id: 'id1' },
    });
  });
});

describe('admission over HTTP', () => {
  let server: RelevanceGateServer;
  let url: string;
  const blocker = gatedScorer('blocker');

  beforeAll(async () => {
    server = await start({
      admission: { maxConcurrentRequests: 1 },
      models: { busy: { type: 'scorer', scorer: blocker } },
    });
    url = server.url as string;
  }, 60_000);

  afterAll(async () => {
    blocker.release();
    await server?.close();
  });

  const routes = [
    {
      path: '/v1/rerank',
      body: { query: 'q', documents: ['a', 'b'] },
      shape: { id: expect.any(String), message: expect.any(String) },
    },
    {
      path: '/rerank',
      body: { query: 'q', texts: ['a', 'b'] },
      shape: { error: expect.any(String), error_type: 'Overloaded' },
    },
    {
      path: '/v1/gate',
      body: { query: 'q', passages: ['a', 'b'] },
      shape: { error: { type: 'overloaded', message: expect.any(String) }, request_id: expect.any(String) },
    },
  ];

  it('a request whose x-request-start leaves no budget is refused at once, before its body is read', async () => {
    for (const route of routes) {
      const res = await postJson(`${url}${route.path}`, route.body, {
        'x-budget-ms': '100',
        'x-request-start': `t=${((Date.now() - 150) / 1000).toFixed(3)}`,
      });
      expect(res.status, route.path).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.headers.get('x-request-id')).toEqual(expect.any(String));
      expect(res.body).toEqual(route.shape);
      expect(JSON.stringify(res.body)).toContain('past its 100 ms budget');
    }
    // A client clock ahead of ours is ignored: served.
    const ahead = await postJson(
      `${url}/v1/rerank`,
      { query: 'q', documents: ['a'] },
      { 'x-request-start': String(Date.now() + 60_000) },
    );
    expect(ahead.status).toBe(200);
  });

  it('beyond admission.maxConcurrentRequests the protocol overload answer; TEI /info reports the bound', async () => {
    const info = (await (await fetch(`${url}/info`)).json()) as { max_concurrent_requests: number };
    expect(info.max_concurrent_requests).toBe(1);
    const held = postJson(
      `${url}/v1/rerank`,
      { model: 'busy', query: 'q', documents: ['a'] },
      { 'x-budget-ms': '20000' },
    );
    await new Promise((r) => setTimeout(r, 100));
    for (const route of routes) {
      const res = await postJson(`${url}${route.path}`, route.body);
      expect(res.status, route.path).toBe(429);
      expect(res.body).toEqual(route.shape);
      expect(JSON.stringify(res.body)).toContain('maxConcurrentRequests');
    }
    blocker.release();
    expect((await held).status).toBe(200);
    expect((await postJson(`${url}/v1/rerank`, { query: 'q', documents: ['a'] })).status).toBe(200);
  });
});
