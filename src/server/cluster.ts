/**
 * Several HTTP processes on one port (node:cluster): each worker process runs the whole server
 * (Fastify, the fast path on its own event loop, its own cross-encoder pool sized so that all
 * processes' threads fit the cores). The primary owns the listening socket and hands each
 * connection to a worker (below), restarts crashed workers, aggregates /metrics across workers
 * (prom-client's AggregatorRegistry) and forwards SIGTERM/SIGINT: each worker drains its
 * in-flight requests and exits 0, then the primary exits 0.
 *
 * Connections: the primary accepts every connection itself (paused: it never reads a byte) and
 * passes it over the cluster's IPC channel to one worker at a time, round robin, as node:cluster's
 * own scheduler does, with three differences that make a worker's death or restart cost no
 * request another worker could have served:
 * - only a worker whose models have loaded and warmed up gets connections while any worker is
 *   ready (a worker still starting gets them only when none is ready, and answers 503 "loading");
 * - the primary keeps its copy of a connection until the worker acknowledges it, and hands the
 *   connections a dead worker never acknowledged to another worker (node:cluster's scheduler
 *   leaves them open and unanswered: the client waits until its own timeout);
 * - a worker gets its next connection only once it acknowledged the previous one, so a worker
 *   whose event loop is stuck is skipped rather than fed.
 * What cannot be saved: connections the killed worker had accepted (the kernel closes them with
 * the process; requests in flight on them, or written on them before the client sees them close,
 * fail at the TCP level).
 *
 * Secrets never reach a worker through its environment or command line (both readable in
 * /proc/<pid> and `ps`): a worker asks the primary for the resolved configuration over the cluster's
 * IPC channel; the secret environment variables (API key, cache signing key) are removed from the
 * workers' environment (the signing key travels over IPC too); an `--api-key <key>` flag is removed
 * from their arguments. The primary's own environment keeps what the operator put there.
 */
import cluster, { type Worker } from 'node:cluster';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import {
  ENVIRONMENT_VARIABLES,
  resolveServerConfig,
  type ServerConfig,
  type ServerConfigInput,
} from './config/index.js';
import { missingServingFlags } from './node-flags.js';

const MSG_ACCEPTING = 'relevance-gate:accepting';
const MSG_READY = 'relevance-gate:ready';
const MSG_DRAINING = 'relevance-gate:draining';
const MSG_DRAINING_ACK = 'relevance-gate:draining-ack';
/** Longest wait of a stopping worker for the primary to stop handing it connections. */
const DRAINING_ACK_TIMEOUT_MS = 1000;
const MSG_FAILED = 'relevance-gate:failed';
const MSG_CONNECTION = 'relevance-gate:connection';
const MSG_CONNECTION_ACK = 'relevance-gate:connection-ack';
const MSG_METRICS_REQ = 'relevance-gate:metrics-req';
const MSG_METRICS_RES = 'relevance-gate:metrics-res';
const MSG_CONFIG_REQ = 'relevance-gate:config-req';
const MSG_CONFIG_RES = 'relevance-gate:config-res';
const MSG_RELOAD = 'relevance-gate:reload';
const MSG_RELOAD_DONE = 'relevance-gate:reload-done';
/** Longest wait for one worker's reload (load and warm-up of the new models) before the next. */
const RELOAD_TIMEOUT_MS = 300_000;
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
/**
 * Connections the primary holds while no worker can take one (all starting, or all dead and
 * restarting): at most this many, for at most this long; then they are closed.
 */
const HOLD_MAX_CONNECTIONS = 4096;
const HOLD_MAX_MS = 30_000;

interface ClusterMessage {
  readonly type?: string;
  readonly id?: number;
  readonly accepted?: boolean;
  /** MSG_DRAINING_ACK: whether another worker is ready (the cluster still serves). */
  readonly othersReady?: boolean;
  readonly text?: string;
  readonly error?: string;
  readonly config?: ServerConfig;
  readonly environment?: Readonly<Record<string, string>>;
  /** MSG_RELOAD: the configuration input to reload from (undefined: the worker's own, files re-read). */
  readonly input?: ServerConfigInput;
}

