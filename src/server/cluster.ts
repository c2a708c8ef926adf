/**
 * Several HTTP processes on one port (node:cluster): each worker process runs the whole server
 * (Fastify, the fast path on its own event loop, its own cross-encoder pool sized so that all
 * processes' threads fit the cores). The primary only forks, restarts crashed workers, aggregates
 * /metrics across workers (prom-client's AggregatorRegistry) and forwards SIGTERM/SIGINT: each
 * worker drains its in-flight requests and exits 0, then the primary exits 0.
 *
 * Secrets never reach a worker through its environment or command line (both readable in
 * /proc/<pid> and `ps`): a worker asks the primary for the resolved configuration over the cluster's
 * IPC channel; the secret environment variables (API key, cache signing key) are removed from the
 * workers' environment (the signing key travels over IPC too); an `--api-key <key>` flag is removed
 * from their arguments. The primary's own environment keeps what the operator put there.
 */
import cluster, { type Worker } from 'node:cluster';
import { ENVIRONMENT_VARIABLES, type ServerConfig } from './config.js';

const MSG_LISTENING = 'relevance-gate:listening';
const MSG_READY = 'relevance-gate:ready';
const MSG_FAILED = 'relevance-gate:failed';
const MSG_METRICS_REQ = 'relevance-gate:metrics-req';
const MSG_METRICS_RES = 'relevance-gate:metrics-res';
const MSG_CONFIG_REQ = 'relevance-gate:config-req';
const MSG_CONFIG_RES = 'relevance-gate:config-res';
/** Marks a process forked by runCluster; holds no configuration (that travels over IPC). */
const WORKER_ENV = 'RELEVANCE_GATE_CLUSTER_WORKER';
/**
 * Environment variables that hold secrets: set in the primary, never inherited by its workers.
 * The API key reaches a worker in its configuration; the others that the server reads from its
 * environment are handed over IPC and set in the worker's `process.env` (not in its /proc environ).
 */
const SECRET_ENVIRONMENT: readonly string[] = [ENVIRONMENT_VARIABLES.apiKey, 'RELEVANCE_GATE_CACHE_SIGNING_KEY'];
const FORWARDED_SECRETS: readonly string[] = ['RELEVANCE_GATE_CACHE_SIGNING_KEY'];
const RESTART_WINDOW_MS = 60_000;
const MAX_RESTARTS_PER_WINDOW = 5;

interface ClusterMessage {
  readonly type?: string;
  readonly id?: number;
  readonly url?: string;
  readonly text?: string;
  readonly error?: string;
  readonly config?: ServerConfig;
  readonly environment?: Readonly<Record<string, string>>;
}

export interface ClusterOptions {
  /** Lines for the operator (start-up, restarts, shutdown). */
  readonly log: (line: string) => void;
  /** Called in the primary once every worker is listening and ready. */
  readonly onReady?: (url: string) => void;
  /** Called in each worker with its server (tests, custom signal handling). */
  readonly onWorkerServer?: (server: import('./server.js').RelevanceGateServer) => void;
}

/**
 * Runs the cluster from the primary (forks `config.processes` workers) or, when called in a
 * worker, starts that worker's server. Resolves in the primary once all workers have exited.
 */
export async function runCluster(config: ServerConfig, options: ClusterOptions): Promise<number> {
  if (cluster.isPrimary) return runPrimary(config, options);
  await runWorker(options);
  return 0;
}

/** True in a process forked by runCluster. */
export function isClusterWorker(): boolean {
  return cluster.isWorker && process.env[WORKER_ENV] !== undefined;
}

/** The primary's arguments without an `--api-key <key>` / `--api-key=<key>` flag (workers get the key over IPC). */
export function workerArguments(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--api-key') i++;
    else if (!args[i].startsWith('--api-key=')) out.push(args[i]);
  }
  return out;
}

