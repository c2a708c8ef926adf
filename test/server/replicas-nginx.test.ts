/**
 * Two `relevance-gate serve` processes sharing one redis-server behind Debian's nginx, configured
 * by deploy/nginx.conf (the recipe of docs/deploy.md), all on loopback:
 * (a) a request scored through nginx by one replica is answered by the other from the shared
 *     cache: every item `cached: true`, no pair scored there (its /metrics);
 * (c) Redis killed and restarted under a stream of requests: every 200 carries the library's
 *     scores; a request whose budget the restart took gets the overload answer (429), never a 5xx;
 * (b) one replica killed with SIGKILL under a stream of requests: nginx resends the requests the
 *     dead replica held (`proxy_next_upstream … non_idempotent`), every request is answered 200 and
 *     none is lost or answered 5xx.
 * Short form for CI (about 3 s of load per phase).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGate, loadFastPathScorer, type Passage } from '../../src/index.js';
import { freePort, RedisServer, redisServerAvailable } from '../cache/redis-server.js';
import { FAST_PATH_DIR, postJson, type QueryWithDocs, scifactRequests } from './helpers.js';
import { type Nginx, nginxBinary, type Replica, startNginx, startReplica } from './replicas.js';

const available = redisServerAvailable() && nginxBinary() !== undefined;
if (!available) {
  if (process.env.CI) throw new Error('redis-server or nginx is not installed, but CI must run the replicas test');
  console.warn('[test/server/replicas-nginx.test.ts] SKIPPED: redis-server or nginx binary not found');
}

interface ItemJson {
  index: number;
  cached: boolean;
  relevance: number | null;
}
interface GateJson {
  included: ItemJson[];
  conflicting: ItemJson[];
  excluded: ItemJson[];
}

/** The library's rerank scores (index order) for each request, one scorer for all. */
async function libraryReference(requests: readonly QueryWithDocs[]): Promise<number[][]> {
  const scorer = await loadFastPathScorer(FAST_PATH_DIR);
  try {
    const gate = createGate({ scorer, policy: { relevanceSignal: ['relevant'] } });
    const out: number[][] = [];
    for (const r of requests) {
      const passages: Passage[] = r.documents.map((text, i) => ({ id: String(i), text }));
      const result = await gate.filter(r.query, passages);
      const scores = new Array<number>(r.documents.length);
      for (const item of [...result.included, ...result.conflicting, ...result.excluded])
        scores[item.rank] = item.score as number;
      out.push(scores);
    }
    return out;
  } finally {
    scorer.model.dispose();
  }
}

/** A metric's value (sum over the series matching `labels`, 0 when absent). */
async function metric(url: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^(\S+?)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name || !(m[2] ?? '').includes(labels)) continue;
    sum += Number(m[3]);
  }
  return sum;
}

interface Outcome {
  /** HTTP status, or 0 for a request that failed at the transport level (the client saw no answer). */
  status: number;
  upstreams: string[];
  upstreamStatus: string;
  /** Scores in index order (200s only). */
  scores?: number[];
  request: number;
  error?: string;
}

/** One rerank request through nginx. */
async function rerank(url: string, request: QueryWithDocs, index: number, budgetMs?: number): Promise<Outcome> {
  try {
    const res = await fetch(`${url}/v1/rerank`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(budgetMs === undefined ? {} : { 'x-budget-ms': String(budgetMs) }),
      },
      body: JSON.stringify({ query: request.query, documents: request.documents }),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    const upstreams = (res.headers.get('x-upstream-addr') ?? '').split(', ').filter((s) => s.length > 0);
    const outcome: Outcome = {
      status: res.status,
      upstreams,
      upstreamStatus: res.headers.get('x-upstream-status') ?? '',
      request: index,
    };
    if (res.status === 200) {
      const results = (JSON.parse(text) as { results: Array<{ index: number; relevance_score: number }> }).results;
      const scores = new Array<number>(request.documents.length);
      for (const r of results) scores[r.index] = r.relevance_score;
      outcome.scores = scores;
    } else outcome.error = text.slice(0, 200);
    return outcome;
  } catch (error) {
    return { status: 0, upstreams: [], upstreamStatus: '', request: index, error: String(error) };
  }
}

/**
 * A closed-loop stream of `sockets` concurrent clients through nginx for `durationMs`, cycling
 * through `requests` (each sent twice in a row, so the second copy usually reaches the other
 * replica); `during` runs once the stream has gone `atMs`.
 */
