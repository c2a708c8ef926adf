/**
 * Fault scenarios against `relevance-gate serve` as an operator runs it (a child process of the
 * scenario's own process, loopback only): a cluster worker killed under load, the API key given by
 * file or environment and looked for in every process, refusals at the HTTP level (encoded bodies,
 * bodies over the limit, missing keys) that the client must read as answers, and forged Redis
 * entries under a cache signing key. Registered in scenarios.ts; each returns its report or throws
 * a ScenarioFailure.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { decodeEntry, encodeEntry } from '../../src/cache/codec.js';
import { EntrySigner, signingKeyObject } from '../../src/cache/signing.js';
import { mulberry32 } from '../../src/util/seeded-random.js';
import { freePort, RedisServer, redisServerAvailable } from '../cache/redis-server.js';
import { loadCollection } from '../cross-encoder/data.js';
import { check, type Report, SHORT } from './check.js';
import { runClusterKill } from './cluster-kill.js';
import {
  cmdlineOf,
  descendantsOf,
  environOf,
  type ServeProcess,
  servingUrl,
  startServe,
  stopServe,
  workersOf,
} from './serve-process.js';

/** Kills whatever of a serve process tree is still running (a failed scenario must not leave it). */
function killTree(s: ServeProcess): void {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  for (const pid of descendantsOf(s.pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  s.child.kill('SIGKILL');
}

/**
 * `kill -9` of one cluster worker at a time under 400 requests/s (`--processes 2`): no answer but
 * 200 (or 429 when the host is too busy), no connection failure outside the killed process's own
 * connections, readiness never 503, the killed process's losses bounded by its teardown, and the
 * cluster drains and exits 0 on SIGTERM afterwards.
 */
export async function clusterWorkerKill(seed: number): Promise<Report> {
  const r = await runClusterKill({ seed, qps: 400, kills: SHORT ? 1 : 2, settleMs: SHORT ? 1500 : 2500 });
  const { timeline: _timeline, failures: _failures, ...report } = r;
  // A failed check still reports the figures (the long form's totals count every run).
  const other = Object.keys(r.statuses).filter((s) => s !== '200' && s !== '429');
  check(other.length === 0, `answers other than 200 and 429: ${JSON.stringify(r.statuses)}`, report);
  check(
    r.failedElsewhere === 0,
    `${r.failedElsewhere} connection failures outside the killed process's connections: ${r.failures.join('; ')}`,
    report,
  );
  check(
    r.readiness.notReady === 0 && r.readiness.errors === 0,
    `readiness while a worker restarted: ${r.readiness.notReady} × not ready, ${r.readiness.errors} errors of ${r.readiness.probes}: ${r.failures.join('; ')}`,
    report,
  );
  // A request written on a killed process's connection is lost only while that process dies (the
  // kernel closes its sockets at the end of its teardown; the client then stops using them).
  const teardown = Math.max(...r.kills.map((k) => k.exitSeenMs ?? 0));
  check(
    r.lostLatestAfterKillMs <= teardown + 50,
    `a request sent ${r.lostLatestAfterKillMs} ms after a kill was lost (the primary saw the exit after ${teardown} ms)`,
    report,
  );
  check(r.exit === 0, `the primary exited with ${r.exit} on SIGTERM`, report);
  return report;
}

/** The Bearer challenge on 401 in every protocol, and 200 with the key from every worker. */
async function checkAuth(url: string, key: string, where: string): Promise<void> {
  const cases = [
    ['/v1/rerank', { query: 'q', documents: ['a b', 'c'] }],
    ['/v2/rerank', { model: 'fast-path', query: 'q', documents: ['a b', 'c'] }],
    ['/rerank', { query: 'q', texts: ['a b', 'c'] }],
    ['/v1/gate', { query: 'q', passages: ['a b', 'c'] }],
  ] as const;
  for (const [path, body] of cases) {
    for (const [authorization, challenge] of [
      [undefined, 'Bearer realm="relevance-gate"'],
      ['Bearer not-the-key', 'Bearer realm="relevance-gate", error="invalid_token"'],
    ] as const) {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      check(res.status === 401, `${where}: ${path} with ${authorization ?? 'no key'} answered ${res.status}`);
      check(
        res.headers.get('www-authenticate') === challenge,
        `${where}: ${path} 401 carried WWW-Authenticate ${res.headers.get('www-authenticate')}`,
      );
    }
  }
  // Fresh connections: the primary hands them to the workers in turn, so every worker answers.
  for (let i = 0; i < 8; i++) {
    const [path, body] = cases[i % cases.length];
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, connection: 'close' },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    // The key is accepted: served, or refused for load (429) on a host too busy for the budget.
    check(res.status === 200 || res.status === 429, `${where}: ${path} with the key answered ${res.status}`);
  }
}

/** Waits for the primary to report a ready worker that is not one of `before`; its pid. */
async function replacementReady(s: ServeProcess, before: readonly number[], timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const { line } of s.lines) {
      const m = /^worker (\d+) ready/.exec(line);
      if (m !== null && !before.includes(Number(m[1]))) return Number(m[1]);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no replacement worker became ready within ${timeoutMs} ms; stderr: ${s.stderr()}`);
}

/**
 * The API key given by `--api-key-file` or `RELEVANCE_GATE_API_KEY` to `serve --processes 2`: in no
 * process's command line or environment (by file: none at all; by environment: only the primary's
 * environment, where the operator put it), a restarted worker included; every 401 carries the
 * Bearer challenge; the key works on every worker.
 */
export async function serveApiKeyOutOfSight(seed: number): Promise<Report> {
  const rand = mulberry32(seed);
  const key = `fault-key-${seed}-${randomBytes(12).toString('hex')}`;
  const signingKey = `fault-signing-${randomBytes(16).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'rg-fault-key-'));
  const file = join(dir, 'api-key');
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  const report: Report = {};
  try {
    for (const mode of ['file', 'env'] as const) {
      const s = startServe(
        mode === 'file' ? ['--processes', '2', '--api-key-file', file] : ['--processes', '2'],
        mode === 'env' ? { RELEVANCE_GATE_API_KEY: key, RELEVANCE_GATE_CACHE_SIGNING_KEY: signingKey } : {},
      );
      try {
        const url = await servingUrl(s);
        check(!/warning/.test(s.stderr()), `${mode}: serve warned: ${s.stderr()}`);
        /** Every process of the tree: none shows a secret where it must not. */
        const inspect = (when: string): number => {
          const workers = workersOf(s.pid);
          check(workers.length === 2, `${mode} ${when}: ${workers.length} workers`);
          const processes =
            mode === 'file' ? [s.pid, ...descendantsOf(s.pid)] : [...workers, ...workers.flatMap(descendantsOf)];
          for (const pid of processes) {
            let cmdline: string;
            let environ: string;
            try {
              cmdline = cmdlineOf(pid);
              environ = environOf(pid);
            } catch {
              continue; // exited meanwhile
            }
            check(!cmdline.includes(key), `${mode} ${when}: the key is in the command line of ${pid}`);
            check(!environ.includes(key), `${mode} ${when}: the key is in the environment of ${pid}`);
            check(!environ.includes(signingKey), `${mode} ${when}: the signing key is in the environment of ${pid}`);
          }
          // By environment the primary holds the key where the operator put it, and only there.
          if (mode === 'env')
            check(!cmdlineOf(s.pid).includes(key), `${mode}: the key is in the primary's command line`);
          return processes.length;
        };
        const inspected = inspect('at start');
        await checkAuth(url, key, `${mode} at start`);
        // A worker killed and replaced: the replacement gets its configuration the same way.
        const before = workersOf(s.pid);
        process.kill(before[Math.floor(rand() * before.length)], 'SIGKILL');
        const replacement = await replacementReady(s, before);
        inspect('after a restart');
        await checkAuth(url, key, `${mode} after a restart`);
        const exit = await stopServe(s);
        check(exit === 0, `${mode}: the primary exited with ${exit} on SIGTERM`);
        report[mode] = { processesInspected: inspected, replacement };
      } finally {
        killTree(s);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return report;
}

/** An HTTP/1.1 response read off a raw connection. */
interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

/**
 * A raw keep-alive connection, as a client that keeps writing its body whatever the server
 * answers meanwhile: requests are written byte by byte as given, responses parsed as they come
 * (Content-Length bodies, which is what the server sends).
 */
class RawConnection {
  private readonly socket: Socket;
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  error: string | undefined;
  closed = false;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = connect(Number(port), hostname);
    this.socket.on('data', (d: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      this.wake();
    });
    this.socket.on('error', (e: NodeJS.ErrnoException) => {
      this.error ??= e.code ?? e.message;
      this.wake();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  /** Writes `bytes`, waiting for the socket to drain; false once the connection failed. */
  async write(bytes: Buffer): Promise<boolean> {
    if (this.closed || this.error !== undefined) return false;
    if (!this.socket.write(bytes))
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.socket.off('drain', done);
          this.socket.off('close', done);
          resolve();
        };
        this.socket.on('drain', done);
        this.socket.on('close', done);
      });
    return !this.closed && this.error === undefined;
  }

  /** The next response, or undefined when the connection ended first (or `timeoutMs` passed). */
  async response(timeoutMs: number): Promise<RawResponse | undefined> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of head.slice(1)) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (this.buffer.length >= end + 4 + length) {
          const text = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
          this.buffer = this.buffer.subarray(end + 4 + length);
          return { status: Number(head[0].split(' ')[1]), headers, text };
        }
      }
      if (this.closed || this.error !== undefined || performance.now() > deadline) return undefined;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Request bytes: the head, then the body framed by Content-Length or chunked, in `slices`. */
function requestBytes(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  chunked: boolean,
  slice: number,
): Buffer[] {
  const lines = [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', 'content-type: application/json'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  lines.push(chunked ? 'transfer-encoding: chunked' : `content-length: ${body.length}`);
  const out: Buffer[] = [Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')];
  for (let o = 0; o < body.length; o += slice) {
    const part = body.subarray(o, o + slice);
    out.push(
      chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part,
    );
  }
  if (chunked) out.push(Buffer.from('0\r\n\r\n'));
  return out;
}

/** The error body of each protocol's paths. */
const ERROR_SHAPE: Readonly<Record<string, (body: Record<string, unknown>) => boolean>> = {
  '/v1/rerank': (b) => typeof b.id === 'string' && typeof b.message === 'string',
  '/v2/rerank': (b) => typeof b.id === 'string' && typeof b.message === 'string',
  '/rerank': (b) => typeof b.error === 'string' && typeof b.error_type === 'string',
  '/v1/gate': (b) => typeof (b.error as { type?: unknown } | undefined)?.type === 'string',
};

function bodyFor(path: string, documents: readonly string[]): string {
  if (path === '/rerank') return JSON.stringify({ query: 'boundary layer', texts: documents, truncate: true });
  if (path === '/v1/gate') return JSON.stringify({ query: 'boundary layer', passages: documents });
  if (path === '/v2/rerank') return JSON.stringify({ model: 'fast-path', query: 'boundary layer', documents });
  return JSON.stringify({ query: 'boundary layer', documents });
}

/**
 * Refusals a client must read as answers, against `serve` in its own process (`--processes 1` or
 * 2 by seed): bodies with a Content-Encoding are 415 with `Accept-Encoding: identity`; bodies over
 * the 2 MiB limit (3–12 MiB, by Content-Length or chunked, written in random slices with random
 * pauses, several at once) are 413 that the client reads — never EPIPE, ECONNRESET or a timeout —
 * and the same keep-alive connection then answers a valid request (200, or 429 when the host is
 * too busy for its budget); every error body is in its protocol's format.
 */
export async function serveHttpRefusals(seed: number): Promise<Report> {
  const rand = mulberry32(seed);
  const processes = seed % 2 === 1 ? 2 : 1;
  const key = `fault-key-${randomBytes(8).toString('hex')}`;
  const s = startServe(['--processes', String(processes)], { RELEVANCE_GATE_API_KEY: key });
  const outcomes: Record<string, number> = {};
  const count = (what: string): void => {
    outcomes[what] = (outcomes[what] ?? 0) + 1;
  };
  try {
    const url = await servingUrl(s);
    const paths = Object.keys(ERROR_SHAPE);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const docs = [...loadCollection('cranfield').docs.values()];
    const auth = { authorization: `Bearer ${key}` };

    // Encoded bodies: 415 whatever the coding (the server never inflates a body).
    for (let i = 0; i < (SHORT ? 6 : 16); i++) {
      const path = pick(paths);
      const coding = pick(['gzip', 'GZIP', 'deflate', 'br', 'identity, gzip', 'gzip, identity', 'x-custom']);
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'content-encoding': coding },
        body: randomBytes(200 + Math.floor(rand() * 2000)),
      });
      const text = await res.text();
      check(res.status === 415, `${path} with Content-Encoding ${coding}: ${res.status}`);
      check(res.headers.get('accept-encoding') === 'identity', `${path} 415 without Accept-Encoding: identity`);
      check(ERROR_SHAPE[path](JSON.parse(text) as Record<string, unknown>), `${path} 415 body ${text.slice(0, 200)}`);
      count('415');
    }

    // Bodies over the limit: several at once, each on its own keep-alive connection written by a
    // client that keeps sending its body after the answer came, then a valid request on the same
    // connection (served at once: the server read and discarded the rest of the big body).
    const rounds = SHORT ? 2 : 5;
    for (let round = 0; round < rounds; round++) {
      const parallel = 1 + Math.floor(rand() * (SHORT ? 3 : 6));
      await Promise.all(
        Array.from({ length: parallel }, async () => {
          const path = pick(paths);
          const size = 2 * 1024 * 1024 + 1 + Math.floor(rand() * 10 * 1024 * 1024);
          const body = Buffer.from(bodyFor(path, ['x'.repeat(size)]));
          const chunked = rand() < 0.3;
          const slice = 8 * 1024 + Math.floor(rand() * 1024 * 1024);
          const pauseMs = rand() < 0.5 ? 0 : 1 + Math.floor(rand() * 5);
          const what = `${path} ${(body.length / 1048576).toFixed(1)} MiB ${chunked ? 'chunked' : 'with length'} in ${Math.ceil(body.length / slice)} writes`;
          const connection = new RawConnection(url);
          try {
            const answer = connection.response(30_000);
            for (const bytes of requestBytes(path, auth, body, chunked, slice)) {
              if (!(await connection.write(bytes))) break;
              if (pauseMs > 0 && rand() < 0.2) await new Promise((r) => setTimeout(r, pauseMs));
            }
            const big = await answer;
            check(
              big !== undefined,
              `${what}: no answer (${connection.error ?? (connection.closed ? 'closed' : 'timeout')})`,
            );
            check(big.status === 413, `${what}: ${big.status}`);
            check(big.text.includes('2097152'), `${what}: 413 without the limit: ${big.text.slice(0, 200)}`);
            check(ERROR_SHAPE[path](JSON.parse(big.text) as Record<string, unknown>), `${what}: body ${big.text}`);
            check(connection.error === undefined, `${what}: the client's writes failed with ${connection.error}`);
            count('413');
            const next = Buffer.from(
              bodyFor(
                path,
                Array.from({ length: 8 }, () => pick(docs)),
              ),
            );
            const t0 = performance.now();
            for (const bytes of requestBytes(path, auth, next, false, next.length)) await connection.write(bytes);
            const served = await connection.response(5000);
            const ms = Math.round(performance.now() - t0);
            check(
              served !== undefined,
              `${what}: the next request on the connection got no answer in ${ms} ms (${connection.error ?? (connection.closed ? 'closed' : 'timeout')})`,
            );
            // Served, or refused for load (429: a busy host), on the same connection: an answer.
            check(
              served.status === 200 || served.status === 429,
              `${what}: the next request answered ${served.status}`,
            );
            count(`${served.status} on the same connection after 413`);
          } finally {
            connection.destroy();
          }
        }),
      );
    }

    // Fetch (undici), as the Cohere SDKs send: a body over the limit is a 413 it reads.
    for (let i = 0; i < (SHORT ? 4 : 10); i++) {
      const path = pick(paths);
      const size = 2 * 1024 * 1024 + 1 + Math.floor(rand() * 10 * 1024 * 1024);
      let outcome: string;
      try {
        const res = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: bodyFor(path, ['y'.repeat(size)]),
        });
        const text = await res.text();
        outcome = `${res.status}${text.includes('2097152') ? '' : ' without the limit'}`;
      } catch (error) {
        outcome = `${(error as Error).message} ${String((error as { cause?: { code?: string } }).cause?.code)}`;
      }
      check(outcome === '413', `fetch ${path} with ${size} bytes: ${outcome}`);
      count('413 (fetch)');
    }
    const exit = await stopServe(s);
    check(exit === 0, `serve exited with ${exit} on SIGTERM`);
    return { processes, outcomes };
  } finally {
    killTree(s);
  }
}

