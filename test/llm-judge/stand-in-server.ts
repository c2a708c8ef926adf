/**
 * PROTOCOL STAND-IN: a local HTTP server on 127.0.0.1 that implements the OpenAI chat-completions
 * protocol as documented (POST /v1/chat/completions; request fields model, messages, max_tokens,
 * temperature, n, stream, logprobs, top_logprobs; response choices[].message.content,
 * choices[].logprobs.content[] of { token, logprob, bytes, top_logprobs[] }, usage). It is not a
 * model: a test (or bench) decides every answer with a handler, and can inject 429 + Retry-After,
 * 5xx, slow answers, dropped connections and responses without logprobs. It validates the request
 * the way a strict server would (400 on malformed fields) and records what it received, how many
 * requests were in flight at once, and which requests the client cancelled.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInMessage {
  readonly role: string;
  readonly content: string;
}

export interface StandInRequestBody {
  readonly model: string;
  readonly messages: readonly StandInMessage[];
  readonly max_tokens?: number;
  readonly temperature?: number;
  readonly logprobs?: boolean;
  readonly top_logprobs?: number;
  readonly [field: string]: unknown;
}

export interface StandInRequest {
  /** 1-based arrival order. */
  readonly seq: number;
  readonly body: StandInRequestBody;
  readonly headers: IncomingMessage['headers'];
  readonly receivedAt: number;
}

/** One generated position: the chosen token and the alternatives (token, logprob). */
export interface StandInPosition {
  readonly token: string;
  readonly logprob: number;
  readonly top: ReadonlyArray<readonly [string, number]>;
}

export type StandInReply =
  | {
      readonly kind: 'answer';
      readonly positions: readonly StandInPosition[];
      readonly delayMs?: number;
      /** false: send `logprobs: null` (an endpoint that does not return them). Default true. */
      readonly logprobs?: boolean;
      /** Override of message.content (default: the chosen tokens joined). */
      readonly content?: string;
    }
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body?: string;
      readonly delayMs?: number;
    }
  /** Closes the socket without an answer (a connection error for the client). */
  | { readonly kind: 'drop'; readonly delayMs?: number }
  /** A 200 whose body is not a chat completion. */
  | { readonly kind: 'raw'; readonly body: string; readonly delayMs?: number };

export type StandInHandler = (request: StandInRequest) => StandInReply | Promise<StandInReply>;

export interface StandInServer {
  /** e.g. http://127.0.0.1:PORT/v1 */
  readonly baseURL: string;
  readonly requests: StandInRequest[];
  /** HTTP requests in flight now / at most so far. */
  inFlight(): number;
  maxInFlight(): number;
  /**
   * Most requests the server was working on at once among those it answered (cancelled ones left
   * out): unlike maxInFlight, not inflated by a cancelled request the server has not yet noticed
   * is gone while the client already sent the next one.
   */
  maxInFlightAnswered(): number;
  /** Requests whose client went away before the answer was sent. */
  cancelled(): number;
  /** Answers sent (any status). */
  answered(): number;
  setHandler(handler: StandInHandler): void;
  resetCounters(): void;
  close(): Promise<void>;
}

/** Approximate token count the stand-in reports as usage: 4 characters per token. */
export function approximateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function validate(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return 'body must be a JSON object';
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model.length === 0) return 'model is required';
  if (!Array.isArray(b.messages) || b.messages.length === 0) return 'messages must be a non-empty array';
  for (const m of b.messages as unknown[]) {
    if (typeof m !== 'object' || m === null) return 'each message must be an object';
    const { role, content } = m as Record<string, unknown>;
    if (!['system', 'user', 'assistant', 'developer'].includes(String(role))) return `invalid role ${String(role)}`;
    if (typeof content !== 'string') return 'message content must be a string';
  }
  if (b.logprobs !== undefined && typeof b.logprobs !== 'boolean') return 'logprobs must be a boolean';
  if (b.top_logprobs !== undefined) {
    if (
      typeof b.top_logprobs !== 'number' ||
      !Number.isInteger(b.top_logprobs) ||
      b.top_logprobs < 0 ||
      b.top_logprobs > 20
    )
      return 'top_logprobs must be an integer in [0, 20]';
    if (b.logprobs !== true) return 'top_logprobs requires logprobs: true';
  }
  if (b.max_tokens !== undefined && (typeof b.max_tokens !== 'number' || b.max_tokens < 1))
    return 'max_tokens must be ≥ 1';
  if (b.n !== undefined && b.n !== 1) return 'only n = 1 is supported';
  if (b.stream !== undefined && b.stream !== false) return 'streaming is not supported by this stand-in';
  return undefined;
}