async function stream(
  url: string,
  requests: readonly QueryWithDocs[],
  opts: { sockets: number; durationMs: number; atMs: number; budgetMs?: number; during: () => Promise<void> },
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const end = Date.now() + opts.durationMs;
  let next = 0;
  const client = async (): Promise<void> => {
    while (Date.now() < end) {
      const i = Math.floor(next++ / 2) % requests.length;
      outcomes.push(await rerank(url, requests[i]!, i, opts.budgetMs));
    }
  };
  const fault = (async () => {
    await new Promise((r) => setTimeout(r, opts.atMs));
    await opts.during();
  })();
  await Promise.all([...Array.from({ length: opts.sockets }, client), fault]);
  return outcomes;
}

function summary(outcomes: readonly Outcome[]): Record<string, number> {
  const byStatus: Record<string, number> = {};
  for (const o of outcomes) byStatus[String(o.status)] = (byStatus[String(o.status)] ?? 0) + 1;
  return {
    requests: outcomes.length,
    retried: outcomes.filter((o) => o.upstreams.length > 1).length,
    ...Object.fromEntries(Object.entries(byStatus).map(([k, v]) => [`status_${k}`, v])),
  };
}

let redis: RedisServer;
let raw: Redis;
let configDir: string;
let replicas: Replica[] = [];
let nginx: Nginx;