export interface ClusterOptions {
  /** Lines for the operator (start-up, restarts, shutdown). */
  readonly log: (line: string) => void;
  /** Called in the primary once it listens and every worker is ready. */
  readonly onReady?: (url: string) => void;
  /** Called in each worker with its server (tests, custom signal handling). */
  readonly onWorkerServer?: (server: import('./server.js').RelevanceGateServer) => void;
  /**
   * On SIGHUP the primary reloads models and policy worker by worker from this input (`serve`:
   * the config file and environment read again, with the flags); without it each worker rebuilds
   * its models from its own configuration (their files read again).
   */
  readonly reloadInput?: () => Promise<ServerConfigInput>;
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

/** A worker as the primary's connection router sees it. */
interface Member {
  readonly worker: Worker;
  /** Its server is up: it can answer (503 while its models load). */
  accepting: boolean;
  /** Its models have loaded and warmed up. */
  ready: boolean;
  /** It is shutting down (SIGTERM): served only while no other worker can take a connection. */
  draining: boolean;
  /** Connections handed over and not acknowledged yet (at most one: see the file's comment). */
  readonly inTransit: Map<number, Socket>;
}

/** What the primary's router counted since start (exported in /metrics by the primary). */
interface RouterCounts {
  handedOver: number;
  /** Connections a worker died holding unacknowledged, handed to another worker. */
  rerouted: number;
  /** Connections closed unanswered: held past HOLD_MAX_MS / HOLD_MAX_CONNECTIONS, or at shutdown. */
  dropped: number;
  restarts: number;
}

/**
 * The primary's connection router: round robin over the ready workers (over the accepting ones
 * while none is ready), one unacknowledged connection per worker, the connections of a worker that
 * died before acknowledging them handed to the next one.
 */
class ConnectionRouter {
  private readonly members = new Map<number, Member>();
  private readonly queue: Array<{ readonly socket: Socket; readonly since: number }> = [];
  private next = 0;
  private nextId = 0;
  private holdTimer: NodeJS.Timeout | undefined;
  private closed = false;
  readonly counts: RouterCounts = { handedOver: 0, rerouted: 0, dropped: 0, restarts: 0 };

  add(worker: Worker): void {
    this.members.set(worker.id, { worker, accepting: false, ready: false, draining: false, inTransit: new Map() });
  }

  accepting(worker: Worker): void {
    const member = this.members.get(worker.id);
    if (member === undefined) return;
    member.accepting = true;
    this.pump();
  }

  ready(worker: Worker): void {
    const member = this.members.get(worker.id);
    if (member === undefined) return;
    member.accepting = true;
    member.ready = true;
    this.pump();
  }

  /** The worker is shutting down: its server still answers, with `Connection: close`, until it closes. */
  draining(worker: Worker): void {
    const member = this.members.get(worker.id);
    if (member === undefined) return;
    member.draining = true;
    this.pump();
  }

  /** Ready members now, draining ones excepted (their number is what readiness of the cluster means). */
  get readyCount(): number {
    let n = 0;
    for (const m of this.members.values()) if (m.ready && !m.draining) n++;
    return n;
  }

  /** Members loading or warming up (a replacement included). */
  get startingCount(): number {
    let n = 0;
    for (const m of this.members.values()) if (!m.ready && !m.draining) n++;
    return n;
  }

  get drainingCount(): number {
    let n = 0;
    for (const m of this.members.values()) if (m.draining) n++;
    return n;
  }

  /** The worker is gone (exit or lost IPC channel): its unacknowledged connections go to another one. */
  remove(worker: Worker): void {
    const member = this.members.get(worker.id);
    if (member === undefined) return;
    this.members.delete(worker.id);
    const orphans = [...member.inTransit.values()];
    member.inTransit.clear();
    this.counts.rerouted += orphans.length;
    // First in line: they arrived before everything still queued.
    this.queue.unshift(...orphans.map((socket) => ({ socket, since: performance.now() })));
    this.pump();
  }