function bytesOf(token: string): number[] {
  return [...Buffer.from(token, 'utf8')];
}

function completionBody(request: StandInRequestBody, reply: Extract<StandInReply, { kind: 'answer' }>): string {
  const topN = request.top_logprobs ?? 0;
  const maxTokens = request.max_tokens ?? Number.POSITIVE_INFINITY;
  const positions = reply.positions.slice(0, maxTokens);
  const content = reply.content ?? positions.map((p) => p.token).join('');
  const promptText = request.messages.map((m) => m.content).join('\n');
  const logprobs =
    reply.logprobs === false || request.logprobs !== true
      ? null
      : {
          content: positions.map((p) => ({
            token: p.token,
            logprob: p.logprob,
            bytes: bytesOf(p.token),
            top_logprobs: p.top
              .slice()
              .sort((a, b) => b[1] - a[1])
              .slice(0, topN)
              .map(([token, logprob]) => ({ token, logprob, bytes: bytesOf(token) })),
          })),
          refusal: null,
        };
  return JSON.stringify({
    id: `chatcmpl-standin-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs,
        finish_reason: positions.length < reply.positions.length ? 'length' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: approximateTokens(promptText) + 4 * request.messages.length,
      completion_tokens: positions.length,
      total_tokens: approximateTokens(promptText) + 4 * request.messages.length + positions.length,
    },
  });
}

export async function startStandInServer(initial: StandInHandler): Promise<StandInServer> {
  let handler = initial;
  const requests: StandInRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let cancelled = 0;
  let answered = 0;
  let seq = 0;
  /** [start, end] (performance.now()) of answered requests, for maxInFlightAnswered. */
  const spans: Array<[number, number]> = [];

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'invalid JSON', type: 'invalid_request_error' } }));
      return;
    }
    const problem = validate(body);
    if (problem !== undefined) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: problem, type: 'invalid_request_error' } }));
      return;
    }
    const request: StandInRequest = {
      seq: ++seq,
      body: body as StandInRequestBody,
      headers: req.headers,
      receivedAt: Date.now(),
    };
    requests.push(request);
    const startedAt = performance.now();
    inFlight++;
    if (inFlight > maxInFlight) maxInFlight = inFlight;
    let gone = false;
    const onClose = (): void => {
      if (!res.writableEnded) gone = true;
    };
    res.on('close', onClose);
    try {
      const reply = await handler(request);
      const delay = reply.delayMs ?? 0;
      if (delay > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          res.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      if (gone || res.destroyed) {
        cancelled++;
        return;
      }
      answered++;
      spans.push([startedAt, performance.now()]);
      if (reply.kind === 'drop') {
        req.socket.destroy();
        return;
      }
      if (reply.kind === 'status') {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
        res.end(reply.body ?? JSON.stringify({ error: { message: `injected ${reply.status}`, type: 'server_error' } }));
        return;
      }
      if (reply.kind === 'raw') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(reply.body);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completionBody(request.body, reply));
    } finally {
      inFlight--;
    }
  };

  const server: Server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    cancelled: () => cancelled,
    maxInFlightAnswered: () => {
      const events: Array<[number, number]> = [];
      for (const [a, b] of spans) events.push([a, 1], [b, -1]);
      // Ends before starts at the same instant: a slot handed over is not an overlap.
      events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      let now = 0;
      let max = 0;
      for (const [, d] of events) {
        now += d;
        if (now > max) max = now;
      }
      return max;
    },
    answered: () => answered,
    setHandler(next) {
      handler = next;
    },
    resetCounters() {
      requests.length = 0;
      spans.length = 0;
      maxInFlight = inFlight;
      cancelled = 0;
      answered = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
