/**
 * The open-loop generator's HTTP target: each `filter` call is one request to a relevance-gate
 * server (or any server speaking the protocol) over a keep-alive connection pool. The remaining
 * budget travels in `x-budget-ms` (so a request the generator sent late gets less time, exactly
 * as in-process), request bodies are serialised once per workload query, and a non-2xx answer is
 * an error of that request (the table counts it), except 429: a refusal under load, counted apart.
 * Each request also carries its send time in `x-request-start` (epoch ms), as a load balancer in
 * front of the server would: the server then counts the time the bytes waited in its socket, which
 * it cannot see otherwise, against the budget.
 */
import { Agent, request as httpRequest } from 'node:http';
import type { Passage } from '../../types.js';
import type { LoadTarget, TargetResult } from './open-loop.js';
import { HttpStatusError } from './errors.js';

export type HttpProtocol = 'cohere' | 'tei' | 'gate';

export interface HttpTargetOptions {
  /** Base URL, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly protocol: HttpProtocol;
  /** Model name sent in the body (cohere / gate; TEI servers ignore it). */
  readonly model?: string;
  readonly apiKey?: string;
  /** Connections kept open at most (more requests wait for one: counted in their latency). Default 128. */
  readonly maxSockets?: number;
  /** Send `x-request-start` with each request's send time. Default true. */
  readonly requestStart?: boolean;
}

export interface HttpTarget extends LoadTarget {
  readonly path: string;
  /** Responses by HTTP status. */
  readonly statuses: Readonly<Record<string, number>>;
  close(): void;
}

/** Idle keep-alive connections are closed after this long (below common server timeouts: 60–75 s). */
const IDLE_SOCKET_TIMEOUT_MS = 30_000;

const PATHS: Readonly<Record<HttpProtocol, string>> = { cohere: '/v1/rerank', tei: '/rerank', gate: '/v1/gate' };

function bodyOf(
  protocol: HttpProtocol,
  model: string | undefined,
  query: string,
  passages: readonly Passage[],
): string {
  const texts = passages.map((p) => (p.title === undefined || p.title === '' ? p.text : `${p.title} ${p.text}`));
  switch (protocol) {
    case 'cohere':
      return JSON.stringify({ ...(model === undefined ? {} : { model }), query, documents: texts });
    case 'tei':
      return JSON.stringify({ ...(model === undefined ? {} : { model }), query, texts, truncate: true });
    case 'gate':
      return JSON.stringify({
        ...(model === undefined ? {} : { model }),
        query,
        passages: passages.map((p) => ({
          id: p.id,
          text: p.text,
          ...(p.title === undefined ? {} : { title: p.title }),
        })),
      });
  }
}

interface GateResponseItem {
  readonly degraded?: string | null;
}

interface GateResponse {
  readonly tier?: TargetResult['tier'];
  readonly stats?: TargetResult['stats'];
  readonly included?: readonly GateResponseItem[];
  readonly conflicting?: readonly GateResponseItem[];
  readonly excluded?: readonly GateResponseItem[];
}

/** Pairs of a gate answer by their degrade label; undefined when none is degraded. */
function degradedOf(response: GateResponse): Record<string, number> | undefined {
  let out: Record<string, number> | undefined;
  for (const list of [response.included, response.conflicting, response.excluded]) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const label = item?.degraded;
      if (typeof label !== 'string') continue;
      out ??= {};
      out[label] = (out[label] ?? 0) + 1;
    }
  }
  return out;
}

/** The `total` duration of a Server-Timing header (`total;dur=12.34`), ms. */
function serverTotalMs(header: string | string[] | undefined): number | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  const m = text === undefined ? null : /(?:^|,)\s*total;dur=([\d.]+)/.exec(text);
  return m === null ? undefined : Number(m[1]);
}

export function createHttpTarget(options: HttpTargetOptions): HttpTarget {
  const base = new URL(options.url);
  if (base.protocol !== 'http:') throw new Error(`only http:// targets are supported, got ${options.url}`);
  const path = `${base.pathname.replace(/\/$/, '')}${PATHS[options.protocol]}`;
  // An idle connection is closed by this side first: Node's agent honours the server's
  // `Keep-Alive: timeout=N` hint (closing 1 s early) only when it has a timeout of its own, and
  // without one a request sent on a connection the server is closing at that moment fails with
  // ECONNRESET (the keep-alive race), which would count as the target's error.
  const agent = new Agent({
    keepAlive: true,
    maxSockets: options.maxSockets ?? 128,
    maxFreeSockets: 128,
    timeout: IDLE_SOCKET_TIMEOUT_MS,
  });
  const bodies = new WeakMap<readonly Passage[], Buffer>();
  const statuses: Record<string, number> = {};
  const headersBase: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey !== undefined) headersBase.authorization = `Bearer ${options.apiKey}`;
  const requestStart = options.requestStart ?? true;

  const post = (
    body: Buffer,
    budgetMs: number | undefined,
    sentAtMs: number,
  ): Promise<{ status: number; text: string; serverMs: number | undefined; writeMs: number | undefined }> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...headersBase, 'content-length': body.length };
      if (budgetMs !== undefined) headers['x-budget-ms'] = Math.max(0.001, budgetMs).toFixed(3);
      // Whole milliseconds, never ahead of the server's own Date.now() on the same host.
      if (requestStart) headers['x-request-start'] = `t=${sentAtMs}`;
      const sentAt = performance.now();
      let writeMs: number | undefined;
      const req = httpRequest(
        { hostname: base.hostname, port: base.port || 80, path, method: 'POST', agent, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString('utf8'),
              serverMs: serverTotalMs(res.headers['server-timing']),
              writeMs,
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.once('finish', () => {
        writeMs = performance.now() - sentAt;
      });
      req.end(body);
    });

  return {
    path,
    statuses,
    async filter(query, passages, filterOptions) {
      let body = bodies.get(passages);
      if (body === undefined) {
        body = Buffer.from(bodyOf(options.protocol, options.model, query, passages));
        bodies.set(passages, body);
      }
      const deadline = filterOptions?.deadline;
      // A budget already spent still goes out (the server answers at once): the latency counts.
      const sentAtMs = Date.now();
      const { status, text, serverMs, writeMs } = await post(
        body,
        deadline === undefined ? undefined : deadline - sentAtMs,
        sentAtMs,
      );
      statuses[status] = (statuses[status] ?? 0) + 1;
      const timing = {
        ...(serverMs === undefined ? {} : { serverMs }),
        ...(writeMs === undefined ? {} : { writeMs }),
      };
      if (status < 200 || status >= 300) throw new HttpStatusError(status, text, timing);
      const k = passages.length;
      if (options.protocol === 'gate') {
        const parsed = JSON.parse(text) as GateResponse;
        if (parsed.tier !== undefined && parsed.stats !== undefined) {
          const degraded = degradedOf(parsed);
          return {
            tier: parsed.tier,
            stats: parsed.stats,
            errors: [],
            status,
            ...timing,
            ...(degraded === undefined ? {} : { degraded }),
          };
        }
      } else JSON.parse(text);
      return {
        tier: { scorer: 'http', name: 'http', counts: {} },
        stats: { retrieved: k, unscored: 0, unscoredByReason: {} },
        errors: [],
        status,
        ...timing,
      };
    },
    close() {
      agent.destroy();
    },
  };
}
