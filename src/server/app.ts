/**
 * The Fastify application: options (body limit, request ids, strict schema validation that still
 * accepts clients' extra fields), the request hooks (arrival time for deadlines, request id on
 * every response, draining, API key, content coding), admission at arrival in front of Fastify (the
 * concurrent-request bound, the event loop's standing queue, the request's age against its
 * budget), protocol-shaped error and not-found handlers
 * (also for what Node's HTTP parser refuses before Fastify sees a request), and the health and
 * metrics routes. Protocol routes live in ./protocols.
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ArrivalStamp, REQUEST_START_HEADER, ServerAdmission } from './admission.js';
import { createApiKeyCheck } from './auth.js';
import type { ServerConfig } from './config/index.js';
import type { ServerDecisions } from './decisions.js';
import { authorizationOf, INSPECT_LOGIN_PATH, registerInspectorRoutes } from './inspector.js';
import type { ShadowRunner } from './shadow.js';
import { ApiError, formatError, formatErrorOf, protocolOfUrl, type Protocol } from './errors.js';
import type { LagTracker } from './lag.js';
import type { ServerMetrics } from './metrics.js';
import { registerCohereRoutes } from './protocols/cohere.js';
import { registerGateRoutes } from './protocols/gate.js';
import { registerTeiRoutes } from './protocols/tei.js';
import type { ModelRegistry } from './registry.js';
import { answerMargin, BUDGET_HEADER, toApiError, type Lifecycle, type ServerContext } from './scoring.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Routes open without the API key (probes and scrapers). */
const OPEN_PATHS: ReadonlySet<string> = new Set([
  '/health',
  '/health/live',
  '/health/ready',
  '/metrics',
  INSPECT_LOGIN_PATH,
]);
/** Routes that score (admission applies to them); the gate API's may carry their budget in the body. */
const SCORING_ROUTES: ReadonlySet<string> = new Set([
  '/v1/rerank',
  '/v2/rerank',
  '/rerank',
  '/v1/gate',
  '/v1/gate/stream',
]);
const BODY_BUDGET_ROUTES: ReadonlySet<string> = new Set(['/v1/gate', '/v1/gate/stream']);
/** The arrival stamp the front (admitAtArrival) puts on a raw request, for the onRequest hook. */
const ARRIVAL = Symbol('relevance-gate.arrival');
type StampedRequest = IncomingMessage & { [ARRIVAL]?: ArrivalStamp };
/** Fastify's default keep-alive timeout, kept for the server built here (Fastify builds none with a serverFactory). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
const REQUEST_TIMEOUT_MS = 120_000;
/** Realm of the `WWW-Authenticate: Bearer` challenge on 401 answers (RFC 6750). */
export const AUTH_REALM = 'relevance-gate';
/**
 * A body refused before it was read (413 by Content-Length, 401, 415, …) is still read and
 * discarded after the answer, up to this many bytes and this long, so the client finishes sending
 * and reads the answer instead of failing its write (EPIPE / ECONNRESET) on a closed connection.
 * Past either bound, or when Content-Length announces more, the connection is closed instead.
 */
const DRAIN_MIN_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 10_000;

export interface AppOptions {
  readonly config: ServerConfig;
  readonly registry: ModelRegistry;
  readonly metrics: ServerMetrics;
  readonly lifecycle: Lifecycle;
  readonly lag: LagTracker;
  readonly version: string;
  /** Text of /metrics; default this process's registry (a cluster worker asks the primary). */
  readonly metricsText?: () => Promise<string>;
  /**
   * A cluster worker's view of its cluster: true while another worker serves. Readiness is the
   * cluster's (one port), so a draining worker then still answers it 200 for the requests it
   * finishes; its connections close as a draining server's do.
   */
  readonly clusterServing?: () => boolean;
  /** The decision log and the inspector's window (src/server/decisions.ts); undefined when off. */
  readonly decisions?: ServerDecisions;
  /** Shadow models (src/server/shadow.ts); undefined when none. */
  readonly shadows?: ShadowRunner;
}