  /** A new connection from the listener. */
  connection(socket: Socket): void {
    // An error on the primary's paused copy (a reset before it was handed over) is the worker's or
    // nobody's concern: the worker sees the reset too.
    socket.on('error', () => undefined);
    if (this.closed) {
      this.drop(socket);
      return;
    }
    this.queue.push({ socket, since: performance.now() });
    this.pump();
  }

  /** The worker took the connection (or refused it: closing): the primary's copy is closed. */
  acknowledged(worker: Worker, id: number, accepted: boolean): void {
    const member = this.members.get(worker.id);
    const socket = member?.inTransit.get(id);
    if (member === undefined || socket === undefined) return;
    member.inTransit.delete(id);
    if (accepted) socket.destroy();
    else {
      // The worker's server closed (it is draining): no more connections for it.
      member.accepting = false;
      member.ready = false;
      this.queue.unshift({ socket, since: performance.now() });
    }
    this.pump();
  }

  /** Stops routing: what is still queued, and what arrives from now on, is closed. */
  close(): void {
    this.closed = true;
    for (const { socket } of this.queue.splice(0)) this.drop(socket);
    if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
  }

  private drop(socket: Socket): void {
    this.counts.dropped++;
    socket.destroy();
  }

  /**
   * The next worker to hand a connection to, or undefined (all busy acknowledging, or none up).
   * The ready ones if any; else the draining ones (they still serve, then close the connection);
   * else the starting ones (they answer 503 while their models load).
   */
  private pick(): Member | undefined {
    const all = [...this.members.values()].filter((m) => m.accepting && m.worker.isConnected());
    const ready = all.filter((m) => m.ready && !m.draining);
    const draining = ready.length > 0 ? [] : all.filter((m) => m.draining);
    const pool = ready.length > 0 ? ready : draining.length > 0 ? draining : all;
    for (let i = 0; i < pool.length; i++) {
      const member = pool[(this.next + i) % pool.length];
      if (member.inTransit.size === 0) {
        this.next = (this.next + i + 1) % Math.max(pool.length, 1);
        return member;
      }
    }
    return undefined;
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.closed) {
      const head = this.queue[0];
      if (head.socket.destroyed) {
        this.queue.shift();
        continue;
      }
      const member = this.pick();
      if (member === undefined) break;
      this.queue.shift();
      const id = this.nextId++;
      member.inTransit.set(id, head.socket);
      this.counts.handedOver++;
      // keepOpen: the primary's copy stays open until the worker acknowledges (or dies).
      member.worker.send({ type: MSG_CONNECTION, id }, head.socket, { keepOpen: true }, (error) => {
        if (error === null || error === undefined) return;
        // Not sent (the channel closed): another worker gets it.
        if (member.inTransit.delete(id)) {
          this.queue.unshift({ socket: head.socket, since: performance.now() });
          this.pump();
        }
      });
    }
    this.holdBound();
  }

  /** Connections held while no worker can take them: bounded in number and time. */
  private holdBound(): void {
    while (this.queue.length > HOLD_MAX_CONNECTIONS) this.drop((this.queue.shift() as { socket: Socket }).socket);
    if (this.queue.length === 0) {
      if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
      return;
    }
    if (this.holdTimer !== undefined) return;
    const wait = Math.max(0, this.queue[0].since + HOLD_MAX_MS - performance.now());
    this.holdTimer = setTimeout(() => {
      this.holdTimer = undefined;
      const now = performance.now();
      while (this.queue.length > 0 && now - this.queue[0].since >= HOLD_MAX_MS)
        this.drop((this.queue.shift() as { socket: Socket }).socket);
      this.pump();
    }, wait);
  }
}

