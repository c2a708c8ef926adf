/**
 * Load driver of the admission benchmark (bench/admission.ts) and of its short form
 * (test/server/overload-admission.test.ts): a keep-alive HTTP client with a socket bound, a closed
 * loop that measures a model's capacity, an open loop that offers a fixed rate whatever the answers
 * (latency counted from each request's scheduled send, so queueing in the client counts too), and
 * the summary the acceptance reads: goodput against capacity, how fast refusals came, the 200s'
 * latency, and every status.
 */
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';

export interface Outcome {
  /** HTTP status; 0 for a connection error or a client timeout. */
  readonly status: number;
  /** ms from the scheduled send to the end of the answer. */
  readonly latencyMs: number;
  /** ms from the actual send to the end of the answer. */
  readonly sentLatencyMs: number;
  /** The server's own time (server-timing `dur`), NaN when absent. */
  readonly serverMs: number;
  readonly retryAfter: string | null;
  readonly error?: string;
  /** Of a refusal: what refused it (the message's gist, numbers left out). */
  readonly refusal?: string;
  /** ms since the start of the run when the request was scheduled. */
  readonly atMs: number;
}

export interface ClientOptions {
  /** Connections kept open at most; more requests wait for one (their wait counts in latency). */
  readonly sockets: number;
  /** A request unanswered this long is abandoned (status 0, `timeout`). */
  readonly timeoutMs?: number;
}

export interface HttpClient {
  post(
    path: string,
    body: Buffer,
    headers: Record<string, string>,
  ): Promise<{
    status: number;
    text: string;
    serverMs: number;
    retryAfter: string | null;
  }>;
  close(): void;
}

/**
 * A lean HTTP/1.1 client over raw sockets (keep-alive, one request at a time per socket, no
 * pipelining, as HTTP clients behave): a few µs per request where node:http's client costs tens,
 * so one process can offer several thousand requests/s while the server shares the machine.
 * Responses need a Content-Length (the server always sends one).
 */
export function createRawClient(url: string, options: ClientOptions): HttpClient {
  const base = new URL(url);
  const port = Number(base.port || 80);
  const host = base.hostname;
  const timeoutMs = options.timeoutMs ?? 10_000;
  interface Job {
    readonly head: Buffer;
    readonly body: Buffer;
    readonly resolve: (r: { status: number; text: string; serverMs: number; retryAfter: string | null }) => void;
    readonly reject: (e: Error) => void;
    timer?: NodeJS.Timeout;
  }
  const queue: Job[] = [];
  const idle: Socket[] = [];
  let open = 0;
  let closed = false;
  const current = new Map<Socket, Job>();

  const finish = (
    socket: Socket,
    job: Job,
    result: { status: number; text: string; serverMs: number; retryAfter: string | null } | Error,
  ): void => {
    clearTimeout(job.timer);
    current.delete(socket);
    if (result instanceof Error) job.reject(result);
    else job.resolve(result);
  };
  const give = (socket: Socket): void => {
    const job = queue.shift();
    if (job === undefined) {
      idle.push(socket);
      return;
    }
    current.set(socket, job);
    job.timer = setTimeout(() => socket.destroy(new Error('timeout')), timeoutMs);
    socket.cork();
    socket.write(job.head);
    socket.write(job.body);
    socket.uncork();
  };
  const connect = (): void => {
    open++;
    const socket = netConnect({ host, port, noDelay: true });
    let buffer: Buffer = Buffer.alloc(0);
    socket.on('connect', () => give(socket));
    socket.on('data', (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      while (true) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? '0');
        if (buffer.length < end + 4 + length) return;
        const text = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
        buffer = buffer.subarray(end + 4 + length);
        const job = current.get(socket);
        if (job === undefined) return;
        const timing = /\r\nserver-timing: *total;dur=([\d.]+)/i.exec(head);
        finish(socket, job, {
          status: Number(head.slice(9, 12)),
          text,
          serverMs: timing === null ? Number.NaN : Number(timing[1]),
          retryAfter: /\r\nretry-after: *(\S+)/i.exec(head)?.[1] ?? null,
        });
        if (/\r\nconnection: *close/i.test(head)) {
          socket.end();
          return;
        }
        give(socket);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      open--;
      const i = idle.indexOf(socket);
      if (i >= 0) idle.splice(i, 1);
      const job = current.get(socket);
      if (job !== undefined) finish(socket, job, new Error('connection closed'));
      if (!closed && queue.length > 0) connect();
    });
  };
  return {
    post(path, body, headers) {
      return new Promise((resolve, reject) => {
        let head = `POST ${path} HTTP/1.1\r\nhost: ${host}:${port}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n`;
        for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
        queue.push({ head: Buffer.from(`${head}\r\n`, 'latin1'), body, resolve, reject });
        const socket = idle.pop();
        if (socket !== undefined) give(socket);
        else if (open < options.sockets) connect();
      });
    },
    close() {
      closed = true;
      for (const socket of [...idle, ...current.keys()]) socket.destroy();
    },
  };
}

