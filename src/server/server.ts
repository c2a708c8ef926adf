/**
 * createServer / startServer: wires the config, the model registry, the metrics, the event-loop
 * lag tracker and the Fastify app into one server with a graceful close().
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { packageRoot } from '../util/package-root.js';
import { keepHeapHeadroom } from '../util/heap-headroom.js';
import { buildApp } from './app.js';
import { resolveServerConfig, type ServerConfig, type ServerConfigInput } from './config/index.js';
import { ServerConfigError } from './errors.js';
import { createServerDecisions } from './decisions.js';
import { createLagTracker } from './lag.js';
import { retireRegistry, type SwappableRegistry, swappableRegistry } from './reload.js';
import { createShadowRunner } from './shadow.js';
import { createServerMetrics, type ServerMetrics } from './metrics.js';
import { createModelRegistry, type ModelRegistry } from './registry.js';
import { warmHttpPath } from './http-warmup.js';
import type { Lifecycle } from './scoring.js';

export interface CreateServerOptions {
  /** Log lines of the model registry (default: the Fastify logger at info). */
  readonly log?: (message: string) => void;
  /** Text of /metrics (a cluster worker aggregates through the primary). */
  readonly metricsText?: () => Promise<string>;
  /** A cluster worker: true while another worker of its cluster serves (readiness is the cluster's). */
  readonly clusterServing?: () => boolean;
  /** Collect prom-client's process metrics (CPU, heap, GC, event loop). Default true. */
  readonly defaultMetrics?: boolean;
}

export interface RelevanceGateServer {
  readonly config: ServerConfig;
  readonly app: FastifyInstance;
  readonly registry: ModelRegistry;
  readonly metrics: ServerMetrics;
  /** Resolves once every model has loaded (readiness 200); rejects when one fails to load. */
  readonly ready: Promise<void>;
  /** `http://host:port` once listening. */
  readonly url: string | undefined;
  listen(): Promise<string>;
  /**
   * Rebuilds the models (their files re-read) and the policy from `input` (default: the config the
   * server started with), loads and warms them beside the serving ones, then swaps them in: requests
   * in flight finish on the old models, which close once idle. Only `models`, `policy` and
   * `defaultModel` are taken from `input`; a failed load leaves the serving models in place (and
   * rejects). `serve` calls it on SIGHUP. Concurrent calls share one reload.
   */
  reload(input?: ServerConfigInput): Promise<void>;
  /**
   * Graceful shutdown: readiness turns 503 and new requests are refused (503), requests in flight
   * finish (up to `shutdownTimeoutMs`), then the listener, the models and the cache close.
   * Idempotent: every call returns the same promise.
   */
  close(): Promise<void>;
}

function packageVersion(): string {
  try {
    return (
      (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string }).version ?? '0'
    );
  } catch {
    return '0';
  }
}