interface RerankAnswer {
  readonly results: ReadonlyArray<{ readonly index: number; readonly relevance_score: number }>;
}

/** Cohere rerank answers for `requests`, as scores by document index. */
async function rerankScores(
  url: string,
  requests: ReadonlyArray<{ query: string; documents: string[] }>,
): Promise<number[][]> {
  const out: number[][] = [];
  for (const body of requests) {
    const res = await fetch(`${url}/v1/rerank`, {
      method: 'POST',
      // A generous budget: the Redis read must not be skipped for a near deadline.
      headers: { 'content-type': 'application/json', 'x-budget-ms': '5000' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    check(res.status === 200, `rerank answered ${res.status}: ${text.slice(0, 200)}`);
    const scores = new Array<number>(body.documents.length);
    for (const r of (JSON.parse(text) as RerankAnswer).results) scores[r.index] = r.relevance_score;
    out.push(scores);
  }
  return out;
}

/** Scores that are not exactly the reference's. */
function differing(answers: readonly number[][], reference: readonly number[][]): number {
  let n = 0;
  for (const [r, scores] of answers.entries())
    for (const [d, score] of scores.entries()) if (score !== reference[r][d]) n++;
  return n;
}

function metricValue(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, 'm').exec(text);
  return m === null ? Number.NaN : Number(m[1]);
}

/**
 * Forged Redis entries under `RELEVANCE_GATE_CACHE_SIGNING_KEY` (`serve --redis-url`, 1 or 2
 * processes by seed): every entry a first server wrote is replaced by a valid-looking forgery
 * (scores 0.999, unsigned; signed with another key; a genuine entry of another key; a genuine
 * signature over altered bytes). A fresh server with the key serves none of them (its answers
 * equal the first server's exactly), counts every one as a signature failure, and writes signed
 * entries back. Long form: without a key the forgeries are served, as docs/cache.md says.
 */
export async function serveForgedRedisEntries(seed: number): Promise<Report> {
  if (!redisServerAvailable()) return { skipped: 'redis-server not installed' };
  const rand = mulberry32(seed);
  const processes = seed % 2 === 1 ? 2 : 1;
  const redis = new RedisServer(await freePort());
  await redis.start();
  const raw = new Redis(redis.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  raw.on('error', () => undefined);
  const signingKey = `fault-signing-${randomBytes(16).toString('hex')}`;
  const signer = new EntrySigner(signingKeyObject(signingKey));
  const foreign = new EntrySigner(signingKeyObject(`another-deployment-${randomBytes(16).toString('hex')}`));
  const data = loadCollection('cranfield');
  const queries = [...data.queries.values()];
  const docs = [...data.docs.values()];
  const requestsOf = (attempt: number): Array<{ query: string; documents: string[] }> =>
    Array.from({ length: SHORT ? 6 : 12 }, (_, i) => ({
      query: `${queries[Math.floor(rand() * queries.length)]} (${seed}.${attempt}.${i})`,
      documents: Array.from({ length: 8 }, () => docs[Math.floor(rand() * docs.length)]),
    }));
  const serve = (env: Record<string, string | undefined>): ServeProcess =>
    startServe(['--processes', String(processes), '--redis-url', redis.url], env);
  const started: ServeProcess[] = [];
  const report: Report = { processes };
  try {
    // A first server scores and writes signed entries. Its start-up warm-up writes entries of its
    // own (warm-up queries): those present before the requests are left alone.
    const a = serve({ RELEVANCE_GATE_CACHE_SIGNING_KEY: signingKey });
    started.push(a);
    const aUrl = await servingUrl(a);
    /** The keys once `expected` are there, or once their number stopped growing for 1 s. */
    const settledKeys = async (expected: number): Promise<string[]> => {
      // Values only: a pair being scored has a lease key beside its value's (`prefix{scope}!…`).
      const valueKeys = async () => (await raw.keys('rg:score:*')).filter((k) => !k.includes('}!'));
      let keys = await valueKeys();
      let stableSince = performance.now();
      const deadline = performance.now() + 15_000;
      while (keys.length < expected && performance.now() - stableSince < 1000 && performance.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        const next = await valueKeys();
        if (next.length !== keys.length) stableSince = performance.now();
        keys = next;
      }
      return keys;
    };
    // Writes to Redis are best effort: on a host too busy for the cache's Redis timeout, a batch
    // can be dropped (the breaker opens). Forged are the entries that landed; a request set none
    // of whose entries landed is tried again with new queries.
    let requests = requestsOf(0);
    let genuine: number[][] = [];
    let keys: string[] = [];
    for (let attempt = 0; attempt < 5 && keys.length === 0; attempt++) {
      if (attempt > 0) {
        await new Promise((r) => setTimeout(r, 1000));
        requests = requestsOf(attempt);
      }
      const known = new Set(await settledKeys(Number.POSITIVE_INFINITY));
      genuine = await rerankScores(aUrl, requests);
      keys = (await settledKeys(known.size + requests.length * 8)).filter((k) => !known.has(k)).sort();
    }
    const pairs = requests.length * 8;
    check(keys.length > 0, `no entry in Redis after 5 request sets of ${pairs} pairs`);
    report.entriesForged = keys.length;
    report.pairs = pairs;
    check((await stopServe(a)) === 0, 'the first server did not exit 0');

    // Every entry forged: valid-looking entries with the scores pushed to 0.999.
    const stored = (await raw.mgetBuffer(...keys)) as Array<Buffer | null>;
    const forgeries: Buffer[] = [];
    const kinds: Record<string, number> = {};
    for (let i = 0; i < keys.length; i++) {
      const value = stored[i];
      check(value !== null, `entry ${keys[i]} vanished`);
      const payload = signer.verify(keys[i], value);
      check(payload !== undefined, `entry ${keys[i]} is not signed with the deployment's key`);
      const entry = decodeEntry(payload);
      check(entry !== undefined, `entry ${keys[i]} does not decode`);
      const result = entry.result as { probabilities?: Record<string, number> };
      const forgedResult = {
        ...entry.result,
        probabilities: Object.fromEntries(Object.keys(result.probabilities ?? {}).map((s) => [s, 0.999])),
      };
      const forged = encodeEntry({ result: forgedResult as typeof entry.result, scoredAt: Date.now() - 1000 });
      const kind = Math.floor(rand() * 4);
      const name = ['unsigned', 'another key', 'moved', 'altered'][kind];
      kinds[name] = (kinds[name] ?? 0) + 1;
      if (kind === 0) forgeries.push(forged);
      else if (kind === 1) forgeries.push(foreign.sign(keys[i], forged));
      else if (kind === 2) {
        const other = stored[(i + 1) % keys.length] as Buffer; // a genuine value, signed for another key
        forgeries.push(other);
      } else {
        const signed = signer.sign(keys[i], payload);
        const altered = Buffer.concat([signed.subarray(0, 34), forged]); // the MAC of other bytes
        forgeries.push(altered);
      }
    }
    const forgeAll = async (): Promise<void> => {
      const pipeline = raw.pipeline();
      for (const [i, k] of keys.entries()) pipeline.set(k, forgeries[i], 'PX', 3600_000);
      await pipeline.exec();
    };
    await forgeAll();
    report.forged = kinds;

    // A fresh server with the key: none served, all counted, rescored and written back signed.
    const b = serve({ RELEVANCE_GATE_CACHE_SIGNING_KEY: signingKey });
    started.push(b);
    const bUrl = await servingUrl(b);
    // Counted from here: the start-up warm-up read its own (genuine) entries.
    const counters = async (): Promise<Record<'failures' | 'hits' | 'unread', number>> => {
      const text = await (await fetch(`${bUrl}/metrics`)).text();
      const total = (name: string): number => metricValue(text, `relevance_gate_cache_l2_${name}_total`);
      return {
        failures: total('signature_failures'),
        hits: total('hits'),
        // Reads that did not happen or did not finish (a busy host: a read past the cache timeout).
        unread: total('errors') + total('skipped'),
      };
    };
    const before = await counters();
    const answers = await rerankScores(bUrl, requests);
    const served = differing(answers, genuine);
    check(served === 0, `${served} of ${pairs} answers differ from the genuine scores: forged entries served`);
    const after = await counters();
    const failures = after.failures - before.failures;
    const hits = after.hits - before.hits;
    const unread = after.unread - before.unread;
    check(hits === 0, `${hits} Redis hits among forged entries`);
    // Every forged entry read is counted; one not read (its read timed out) was rescored anyway.
    check(
      failures === keys.length || (failures < keys.length && unread > 0),
      `signature failures counted: ${failures} of ${keys.length} forged entries, ${unread} reads unfinished`,
    );
    check((await stopServe(b)) === 0, 'the server with the key did not exit 0');
    let rewritten = 0;
    let untouched = 0;
    for (const [i, value] of ((await raw.mgetBuffer(...keys)) as Array<Buffer | null>).entries()) {
      if (value !== null && signer.verify(keys[i], value) !== undefined) rewritten++;
      else if (value?.equals(forgeries[i])) untouched++;
    }
    // Nothing but the server's signed entries (or the forgeries it did not get to rewrite).
    check(
      rewritten + untouched === keys.length,
      `${rewritten} of ${keys.length} entries written back signed, ${untouched} forgeries left, ${failures} read`,
    );
    report.withKey = { served, signatureFailures: failures, unfinishedReads: unread, rewrittenSigned: rewritten };

    if (!SHORT) {
      // Without a key (documented: whoever writes to Redis decides the scores), for the record.
      await forgeAll();
      const c = serve({ RELEVANCE_GATE_CACHE_SIGNING_KEY: undefined });
      started.push(c);
      const unsigned = await rerankScores(await servingUrl(c), requests);
      const differ = differing(unsigned, genuine);
      check((await stopServe(c)) === 0, 'the server without a key did not exit 0');
      report.withoutKey = { answersChangedByForgeries: differ, of: pairs };
    }
    return report;
  } finally {
    for (const s of started) killTree(s);
    raw.disconnect();
    await redis.kill();
  }
}