export function createClient(url: string, options: ClientOptions): HttpClient {
  const base = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.sockets, maxFreeSockets: options.sockets });
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    post(path, body, headers) {
      return new Promise((resolve, reject) => {
        const req = httpRequest(
          {
            hostname: base.hostname,
            port: base.port,
            path,
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': body.length, ...headers },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const timing = /dur=([\d.]+)/.exec(String(res.headers['server-timing'] ?? ''));
              const retry = res.headers['retry-after'];
              resolve({
                status: res.statusCode ?? 0,
                text: Buffer.concat(chunks).toString('utf8'),
                serverMs: timing === null ? Number.NaN : Number(timing[1]),
                retryAfter: retry === undefined ? null : String(retry),
              });
            });
            res.on('error', reject);
          },
        );
        const timer = setTimeout(() => req.destroy(new Error('timeout')), timeoutMs);
        req.on('close', () => clearTimeout(timer));
        req.on('error', reject);
        req.end(body);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

/** One request of the workload: a path and its JSON body. */
export interface WorkItem {
  readonly path: string;
  readonly body: Buffer;
}

interface Doc {
  readonly title?: string;
  readonly text: string;
}

/**
 * `count` requests of `docs` documents each, in `protocol`'s body shape: SciFact queries, each with
 * documents drawn at random (seeded) from the collection, cut to `maxChars`; every request is a
 * distinct (query, documents) list, so a server without a cache scores every pair.
 */
export function scifactWork(options: {
  readonly dataDir: string;
  readonly docs: number;
  readonly count: number;
  readonly protocol: 'cohere' | 'tei' | 'gate';
  readonly model?: string;
  readonly maxChars?: number;
  readonly seed?: number;
}): WorkItem[] {
  const read = (file: string): Array<Record<string, string>> =>
    readFileSync(join(options.dataDir, file), 'utf8')
      .split('\n')
      .filter((l) => l.trim().length > 0)
      .map((l) => JSON.parse(l) as Record<string, string>);
  const docs: Doc[] = read('docs.jsonl').map((d) => ({ title: d.title, text: d.text }));
  const queries = read('queries.jsonl').map((q) => q.text);
  let state = options.seed ?? 1;
  const random = (): number => {
    // mulberry32
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const maxChars = options.maxChars ?? 1800;
  const out: WorkItem[] = [];
  for (let i = 0; i < options.count; i++) {
    const query = queries[Math.floor(random() * queries.length)];
    const texts = Array.from({ length: options.docs }, () => {
      const d = docs[Math.floor(random() * docs.length)];
      return `${d.title ?? ''} ${d.text}`.trim().slice(0, maxChars);
    });
    const model = options.model === undefined ? {} : { model: options.model };
    const [path, body] =
      options.protocol === 'cohere'
        ? ['/v1/rerank', { ...model, query, documents: texts }]
        : options.protocol === 'tei'
          ? ['/rerank', { ...model, query, texts, truncate: true }]
          : ['/v1/gate', { ...model, query, passages: texts }];
    out.push({ path: path as string, body: Buffer.from(JSON.stringify(body)) });
  }
  return out;
}

/** Closed loop: `concurrency` callers, each sending the next request when its last one answered. Answers (200) per second. */
export async function closedLoop(
  client: HttpClient,
  work: readonly WorkItem[],
  options: {
    readonly concurrency: number;
    readonly seconds: number;
    readonly budgetMs: number;
    readonly offset?: number;
  },
): Promise<{ readonly rps: number; readonly statuses: Record<number, number> }> {
  let next = options.offset ?? 0;
  let ok = 0;
  const statuses: Record<number, number> = {};
  const t0 = performance.now();
  const end = t0 + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < end) {
        const item = work[next++ % work.length];
        try {
          const res = await client.post(item.path, item.body, { 'x-budget-ms': String(options.budgetMs) });
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status === 200) ok++;
        } catch {
          statuses[0] = (statuses[0] ?? 0) + 1;
        }
      }
    }),
  );
  return { rps: ok / ((performance.now() - t0) / 1000), statuses };
}

