/**
 * The inspector (`serve --inspector`, docs/decision-log.md): a static page at /inspect (HTML and
 * script in one response, no build step) over a small JSON API on the decision log's in-memory
 * window: recent decisions, one request's passages (what it dropped), the drift figures, and
 * POST /inspect/api/replay, which re-routes the window under a policy with the same function
 * `relevance-gate replay` runs. With an API key, every route but the sign-in page needs it: as the
 * Bearer header, or as the HttpOnly cookie the sign-in page sets (a browser cannot send a header
 * on navigation).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { replayDecisions } from '../decision-log/index.js';
import type { ApiKeyCheck } from './auth.js';
import { ApiError } from './errors.js';
import { INSPECTOR_PAGE, LOGIN_PAGE } from './inspector-page.js';
import type { ServerContext } from './scoring.js';

export const INSPECT_PATH = '/inspect';
export const INSPECT_LOGIN_PATH = '/inspect/login';
const COOKIE = 'rg_inspect';
const MAX_LIST = 1000;

/** The Authorization a request carries: its header, or for the inspector's paths its sign-in cookie. */
export function authorizationOf(
  path: string,
  headers: { readonly authorization?: string | undefined; readonly cookie?: string | undefined },
): string | undefined {
  if (headers.authorization !== undefined || !path.startsWith(INSPECT_PATH)) return headers.authorization;
  const cookie = headers.cookie;
  if (cookie === undefined) return undefined;
  for (const part of cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === COOKIE) return `Bearer ${decodeURIComponent(part.slice(eq + 1).trim())}`;
  }
  return undefined;
}

function html(reply: FastifyReply, page: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
    .send(page);
}

export function registerInspectorRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  apiKeyCheck: ApiKeyCheck | undefined,
): void {
  const decisions = ctx.decisions;
  if (!ctx.config.inspector || decisions === undefined) return;

  app.get(INSPECT_PATH, { config: { protocol: 'gate' } }, async (_request, reply) => html(reply, INSPECTOR_PAGE));

  app.get(INSPECT_LOGIN_PATH, { config: { protocol: 'gate' } }, async (_request, reply) => html(reply, LOGIN_PAGE));
  app.post(
    INSPECT_LOGIN_PATH,
    {
      config: { protocol: 'gate' },
      schema: { body: { type: 'object', required: ['key'], properties: { key: { type: 'string' } } } },
    },
    async (request, reply) => {
      const key = (request.body as { key: string }).key;
      if (apiKeyCheck !== undefined && !apiKeyCheck(`Bearer ${key}`))
        throw new ApiError('unauthorized', 'invalid api token');
      return reply
        .header('set-cookie', `${COOKIE}=${encodeURIComponent(key)}; Path=${INSPECT_PATH}; HttpOnly; SameSite=Strict`)
        .send({ ok: true });
    },
  );

  app.get(`${INSPECT_PATH}/api/decisions`, { config: { protocol: 'gate' } }, async (request) => {
    const query = request.query as { limit?: string; model?: string };
    const limit = Math.min(MAX_LIST, Math.max(1, Number(query.limit ?? 200) || 200));
    const window = decisions.log.window();
    const list = window.decisions.filter(
      (d) => query.model === undefined || query.model === '' || d.model === query.model,
    );
    return {
      total: list.length,
      decisions: list.slice(-limit).reverse(),
      stats: decisions.log.stats(),
    };
  });

  app.get(`${INSPECT_PATH}/api/decisions/:requestId`, { config: { protocol: 'gate' } }, async (request) => {
    const { requestId } = request.params as { requestId: string };
    const found = decisions.log.window().decisions.findLast((d) => d.requestId === requestId);
    if (found === undefined)
      throw new ApiError(
        'not_found',
        `no logged decision for request ${JSON.stringify(requestId.slice(0, 128))} in the window`,
      );
    return found;
  });

  app.get(`${INSPECT_PATH}/api/drift`, { config: { protocol: 'gate' } }, async () => ({
    models: Object.fromEntries(ctx.metrics.drift.snapshots()),
  }));

  app.post(
    `${INSPECT_PATH}/api/replay`,
    {
      config: { protocol: 'gate' },
      schema: {
        body: {
          type: 'object',
          properties: { policy: { type: ['object', 'null'] }, base: { type: 'string', enum: ['logged', 'none'] } },
        },
      },
    },
    async (request) => {
      const body = request.body as { policy?: Record<string, unknown> | null; base?: 'logged' | 'none' };
      const window = decisions.log.window();
      try {
        return replayDecisions(window.decisions, window.policies, {
          ...(body.policy === undefined || body.policy === null ? {} : { policy: body.policy }),
          ...(body.base === undefined ? {} : { base: body.base }),
        });
      } catch (error) {
        // A policy the gate refuses (InvalidPolicyError) or a window it cannot replay: the editor shows why.
        throw new ApiError('unprocessable', error instanceof Error ? error.message : String(error));
      }
    },
  );
}