function listenUrl(listener: NetServer): string {
  const address = listener.address();
  if (address === null || typeof address !== 'object') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** The primary's own figures, appended to the workers' aggregated /metrics. */
function clusterMetricsText(router: ConnectionRouter, processes: number): string {
  const c = router.counts;
  const lines = [
    '# HELP relevance_gate_cluster_processes Worker processes of the cluster by state: ready (models loaded and warmed up: they get the connections), starting (loading or warming up, a replacement included), draining (shutting down).',
    '# TYPE relevance_gate_cluster_processes gauge',
    `relevance_gate_cluster_processes{state="ready"} ${router.readyCount}`,
    `relevance_gate_cluster_processes{state="starting"} ${router.startingCount}`,
    `relevance_gate_cluster_processes{state="draining"} ${router.drainingCount}`,
    '# HELP relevance_gate_cluster_processes_configured Worker processes the cluster runs (--processes).',
    '# TYPE relevance_gate_cluster_processes_configured gauge',
    `relevance_gate_cluster_processes_configured ${processes}`,
    '# HELP relevance_gate_cluster_restarts_total Worker processes restarted after they exited.',
    '# TYPE relevance_gate_cluster_restarts_total counter',
    `relevance_gate_cluster_restarts_total ${c.restarts}`,
    '# HELP relevance_gate_cluster_connections_total Connections by what the primary did with them: handed_over to a worker, rerouted (the worker died before taking it: handed to another), dropped (closed unanswered: no worker could take it in time, or shutdown).',
    '# TYPE relevance_gate_cluster_connections_total counter',
    `relevance_gate_cluster_connections_total{outcome="handed_over"} ${c.handedOver}`,
    `relevance_gate_cluster_connections_total{outcome="rerouted"} ${c.rerouted}`,
    `relevance_gate_cluster_connections_total{outcome="dropped"} ${c.dropped}`,
  ];
  return `${lines.join('\n')}\n`;
}

async function runPrimary(initial: ServerConfig, options: ClusterOptions): Promise<number> {
  // What a worker forked from now on is given: the models, policy and default model of the last
  // reload over the configuration the cluster started with.
  let config = initial;
  const prom = await import('prom-client');
  const aggregator = new prom.AggregatorRegistry();
  const { log } = options;
  let stopping = false;
  const restarts: number[] = [];
  let readyReported = false;
  let exitCode = 0;
  const router = new ConnectionRouter();
  // The listener is the primary's: it binds at once (a port in use stops the start before any
  // model loads) and holds connections (bounded) until a worker can take them.
  const listener = createNetServer({ pauseOnConnect: true, noDelay: true });
  listener.on('connection', (socket) => router.connection(socket));
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen({ host: config.host, port: config.port }, () => {
        listener.off('error', reject);
        resolve();
      });
    });
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    log(
      `cannot listen on ${config.host}:${config.port}: ${code === 'EADDRINUSE' ? 'the address is in use' : (cause as Error).message}`,
    );
    return 1;
  }
  listener.on('error', (error) => log(`listener: ${error.message}`));
  const url = listenUrl(listener);
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
  cluster.setupPrimary({
    ...(scrubbed.length === args.length ? {} : { args: scrubbed }),
    // The workers serve: they run with the node flags serving needs (node-flags.ts).
    execArgv: [...process.execArgv, ...missingServingFlags(process.execArgv)],
  });

  // SIGHUP: a rolling reload, one worker at a time, so the others serve while one loads its new
  // models (each worker's own reload already keeps its in-flight requests on the old ones).
  const reloadAcks = new Map<Worker, (message: ClusterMessage) => void>();
  let reloading = false;
  const reloadWorker = (worker: Worker, input: ServerConfigInput | undefined): Promise<string | undefined> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => done({ error: 'no answer in time' }), RELOAD_TIMEOUT_MS);
      const onExit = (): void => done({ error: 'exited' });
      function done(message: ClusterMessage): void {
        clearTimeout(timer);
        reloadAcks.delete(worker);
        worker.off('exit', onExit);
        resolve(message.error);
      }
      reloadAcks.set(worker, done);
      worker.once('exit', onExit);
      if (worker.isConnected()) worker.send({ type: MSG_RELOAD, ...(input === undefined ? {} : { input }) });
      else done({ error: 'not connected' });
    });
  const reload = async (): Promise<void> => {
    let input: ServerConfigInput | undefined;
    let next = config;
    if (options.reloadInput !== undefined) {
      try {
        input = await options.reloadInput();
        const resolved = resolveServerConfig(input);
        next = { ...config, models: resolved.models, policy: resolved.policy, defaultModel: resolved.defaultModel };
      } catch (error) {
        log(`SIGHUP: the new configuration is invalid, nothing reloaded: ${(error as Error).message}`);
        return;
      }
    }
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    let failed = 0;
    for (const worker of workers) {
      if (stopping) return;
      const error = await reloadWorker(worker, input);
      if (error !== undefined) {
        failed++;
        log(`SIGHUP: worker ${worker.process.pid} kept its previous models: ${error}`);
      }
    }
    if (failed === 0) config = next;
    log(`SIGHUP: ${workers.length - failed} of ${workers.length} workers reloaded models and policy`);
  };
  process.on('SIGHUP', () => {
    if (reloading) {
      log('SIGHUP: a reload is already running');
      return;
    }
    reloading = true;
    void reload().finally(() => {
      reloading = false;
    });
  });

  const fork = (): Worker => {
    const worker = cluster.fork(env);
    router.add(worker);
    worker.on('message', (message: ClusterMessage) => {
      if (message.type === MSG_CONNECTION_ACK && typeof message.id === 'number')
        router.acknowledged(worker, message.id, message.accepted !== false);
      else if (message.type === MSG_CONFIG_REQ) {
        if (worker.isConnected()) worker.send({ type: MSG_CONFIG_RES, config, environment });
      } else if (message.type === MSG_RELOAD_DONE) {
        reloadAcks.get(worker)?.(message);
      } else if (message.type === MSG_ACCEPTING) router.accepting(worker);
      else if (message.type === MSG_DRAINING) {
        router.draining(worker);
        // Connections handed to it before this point reach it ahead of the acknowledgement (IPC
        // keeps order), but their requests may be read after it: while another worker serves (and
        // the cluster is not stopping), the stopping one answers readiness for the cluster.
        if (worker.isConnected())
          worker.send({ type: MSG_DRAINING_ACK, othersReady: !stopping && router.readyCount > 0 });
      } else if (message.type === MSG_READY) {
        router.ready(worker);
        log(`worker ${worker.process.pid} ready: ${router.readyCount} of ${config.processes} processes serving`);
        if (!readyReported && router.readyCount >= config.processes) {
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
          (text) =>
            worker.isConnected() &&
            worker.send({ type: MSG_METRICS_RES, id, text: text + clusterMetricsText(router, config.processes) }),
          (error: unknown) =>
            worker.isConnected() && worker.send({ type: MSG_METRICS_RES, id, error: String((error as Error).message) }),
        );
      }
    });
    // The IPC channel closes as the process dies (before 'exit' is reported): reroute at once.
    worker.on('disconnect', () => router.remove(worker));
    // A send racing the death of the worker fails on its closed channel: 'exit' deals with it.
    worker.on('error', () => undefined);
    return worker;
  };

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    // New connections are still handed to the draining workers (answered with Connection: close)
    // for drainDelayMs, the time a load balancer takes to notice the readiness 503; then refused.
    // Connections already accepted are still handed over until the workers' servers close.
    if (config.drainDelayMs > 0) setTimeout(() => listener.close(), config.drainDelayMs).unref();
    else listener.close();
    log(`${signal}: draining ${Object.keys(cluster.workers ?? {}).length} worker processes`);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  return new Promise<number>((resolve) => {
    cluster.on('exit', (worker, code, signal) => {
      router.remove(worker);
      const alive = Object.keys(cluster.workers ?? {}).length;
      if (stopping) {
        if (code !== 0) exitCode = 1;
        if (alive === 0) {
          listener.close();
          router.close();
          resolve(exitCode);
        }
        return;
      }
      log(
        `worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); restarting; ${router.readyCount} of ${config.processes} processes serving`,
      );
      const now = Date.now();
      while (restarts.length > 0 && now - restarts[0] > RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length >= MAX_RESTARTS_PER_WINDOW) {
        log(`${restarts.length} restarts within ${RESTART_WINDOW_MS / 1000}s: giving up`);
        exitCode = 1;
        stop('SIGTERM');
        if (alive === 0) {
          listener.close();
          router.close();
          resolve(exitCode);
        }
        return;
      }
      restarts.push(now);
      router.counts.restarts++;
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

/** net.Server's bookkeeping of an accepted connection (Node's own `onconnection` does the same). */
interface CountedServer {
  _connections: number;
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
  // Set when this worker stops: whether the primary still had another worker serving. Requests on
  // connections handed over before that (already on their way) are then answered as the cluster's.
  let othersReady = false;
  const server = await createServer(config, { metricsText, clusterServing: () => othersReady });
  // The primary asks every worker for its registry over IPC.
  prom.AggregatorRegistry.setRegistries([server.metrics.registry]);
  new prom.AggregatorRegistry();
  options.onWorkerServer?.(server);
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    // Other workers get the new connections from now on (this one still serves what it has). It
    // starts draining only once the primary has stopped handing it connections, and its readiness
    // then stays the cluster's (200 while another worker serves), so no probe the primary routed
    // here sees a 503 the cluster is not in.
    const drained = new Promise<void>((resolve) => {
      const timer = setTimeout(done, DRAINING_ACK_TIMEOUT_MS);
      function done(): void {
        clearTimeout(timer);
        process.off('message', onAck);
        resolve();
      }
      function onAck(message: ClusterMessage): void {
        if (message?.type !== MSG_DRAINING_ACK) return;
        othersReady = message.othersReady === true;
        done();
      }
      process.on('message', onAck);
    });
    process.send?.({ type: MSG_DRAINING });
    drained
      .then(() => server.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', () => undefined); // the primary forwards SIGTERM; a terminal's Ctrl-C reaches all
  // The primary coordinates reloads (a hang-up of the terminal reaches every process of the group).
  process.on('SIGHUP', () => undefined);
  process.on('message', (message: ClusterMessage) => {
    if (message?.type !== MSG_RELOAD) return;
    server.reload(message.input).then(
      () => process.send?.({ type: MSG_RELOAD_DONE }),
      (error: unknown) =>
        process.send?.({ type: MSG_RELOAD_DONE, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  try {
    // The HTTP server listens on a private loopback port of its own (never shared, never
    // announced) so that it runs as a listening server does (connection tracking, request and
    // header timeouts, graceful close); its clients' connections come from the primary.
    await server.app.listen({
      host: '127.0.0.1',
      port: 0,
      exclusive: true,
      listenTextResolver: () => 'worker accepting the connections the primary hands over',
    });
    const http = server.app.server;
    process.on('message', (message: ClusterMessage, socket?: Socket) => {
      if (message.type !== MSG_CONNECTION || typeof message.id !== 'number') return;
      // Closing (draining past drainDelayMs): the primary gives the connection to another worker.
      const accepted = http.listening && socket !== undefined && !socket.destroyed;
      process.send?.({ type: MSG_CONNECTION_ACK, id: message.id, accepted });
      if (!accepted) {
        socket?.destroy(); // this process's copy only: the primary keeps the connection open
        return;
      }
      // As net.Server does for a connection it accepts: counted (close() waits for it), half-open
      // allowed as for every HTTP server connection, then the HTTP server takes it.
      socket.allowHalfOpen = true;
      (http as unknown as CountedServer)._connections++;
      (socket as unknown as { _server: unknown })._server = http;
      http.emit('connection', socket);
    });
    process.send?.({ type: MSG_ACCEPTING });
    await server.ready;
    process.send?.({ type: MSG_READY });
  } catch (error) {
    process.send?.({ type: MSG_FAILED, error: error instanceof Error ? error.message : String(error) });
    await server.close().catch(() => undefined);
    process.exit(1);
  }
}