async function runPrimary(config: ServerConfig, options: ClusterOptions): Promise<number> {
  const prom = await import('prom-client');
  const aggregator = new prom.AggregatorRegistry();
  const { log } = options;
  let stopping = false;
  const restarts: number[] = [];
  const ready = new Set<number>();
  let readyReported = false;
  let url = '';
  let exitCode = 0;
  // Workers must not each try to be the primary of their own cluster, or read flags again: they
  // ask for the resolved configuration over IPC. An undefined value removes an inherited variable.
  const env: Record<string, string | undefined> = { [WORKER_ENV]: '1' };
  for (const name of SECRET_ENVIRONMENT) env[name] = undefined;
  const environment: Record<string, string> = {};
  for (const name of FORWARDED_SECRETS) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  const args = process.argv.slice(2);
  const scrubbed = workerArguments(args);
  if (scrubbed.length !== args.length) cluster.setupPrimary({ args: scrubbed });

  const fork = (): Worker => {
    const worker = cluster.fork(env);
    worker.on('message', (message: ClusterMessage) => {
      if (message.type === MSG_CONFIG_REQ) {
        if (worker.isConnected()) worker.send({ type: MSG_CONFIG_RES, config, environment });
      } else if (message.type === MSG_LISTENING && typeof message.url === 'string') url = message.url;
      else if (message.type === MSG_READY) {
        ready.add(worker.id);
        if (!readyReported && ready.size >= config.processes) {
          readyReported = true;
          options.onReady?.(url);
        }
      } else if (message.type === MSG_FAILED) {
        log(`worker ${worker.process.pid} failed to start: ${message.error ?? 'unknown error'}`);
        exitCode = 1;
        stop('SIGTERM');
      } else if (message.type === MSG_METRICS_REQ && typeof message.id === 'number') {
        const id = message.id;
        aggregator.clusterMetrics().then(
          (text) => worker.isConnected() && worker.send({ type: MSG_METRICS_RES, id, text }),
          (error: unknown) =>
            worker.isConnected() && worker.send({ type: MSG_METRICS_RES, id, error: String((error as Error).message) }),
        );
      }
    });
    return worker;
  };

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: draining ${Object.keys(cluster.workers ?? {}).length} worker processes`);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  return new Promise<number>((resolve) => {
    cluster.on('exit', (worker, code, signal) => {
      ready.delete(worker.id);
      const alive = Object.keys(cluster.workers ?? {}).length;
      if (stopping) {
        if (code !== 0) exitCode = 1;
        if (alive === 0) resolve(exitCode);
        return;
      }
      log(`worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); restarting`);
      const now = Date.now();
      while (restarts.length > 0 && now - restarts[0] > RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length >= MAX_RESTARTS_PER_WINDOW) {
        log(`${restarts.length} restarts within ${RESTART_WINDOW_MS / 1000}s: giving up`);
        exitCode = 1;
        stop('SIGTERM');
        if (alive === 0) resolve(exitCode);
        return;
      }
      restarts.push(now);
      fork();
    });
    for (let i = 0; i < config.processes; i++) fork();
  });
}

/** The resolved configuration, asked of the primary over IPC (never through the environment). */
function configFromPrimary(): Promise<ServerConfig> {
  return new Promise((resolve, reject) => {
    if (process.send === undefined || process.env[WORKER_ENV] === undefined) {
      reject(new Error('runCluster in a worker needs the primary-provided configuration'));
      return;
    }
    const onMessage = (message: ClusterMessage): void => {
      if (message?.type !== MSG_CONFIG_RES || message.config === undefined) return;
      process.off('message', onMessage);
      for (const [name, value] of Object.entries(message.environment ?? {}))
        if (FORWARDED_SECRETS.includes(name)) process.env[name] = value;
      resolve(message.config);
    };
    process.on('message', onMessage);
    process.send({ type: MSG_CONFIG_REQ });
  });
}

async function runWorker(options: ClusterOptions): Promise<void> {
  const config = await configFromPrimary();
  const prom = await import('prom-client');
  const pending = new Map<number, (text: string) => void>();
  let nextId = 0;
  process.on('message', (message: ClusterMessage) => {
    if (message.type !== MSG_METRICS_RES || typeof message.id !== 'number') return;
    const settle = pending.get(message.id);
    pending.delete(message.id);
    settle?.(message.text ?? `# metrics aggregation failed: ${message.error ?? 'unknown'}\n`);
  });
  const metricsText = (): Promise<string> =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      process.send?.({ type: MSG_METRICS_REQ, id });
    });
  const { createServer } = await import('./server.js');
  const server = await createServer(config, { metricsText });
  // The primary asks every worker for its registry over IPC.
  prom.AggregatorRegistry.setRegistries([server.metrics.registry]);
  new prom.AggregatorRegistry();
  options.onWorkerServer?.(server);
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', () => undefined); // the primary forwards SIGTERM; a terminal's Ctrl-C reaches all
  try {
    const url = await server.listen();
    process.send?.({ type: MSG_LISTENING, url });
    await server.ready;
    process.send?.({ type: MSG_READY });
  } catch (error) {
    process.send?.({ type: MSG_FAILED, error: error instanceof Error ? error.message : String(error) });
    await server.close().catch(() => undefined);
    process.exit(1);
  }
}