/**
 * Open loop at `rps` for `seconds`: Poisson arrivals (seeded), each request sent at its scheduled
 * time whatever the earlier ones do, with `x-budget-ms` = the budget left at the actual send and,
 * with `requestStart`, `x-request-start` = the scheduled send time (so the server counts the wait
 * in this client's socket queue too).
 */
export async function openLoop(
  client: HttpClient,
  work: readonly WorkItem[],
  options: {
    readonly rps: number;
    readonly seconds: number;
    readonly budgetMs: number;
    readonly requestStart: boolean;
    readonly seed?: number;
    readonly offset?: number;
  },
): Promise<Outcome[]> {
  let state = options.seed ?? 7;
  const random = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pending: Array<Promise<Outcome>> = [];
  const t0 = performance.now();
  const wallStart = Date.now();
  const endAt = options.seconds * 1000;
  let at = 0;
  let i = options.offset ?? 0;
  while (true) {
    at += (-Math.log(1 - random()) * 1000) / options.rps;
    if (at >= endAt) break;
    const wait = t0 + at - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const scheduled = t0 + at;
    const item = work[i++ % work.length];
    const sentAt = performance.now();
    const left = options.budgetMs - (sentAt - scheduled);
    const headers: Record<string, string> = { 'x-budget-ms': Math.max(0.001, left).toFixed(3) };
    if (options.requestStart) headers['x-request-start'] = `t=${(wallStart + at).toFixed(3)}`;
    const atMs = at;
    pending.push(
      client.post(item.path, item.body, headers).then(
        (res) => {
          const now = performance.now();
          return {
            status: res.status,
            latencyMs: now - scheduled,
            sentLatencyMs: now - sentAt,
            serverMs: res.serverMs,
            retryAfter: res.retryAfter,
            atMs,
            ...(res.status === 429 ? { refusal: refusalKind(res.text) } : {}),
          };
        },
        (error: unknown) => {
          const now = performance.now();
          return {
            status: 0,
            latencyMs: now - scheduled,
            sentLatencyMs: now - sentAt,
            serverMs: Number.NaN,
            retryAfter: null,
            error: error instanceof Error ? error.message : String(error),
            atMs,
          };
        },
      ),
    );
  }
  return Promise.all(pending);
}

/** The gist of a refusal's message: which rule refused it. */
function refusalKind(text: string): string {
  const m =
    /waited \d+ ms, past its|event loop has a standing queue|requests in flight|pairs in flight|predicted to complete|could not be scored|could be scored|cancelled/.exec(
      text,
    );
  return m === null ? text.slice(0, 60) : m[0].replace(/\d+/g, 'N');
}

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export interface Summary {
  readonly sent: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly ok: number;
  readonly refused: number;
  readonly serverErrors: number;
  readonly clientErrors: number;
  readonly goodputRps: number;
  /** Goodput / capacity. */
  readonly goodputShare: number;
  /** 200s answered within the budget (from the scheduled send) per second, and / capacity. */
  readonly inBudgetRps: number;
  readonly inBudgetShare: number;
  readonly okLatencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly refusedLatencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Refusals answered within `refusalBoundMs` of their scheduled send. */
  readonly refusedWithinBound: number;
  readonly refusedWithinBoundShare: number;
  /** Refusals within the bound, counted from the actual send (client queueing left out). */
  readonly refusedWithinBoundFromSend: number;
  readonly refusalsWithoutRetryAfter: number;
  /** Refusals by rule: count, p50 / p99 latency from the scheduled send. */
  readonly refusalsByRule: Readonly<Record<string, { count: number; p50: number; p99: number }>>;
  /** The server's own time (server-timing) of the 200s and of the 429s: p50 / p99 / max ms. */
  readonly okServerMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly refusedServerMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** How late this client sent its requests (scheduled → handed to a socket), p50 / p99 / max ms. */
  readonly sendLagMs: { readonly p50: number; readonly p99: number; readonly max: number };
}