/** A client's own `x-request-id` when it is 1–128 of [A-Za-z0-9._:-], else a new UUID. */
function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function clip(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** Fastify/ajv/parser errors → API error kinds, with messages that never echo the body. */
function classify(error: FastifyError | Error, bodyLimit: number): ApiError {
  if (error instanceof ApiError) return error;
  const fe = error as FastifyError & { validation?: unknown };
  if (fe.validation !== undefined) return new ApiError('invalid_request', `invalid request: ${clip(fe.message)}`);
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', `request body is larger than the limit of ${bodyLimit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'unsupported content type; send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'request body must not be empty');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'request body length does not match Content-Length');
    default:
      break;
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (error instanceof SyntaxError || (status === 400 && /JSON|prototype|constructor/i.test(fe.message)))
    return new ApiError('invalid_request', 'request body is not valid JSON');
  if (status === 413)
    return new ApiError('payload_too_large', `request body is larger than the limit of ${bodyLimit} bytes`);
  if (status === 415) return new ApiError('unsupported_media_type', 'unsupported content type; send application/json');
  if (status === 404) return new ApiError('not_found', 'not found');
  if (status === 405) return new ApiError('method_not_allowed', 'method not allowed');
  if (status >= 400 && status < 500) return new ApiError('invalid_request', 'bad request');
  return toApiError(error);
}

/** True for an absent Content-Encoding or one that only lists `identity` (no coding). */
function isIdentityEncoding(header: string | undefined): boolean {
  if (header === undefined) return true;
  return header.split(',').every((c) => {
    const coding = c.trim().toLowerCase();
    return coding === '' || coding === 'identity';
  });
}

/**
 * Reads and discards the rest of a request body whose answer is already decided, at most
 * `maxBytes` and `maxMs` (then the connection is closed once the answer is written); the
 * connection stays usable when the body ends within both.
 */
function drainRequestBody(req: IncomingMessage, res: ServerResponse, maxBytes: number, maxMs: number): void {
  let received = 0;
  const cleanup = (): void => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', cleanup);
    req.off('close', cleanup);
  };
  const cut = (): void => {
    cleanup();
    const destroy = (): void => {
      // An injected request (warm-up, tests) has a stand-in socket without destroy().
      if (typeof req.socket?.destroy === 'function') req.socket.destroy();
    };
    if (res.writableFinished) destroy();
    else res.once('finish', destroy);
  };
  const onData = (chunk: Buffer | string): void => {
    received += chunk.length;
    if (received > maxBytes) cut();
  };
  const timer = setTimeout(cut, maxMs);
  timer.unref();
  req.on('data', onData);
  req.once('end', cleanup);
  req.once('close', cleanup);
  req.resume();
}

/** `[status, reason, message]` of a request Node's HTTP parser refused. */
function clientErrorStatus(code: string | undefined): readonly [number, string, string] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'Request Timeout', 'the request was not received in time'];
  if (code === 'HPE_HEADER_OVERFLOW')
    return [431, 'Request Header Fields Too Large', 'the request headers are larger than the server accepts'];
  return [400, 'Bad Request', 'malformed HTTP request (request line or header bytes)'];
}