describe.skipIf(!available)('replicas behind nginx sharing one Redis', () => {
  beforeAll(async () => {
    redis = new RedisServer(await freePort());
    await redis.start();
    raw = new Redis(redis.url);
    raw.on('error', () => {}); // Redis is killed and restarted in (c); this client reconnects.
    configDir = mkdtempSync(join(tmpdir(), 'rg-replicas-'));
    replicas = await Promise.all([startReplica(redis.url, configDir), startReplica(redis.url, configDir)]);
    nginx = await startNginx(replicas[0]!.addr, replicas[1]!.addr);
  });
  afterAll(async () => {
    await nginx?.stop();
    await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
    await raw?.quit();
    await redis?.kill();
    if (configDir !== undefined) rmSync(configDir, { recursive: true, force: true });
  });

  it('(a) what one replica scored through nginx, the other answers from Redis with no pair scored', async () => {
    const byAddr = new Map(replicas.map((r) => [r.addr, r]));
    const [request] = scifactRequests(1, 20);
    const body = { query: `${request!.query} (replicas a)`, passages: request!.documents };
    const gate = async (): Promise<{ upstream: string; items: ItemJson[] }> => {
      const res = await postJson(`${nginx.url}/v1/gate`, body);
      expect(res.status, res.text).toBe(200);
      const json = res.body as GateJson;
      const items = [...json.included, ...json.conflicting, ...json.excluded].sort((x, y) => x.index - y.index);
      return { upstream: res.headers.get('x-upstream-addr') ?? '', items };
    };
    // The replicas' warm-up traffic left entries in Redis already: count the new ones.
    // Value keys only: a replica's lease keys (`…}!…`) come and go while it scores.
    const valueKeys = async () => (await raw.keys('rg:score:*')).filter((k) => !k.includes('}!')).length;
    const keysBefore = await valueKeys();
    const first = await gate();
    const scoredBy = byAddr.get(first.upstream);
    expect(scoredBy, `upstream ${first.upstream}`).toBeDefined();
    const other = replicas.find((r) => r !== scoredBy)!;
    expect(first.items.every((item) => !item.cached)).toBe(true);
    // The scoring replica writes to Redis in the background.
    const deadline = Date.now() + 5000;
    while ((await valueKeys()) < keysBefore + 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(await valueKeys()).toBe(keysBefore + 20);

    const missesBefore = await metric(other.url, 'relevance_gate_cache_misses_total');
    const l2HitsBefore = await metric(other.url, 'relevance_gate_cache_l2_hits_total');
    // Round robin over two servers in one nginx worker: the next request goes to the other replica.
    const second = await gate();
    expect(second.upstream).toBe(other.addr);
    expect(second.items.map((item) => item.cached)).toEqual(body.passages.map(() => true));
    expect(second.items.map((item) => item.relevance)).toEqual(first.items.map((item) => item.relevance));
    expect(await metric(other.url, 'relevance_gate_cache_misses_total')).toBe(missesBefore);
    expect((await metric(other.url, 'relevance_gate_cache_l2_hits_total')) - l2HitsBefore).toBe(20);
  });

  it('(c) Redis killed and restarted under load: every 200 equals the library, a budget the restart took is a 429', async () => {
    const requests = scifactRequests(300, 8).slice(100);
    const expected = await libraryReference(requests);
    const outcomes = await stream(nginx.url, requests, {
      sockets: 4,
      durationMs: 3000,
      atMs: 800,
      during: async () => {
        await redis.kill();
        await new Promise((r) => setTimeout(r, 500));
        await redis.start();
      },
    });
    console.log('[replicas-nginx] redis restart:', JSON.stringify(summary(outcomes)));
    // No wrong answer and no failure: every answer is a 200 with the library's scores, or, for the
    // few requests whose 100 ms budget the restart took (0-6 of 1,200-2,300 in CI runs: the
    // restart's process start and reconnects share the 2 cores), the overload answer saying so.
    const refused = outcomes.filter((o) => o.status === 429);
    expect(outcomes.filter((o) => o.status !== 200 && o.status !== 429).map((o) => `${o.status} ${o.error}`)).toEqual(
      [],
    );
    for (const o of refused) expect(o.error).toMatch(/could not be scored within the 100 ms budget/);
    expect(refused.length).toBeLessThanOrEqual(Math.ceil(0.01 * outcomes.length));
    for (const o of outcomes.filter((x) => x.status === 200))
      for (let d = 0; d < o.scores!.length; d++) expect(o.scores![d]).toBeCloseTo(expected[o.request]![d]!, 12);
    // Both replicas reconnect to the restarted Redis.
    for (const r of replicas) {
      let connected = 0;
      for (let i = 0; i < 100 && connected !== 1; i++) {
        connected = await metric(r.url, 'relevance_gate_cache_l2_connected');
        if (connected !== 1) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(connected, `${r.addr} reconnected to Redis`).toBe(1);
    }
  });

  it('(b) one replica killed with SIGKILL under load: nginx resends what it held, no request lost, no 5xx', async () => {
    const requests = scifactRequests(100, 8);
    const expected = await libraryReference(requests);
    const victim = replicas[0]!;
    const survivor = replicas[1]!;
    const outcomes = await stream(nginx.url, requests, {
      sockets: 8,
      durationMs: 3500,
      atMs: 1000,
      // A resent request keeps its deadline (nginx's X-Request-Start): the time it spent on the dead
      // replica, until the kernel closed its connection (5-80 ms measured here, more on a loaded
      // host), comes out of its budget. With the default 100 ms some come back 429 (seen: 2 of 6 on
      // a loaded host), the documented answer to a budget spent; a budget with room for one retry
      // makes every one a 200 (docs/deploy.md).
      budgetMs: 1000,
      during: () => victim.kill('SIGKILL'),
    });
    const figures = summary(outcomes);
    const retried = outcomes.filter((o) => o.upstreams.length > 1);
    console.log('[replicas-nginx] replica SIGKILL:', JSON.stringify(figures));
    for (const line of nginx.accessLog()) if (line.includes(', ')) console.log(`[replicas-nginx] ${line}`);
    console.log(
      '[replicas-nginx] retried upstream statuses:',
      JSON.stringify([...new Set(retried.map((o) => o.upstreamStatus))]),
    );
    // nginx resent at least the requests that met the dead replica (connection reset or refused).
    expect(retried.length).toBeGreaterThan(0);
    expect(retried.every((o) => o.upstreams[1] === survivor.addr)).toBe(true);
    // Every retried request answered 200, and no request at all was lost or answered 5xx.
    expect(retried.filter((o) => o.status !== 200)).toEqual([]);
    expect(outcomes.filter((o) => o.status === 0 || o.status >= 500).map((o) => `${o.status} ${o.error}`)).toEqual([]);
    expect(outcomes.filter((o) => o.status !== 200).map((o) => `${o.status} ${o.error}`)).toEqual([]);
    for (const o of outcomes)
      for (let d = 0; d < o.scores!.length; d++) expect(o.scores![d]).toBeCloseTo(expected[o.request]![d]!, 12);
    // The stream went on after the kill, on the survivor.
    expect(outcomes.filter((o) => o.upstreams.at(-1) === survivor.addr).length).toBeGreaterThan(0);
    expect(nginx.accessLog().length).toBeGreaterThanOrEqual(outcomes.length);
  });
});