/** Builds the server (models start loading at once); `listen()` opens the socket. */
export async function createServer(
  input: ServerConfigInput = {},
  options: CreateServerOptions = {},
): Promise<RelevanceGateServer> {
  const config = resolveServerConfig(input);
  const prom = await import('prom-client');
  const lifecycle: Lifecycle = { draining: false, warm: false };
  const decisions = createServerDecisions(config, () => lifecycle.warm);
  let registry: SwappableRegistry | undefined;
  const shadows = createShadowRunner(
    config,
    () => registry as ModelRegistry,
    decisions,
    () => lifecycle.warm,
  );
  const metrics = createServerMetrics(
    prom,
    () =>
      (registry?.all() ?? []).map((m) => ({
        name: m.name,
        inFlightPairs: () => m.admission.pairsInFlight,
        ready: () => registry?.state === 'ready',
        crossEncoders: () => m.crossEncoders,
      })),
    {
      defaultMetrics: options.defaultMetrics,
      cacheStats: () => registry?.cacheStats(),
      decisionLogStats: () => decisions?.log.stats(),
      shadowStats: () => shadows?.stats(),
    },
  );
  let app: FastifyInstance | undefined;
  const log = options.log ?? ((message: string) => app?.log.info(message));
  registry = swappableRegistry(createModelRegistry(config, (message) => log(message)));
  const lag = createLagTracker();
  app = await buildApp({
    config,
    registry,
    metrics,
    lifecycle,
    lag,
    version: packageVersion(),
    ...(options.metricsText === undefined ? {} : { metricsText: options.metricsText }),
    ...(options.clusterServing === undefined ? {} : { clusterServing: options.clusterServing }),
    ...(decisions === undefined ? {} : { decisions }),
    ...(shadows === undefined ? {} : { shadows }),
  });
  const loaded = registry.load();
  // Readiness after warm-up traffic through the whole HTTP path (JIT of routes, parsers,
  // serialisers, gates, router, cache): without it the first second of real traffic stalls.
  const ready = loaded.then(async () => {
    metrics.paused = true;
    try {
      await warmHttpPath(app as FastifyInstance, registry as ModelRegistry, config);
    } finally {
      metrics.paused = false;
      lifecycle.warm = true;
    }
  });
  ready.catch((error: unknown) => {
    app?.log.error({ err: error }, 'model loading failed');
  });
  const fastify = app;
  const models = registry;
  let url: string | undefined;
  let closing: Promise<void> | undefined;
  let reloading: Promise<void> | undefined;
  let releaseHeap: (() => void) | undefined;
  // Held whenever the HTTP server starts listening, by listen() below or by a cluster worker's own
  // listen on its private port, and released by close().
  fastify.server.on('listening', () => {
    releaseHeap ??= keepHeapHeadroom(config.heapHeadroomMb);
  });

  return {
    config,
    app: fastify,
    registry: models,
    metrics,
    ready,
    get url() {
      return url;
    },
    async listen() {
      try {
        url = await fastify.listen({ host: config.host, port: config.port });
      } catch (cause) {
        const code = (cause as NodeJS.ErrnoException).code;
        throw new ServerConfigError(
          `cannot listen on ${config.host}:${config.port}: ${code === 'EADDRINUSE' ? 'the address is in use' : (cause as Error).message}`,
          { cause },
        );
      }
      // listen() may report an IPv6 form or 0.0.0.0; report what clients should use for loopback.
      const address = fastify.server.address();
      if (address !== null && typeof address === 'object') {
        const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        url = `http://${host}:${address.port}`;
      }
      return url;
    },
    reload(next) {
      reloading ??= (async () => {
        await ready;
        const fresh = createModelRegistry(resolveServerConfig(next ?? input), (message) => log(message));
        await fresh.load();
        if (closing !== undefined) {
          await fresh.close();
          return;
        }
        const old = models.swap(fresh);
        log(`reload: serving ${fresh.names.join(', ')}; the previous models close once their requests finish`);
        await retireRegistry(old, config.shutdownTimeoutMs);
      })().finally(() => {
        reloading = undefined;
      });
      return reloading;
    },
    close() {
      closing ??= (async () => {
        lifecycle.draining = true;
        if (config.drainDelayMs > 0) await new Promise((r) => setTimeout(r, config.drainDelayMs));
        // In-flight requests finish; past the grace period the remaining connections are cut.
        const force = setTimeout(() => fastify.server.closeAllConnections(), config.shutdownTimeoutMs);
        force.unref();
        try {
          await fastify.close();
        } finally {
          clearTimeout(force);
          // Requests have finished: their shadows finish and what they recorded is written before the process exits.
          await shadows?.idle();
          await decisions?.close();
          await reloading?.catch(() => undefined);
          await models.close();
          metrics.close();
          lag.stop();
          releaseHeap?.();
        }
      })();
      return closing;
    },
  };
}

/** createServer + listen; by default also waits until every model has loaded. */
export async function startServer(
  input: ServerConfigInput = {},
  options: CreateServerOptions & { readonly waitReady?: boolean } = {},
): Promise<RelevanceGateServer> {
  const server = await createServer(input, options);
  try {
    await server.listen();
    if (options.waitReady !== false) await server.ready;
  } catch (error) {
    await server.close().catch(() => undefined);
    throw error;
  }
  return server;
}