/** The path of the request line at the start of the bytes the parser refused, when readable. */
function pathOfRawPacket(raw: unknown): string | undefined {
  if (!Buffer.isBuffer(raw)) return undefined;
  const match = /^[A-Z]{3,10} (\/[^\s?#]*)/.exec(raw.subarray(0, 2048).toString('latin1'));
  return match?.[1];
}

function protocolOf(request: FastifyRequest): Protocol {
  const configured = (request.routeOptions.config as { protocol?: Protocol } | undefined)?.protocol;
  return configured ?? protocolOfUrl(pathOf(request.url));
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, registry, metrics, lifecycle } = options;
  const fastifyModule = await import('fastify');
  const Fastify = fastifyModule.default;
  const admission = new ServerAdmission({ ...config.admission, maxStartAgeMs: config.limits.maxBudgetMs }, options.lag);
  const ctx: ServerContext = {
    config,
    registry,
    metrics,
    lifecycle,
    lag: options.lag,
    admission,
    ...(options.decisions === undefined ? {} : { decisions: options.decisions }),
    ...(options.shadows === undefined ? {} : { shadows: options.shadows }),
  };
  // The longest default budget of a model: a rerank request's budget when it sends no header
  // (its model, in the body, is not known at arrival).
  const longestDefaultBudget = Math.max(
    config.budgetMs,
    ...Object.values(config.models).map((m) => m.budgetMs ?? config.budgetMs),
  );
  /** The budget a request can be held to before its body is read; undefined when only the body can tell. */
  const budgetAtArrival = (req: IncomingMessage, route: string): number | undefined => {
    const header = req.headers[BUDGET_HEADER];
    if (header !== undefined) {
      const n = Number(Array.isArray(header) ? header[0] : header);
      // A malformed budget is refused once the body is read, in the protocol's words.
      return n > 0 && n <= config.limits.maxBudgetMs ? n : undefined;
    }
    return BODY_BUDGET_ROUTES.has(route) ? undefined : longestDefaultBudget;
  };
  const drainMaxBytes = Math.max(DRAIN_MIN_BYTES, 4 * config.limits.bodyBytes);
  const answered = new WeakSet<Socket>();
  // Node's HTTP parser refuses bad request lines and header bytes before Fastify sees a request:
  // answer in the protocol of the path (when the request line was readable), as a well-formed
  // HTTP/1.1 response, then close the connection (the parser cannot resynchronise).
  const clientErrorHandler = (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    answered.add(socket);
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    const [status, reason, message] = clientErrorStatus(error.code);
    const id = randomUUID();
    const protocol = protocolOfUrl(pathOfRawPacket(error.rawPacket) ?? '/');
    const body = JSON.stringify(formatError(protocol, new ApiError('invalid_request', message), id).body);
    metrics.failure('unmatched', 'invalid_request');
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${id}\r\nconnection: close\r\n\r\n${body}`,
    );
    // Half-closed: the client reads the answer; whatever it still sends is discarded until it closes.
    socket.on('data', () => undefined);
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), 2000);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  const apiKeyCheck = config.apiKey === undefined ? undefined : createApiKeyCheck(config.apiKey);

  /**
   * Admission at arrival, before Fastify sees the request (no routing, hooks, body, Error object:
   * a refusal costs a few µs of the event loop, so shedding does not itself eat the capacity it
   * protects). Stamps every request's arrival, then for a scoring route: the server-wide bound on
   * requests being served, the event loop's standing queue (the request waited past
   * `admission.maxQueueMs` in its turn while the loop holds one), and its age against its budget. A request
   * Fastify would refuse anyway (no API key, a Content-Encoding) is left to it. Returns true when
   * it answered. The per-model admission (pairs in flight, predicted completion) follows once the
   * body names model and documents (scoring.ts).
   */
  const admitAtArrival = (req: IncomingMessage, res: ServerResponse): boolean => {
    const t0 = performance.now();
    const stamp = admission.stamp(req.headers[REQUEST_START_HEADER]);
    (req as StampedRequest)[ARRIVAL] = stamp;
    // The warm-up's own requests (injected before readiness) never pass here; real ones before it are served.
    if (req.method !== 'POST' || !lifecycle.warm) return false;
    const path = pathOf(req.url ?? '/');
    if (!SCORING_ROUTES.has(path)) return false;
    if (apiKeyCheck !== undefined && !apiKeyCheck(req.headers.authorization)) return false;
    if (!isIdentityEncoding(req.headers['content-encoding'])) return false;
    let reason: string;
    let message: string;
    if (!admission.enter()) {
      reason = 'concurrency';
      message = `overloaded: ${admission.requestsInFlight} requests in flight (admission.maxConcurrentRequests ${config.admission.maxConcurrentRequests}); retry later`;
    } else {
      res.once('close', () => admission.leave());
      if (!config.admission.predictive) return false;
      if (admission.queued(stamp.loopWaitMs)) {
        reason = 'queue';
        message = `overloaded: the event loop has a standing queue (${Math.round(options.lag.utilisation * 100)} % busy, delays up to ${Math.round(options.lag.delayMs)} ms) and the request waited ${stamp.loopWaitMs.toFixed(1)} ms in its turn; retry later`;
      } else {
        const budget = budgetAtArrival(req, path);
        if (budget === undefined) return false;
        const age = Math.max(0, Date.now() - stamp.arrivalMs) + stamp.unseenMs;
        if (age < budget - answerMargin(config.responseMarginMs, options.lag, budget)) return false;
        reason = 'age';
        message = `overloaded: the request waited ${Math.round(age)} ms, past its ${budget} ms budget; retry later`;
      }
    }
    const id = requestIdOf(req);
    const { status, body } = formatErrorOf(protocolOfUrl(path), 'overloaded', message, id);
    const text = JSON.stringify(body);
    const headers: Record<string, string | number> = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'retry-after': '1',
      'x-request-id': id,
      'server-timing': `total;dur=${(stamp.loopWaitMs + performance.now() - t0).toFixed(2)}`,
    };
    // The body is not read. Node discards an unread body once the answer is written (the
    // connection stays usable); a body announced past the drain bound, or one without a length,
    // gets the bounded drain or a closed connection, as Fastify's early answers do.
    if (lifecycle.draining) headers.connection = 'close';
    else if (!req.complete) {
      const declared = req.headers['content-length'];
      if (Number(declared) > drainMaxBytes) headers.connection = 'close';
      else if (declared === undefined) drainRequestBody(req, res, drainMaxBytes, DRAIN_MAX_MS);
    }
    metrics.rejected(path, '', reason, 0);
    metrics.failure(path, 'overloaded');
    res.writeHead(status, headers);
    res.end(text);
    metrics.observeRequest(path, 'POST', status, (stamp.loopWaitMs + performance.now() - t0) / 1000);
    return true;
  };

  const app = Fastify({
    // The HTTP server Fastify would build, with admission in front of Fastify's handler.
    serverFactory: (handler) => {
      const server = createHttpServer((req, res) => {
        if (!admitAtArrival(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.requestTimeout = REQUEST_TIMEOUT_MS;
      return server;
    },
    clientErrorHandler,
    logger:
      config.logLevel === 'silent'
        ? false
        : {
            level: config.logLevel,
            redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
          },
    // Per-request lines come from our onResponse hook (debug); error logs keep their causes.
    logController: new fastifyModule.LogController({ disableRequestLogging: true }),
    bodyLimit: config.limits.bodyBytes,
    genReqId: requestIdOf,
    return503OnClosing: false,
    requestTimeout: REQUEST_TIMEOUT_MS,
    ajv: {
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: false,
        allErrors: false,
        allowUnionTypes: true,
      },
    },
  });

  // JSON with prototype-poisoning protection. The protected parser scans the whole text with two
  // regular expressions (a few % of a request's CPU); a body that cannot hold `__proto__` or
  // `constructor` keys — no such word, no \u escape that could spell one — is parsed directly.
  const protectedParse = app.getDefaultJsonParser('error', 'error');
  const parseJson: typeof protectedParse = (request, body, done) => {
    const text = body as string;
    if (text.length === 0 || text.includes('__proto__') || text.includes('constructor') || text.includes('\\u'))
      return protectedParse(request, text, done);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    done(null, parsed);
  };
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: config.limits.bodyBytes }, parseJson);
  // Clients that post JSON without a JSON content type (curl -d) still get parsed, the same way.
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: config.limits.bodyBytes }, parseJson);

  app.decorateRequest('arrivalMs', 0);
  app.decorateRequest('unseenMs', 0);

  app.addHook('onRequest', async (request, reply) => {
    // The time its bytes waited counts in its deadline (stamped by admitAtArrival; admission.ts, lag.ts).
    const stamp = (request.raw as StampedRequest)[ARRIVAL] ?? admission.stamp(request.headers[REQUEST_START_HEADER]);
    request.arrivalMs = stamp.arrivalMs;
    request.unseenMs = stamp.unseenMs;
    reply.header('x-request-id', request.id);
    metrics.inFlightRequests(1);
    reply.raw.once('close', () => metrics.inFlightRequests(-1));
    const path = pathOf(request.url);
    if (OPEN_PATHS.has(path)) return;
    // The inspector's pages also take the key from the cookie its sign-in page sets (src/server/inspector.ts).
    if (apiKeyCheck !== undefined && !apiKeyCheck(authorizationOf(path, request.headers)))
      throw new ApiError('unauthorized', 'invalid api token');
    // Bodies are read as they are: a compressed one would be parsed as garbage (RFC 7694: 415).
    if (!isIdentityEncoding(request.headers['content-encoding'])) {
      reply.header('accept-encoding', 'identity');
      throw new ApiError(
        'unsupported_media_type',
        'request bodies with a Content-Encoding (gzip, deflate, br, ...) are not supported; send the body uncompressed',
      );
    }
  });

  // Server-Timing: time from arrival (its wait for the event loop included) to the response being
  // handed over, so clients (and the overload tests) can tell the server's own latency from their
  // network and client overhead.
  app.addHook('onSend', async (request, reply, payload) => {
    // From the arrival of its bytes: the wait for the event loop before Fastify's clock started counts.
    const waited = (request.raw as StampedRequest)[ARRIVAL]?.loopWaitMs ?? 0;
    reply.header('server-timing', `total;dur=${(reply.elapsedTime + waited).toFixed(2)}`);
    // Draining: a request that reached us is still served (nothing accepted is lost), but its
    // connection closes afterwards so the client reconnects to a live instance.
    if (lifecycle.draining) reply.header('connection', 'close');
    // Answered before the whole body arrived (a 413 by Content-Length, a 401, ...): read the rest
    // (bounded) instead of closing under a client that is still writing, so it sees the answer.
    if (!request.raw.complete) {
      const declared = Number(request.headers['content-length']);
      if (lifecycle.draining || declared > drainMaxBytes) reply.header('connection', 'close');
      else {
        reply.removeHeader('connection');
        drainRequestBody(request.raw, reply.raw, drainMaxBytes, DRAIN_MAX_MS);
      }
    }
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const endpoint = request.routeOptions.url ?? 'unmatched';
    metrics.observeRequest(endpoint, request.method, reply.statusCode, reply.elapsedTime / 1000);
    if (config.logLevel === 'debug' || config.logLevel === 'trace')
      request.log.debug(
        { method: request.method, endpoint, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 },
        'request done',
      );
  });

  app.setErrorHandler((error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const api = classify(error, config.limits.bodyBytes);
    const { status, body } = formatError(protocolOf(request), api, String(request.id));
    if (api.retryAfterSec !== undefined) reply.header('retry-after', String(api.retryAfterSec));
    // RFC 6750: the challenge on every 401; `invalid_token` when a credential was presented.
    if (api.kind === 'unauthorized')
      reply.header(
        'www-authenticate',
        request.headers.authorization === undefined
          ? `Bearer realm="${AUTH_REALM}"`
          : `Bearer realm="${AUTH_REALM}", error="invalid_token"`,
      );
    metrics.failure(request.routeOptions.url ?? 'unmatched', api.kind);
    // The server log keeps the cause (with its stack) for bugs; the client gets the message only.
    if (status >= 500 && api.kind !== 'unavailable') request.log.error({ err: api.cause ?? error }, 'request failed');
    return reply.code(status).type('application/json; charset=utf-8').send(body);
  });

  app.setNotFoundHandler((request: FastifyRequest) => {
    throw new ApiError('not_found', `no route for ${request.method} ${clip(pathOf(request.url), 200)}`);
  });

  app.get('/health/live', async () => ({ status: 'live' }));
  app.get('/health/ready', async (_request, reply) => {
    const draining = lifecycle.draining && options.clusterServing?.() !== true;
    const ready = registry.state === 'ready' && lifecycle.warm && !draining;
    const status = draining ? 'draining' : registry.state === 'ready' && !lifecycle.warm ? 'warming' : registry.state;
    return reply.code(ready ? 200 : 503).send({ status, models: registry.names, default: registry.defaultModel });
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await (options.metricsText ?? metrics.text)();
    return reply.type(metrics.contentType).send(text);
  });

  registerCohereRoutes(app, ctx);
  registerTeiRoutes(app, ctx, options.version);
  registerGateRoutes(app, ctx);
  registerInspectorRoutes(app, ctx, apiKeyCheck);
  return app;
}