export function summarize(
  outcomes: readonly Outcome[],
  options: {
    readonly capacityRps: number;
    readonly seconds: number;
    readonly refusalBoundMs: number;
    readonly budgetMs?: number;
  },
): Summary {
  const statuses: Record<string, number> = {};
  for (const o of outcomes) statuses[o.status] = (statuses[o.status] ?? 0) + 1;
  const ok = outcomes.filter((o) => o.status === 200);
  const refused = outcomes.filter((o) => o.status === 429);
  const lat = (list: readonly Outcome[]) => {
    const values = list.map((o) => o.latencyMs);
    return {
      p50: quantile(values, 0.5),
      p99: quantile(values, 0.99),
      max: values.length === 0 ? Number.NaN : values.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY),
    };
  };
  const serverLat = (list: readonly Outcome[]) => {
    const values = list.map((o) => o.serverMs).filter((v) => Number.isFinite(v));
    return {
      p50: quantile(values, 0.5),
      p99: quantile(values, 0.99),
      max: values.length === 0 ? Number.NaN : values.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY),
    };
  };
  const within = refused.filter((o) => o.latencyMs <= options.refusalBoundMs).length;
  const goodputRps = ok.length / options.seconds;
  const inBudget = ok.filter((o) => o.latencyMs <= (options.budgetMs ?? Number.POSITIVE_INFINITY)).length;
  return {
    sent: outcomes.length,
    statuses,
    ok: ok.length,
    refused: refused.length,
    serverErrors: outcomes.filter((o) => o.status >= 500).length,
    clientErrors: outcomes.filter((o) => o.status === 0).length,
    goodputRps,
    goodputShare: goodputRps / options.capacityRps,
    inBudgetRps: inBudget / options.seconds,
    inBudgetShare: inBudget / options.seconds / options.capacityRps,
    okLatencyMs: lat(ok),
    refusedLatencyMs: lat(refused),
    refusedWithinBound: within,
    refusedWithinBoundShare: refused.length === 0 ? 1 : within / refused.length,
    refusedWithinBoundFromSend: refused.filter((o) => o.sentLatencyMs <= options.refusalBoundMs).length,
    refusalsWithoutRetryAfter: refused.filter((o) => o.retryAfter === null || !(Number(o.retryAfter) >= 1)).length,
    okServerMs: serverLat(ok),
    refusedServerMs: serverLat(refused),
    sendLagMs: (() => {
      const lags = outcomes.map((o) => o.latencyMs - o.sentLatencyMs);
      return { p50: quantile(lags, 0.5), p99: quantile(lags, 0.99), max: lags.reduce((a, b) => Math.max(a, b), 0) };
    })(),
    refusalsByRule: Object.fromEntries(
      [...new Set(refused.map((o) => o.refusal ?? ''))].map((rule) => {
        const values = refused.filter((o) => (o.refusal ?? '') === rule).map((o) => o.latencyMs);
        return [rule, { count: values.length, p50: quantile(values, 0.5), p99: quantile(values, 0.99) }];
      }),
    ),
  };
}

export function formatSummary(s: Summary, capacityRps: number, boundMs: number): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
  return [
    `sent ${s.sent}; statuses ${JSON.stringify(s.statuses)}`,
    `goodput ${f(s.goodputRps)} answers/s = ${(100 * s.goodputShare).toFixed(1)} % of the measured capacity ${f(capacityRps)}/s; within the budget ${f(s.inBudgetRps)}/s = ${(100 * s.inBudgetShare).toFixed(1)} %`,
    `200s: p50 ${f(s.okLatencyMs.p50)} ms, p99 ${f(s.okLatencyMs.p99)} ms, max ${f(s.okLatencyMs.max)} ms (from the scheduled send)`,
    `429s: ${s.refused}, p50 ${f(s.refusedLatencyMs.p50)} ms, p99 ${f(s.refusedLatencyMs.p99)} ms, max ${f(s.refusedLatencyMs.max)} ms; within ${boundMs} ms: ${s.refusedWithinBound} (${(100 * s.refusedWithinBoundShare).toFixed(2)} %; from the actual send ${s.refusedWithinBoundFromSend}); without Retry-After ${s.refusalsWithoutRetryAfter}`,
    `server-timing: 200s p50 ${f(s.okServerMs.p50)} / p99 ${f(s.okServerMs.p99)} / max ${f(s.okServerMs.max)} ms; 429s p50 ${f(s.refusedServerMs.p50)} / p99 ${f(s.refusedServerMs.p99)} / max ${f(s.refusedServerMs.max)} ms`,
    `429s by rule: ${Object.entries(s.refusalsByRule)
      .map(([rule, r]) => `"${rule}" ${r.count} (p50 ${f(r.p50)} ms, p99 ${f(r.p99)} ms)`)
      .join('; ')}`,
    `5xx ${s.serverErrors}; connection errors / client timeouts ${s.clientErrors}`,
    `client send lag (scheduled → sent, includes waiting for a free socket): p50 ${f(s.sendLagMs.p50)} ms, p99 ${f(s.sendLagMs.p99)} ms, max ${f(s.sendLagMs.max)} ms`,
  ].join('\n');
}
