/**
 * The Redis deployments the L2 tests run against, side by side: one redis-server (`url`) and a
 * 3-node Redis Cluster (`cluster`), each started by the test file on free loopback ports. A test
 * file loops over L2_BACKENDS and gets, per backend, the cache's `redis` connection options, a raw
 * client, and kill / restart / pause / resume of the whole deployment.
 */
import type { Cluster, Redis as RedisClient } from 'ioredis';
import { Redis } from 'ioredis';
import { RedisClusterServer, redisClusterAvailable } from './redis-cluster.js';
import { freePort, RedisServer, redisServerAvailable } from './redis-server.js';

/** The connection part of the cache's `redis` option. */
export type L2Connection =
  | { readonly url: string }
  | { readonly cluster: readonly { readonly host: string; readonly port: number }[] };

export interface L2Deployment {
  readonly connection: L2Connection;
  /** A client of the deployment (closed by destroy()). */
  readonly raw: RedisClient | Cluster;
  /** Keys matching `pattern` (every master of a cluster). */
  keys(pattern: string): Promise<string[]>;
  flushAll(): Promise<void>;
  /** SIGKILL (every node). */
  kill(): Promise<void>;
  /** (Re)starts it, on the same ports; a no-op while it runs. */
  start(): Promise<void>;
  pause(): void;
  resume(): void;
  destroy(): Promise<void>;
}

export interface L2Backend {
  readonly name: 'redis-server' | 'redis-cluster';
  /** Whether the binaries it needs are installed; the reason otherwise. */
  readonly missing: string | undefined;
  deploy(): Promise<L2Deployment>;
}

const single: L2Backend = {
  name: 'redis-server',
  missing: redisServerAvailable() ? undefined : 'redis-server binary not found (apt-get install redis-server)',
  async deploy() {
    const server = new RedisServer(await freePort());
    await server.start();
    const raw = new Redis(server.url);
    raw.on('error', () => undefined); // the server killed on purpose
    return {
      connection: { url: server.url },
      raw,
      keys: (pattern) => raw.keys(pattern),
      flushAll: async () => {
        await raw.flushall();
      },
      kill: () => server.kill(),
      start: () => server.start(),
      pause: () => server.pause(),
      resume: () => server.resume(),
      destroy: async () => {
        server.resume();
        raw.disconnect();
        await server.kill();
      },
    };
  },
};

const cluster: L2Backend = {
  name: 'redis-cluster',
  missing: redisClusterAvailable()
    ? undefined
    : 'redis-server or redis-cli not found (apt-get install redis-server, which brings redis-tools)',
  async deploy() {
    const server = new RedisClusterServer();
    await server.start();
    const raw = server.client();
    return {
      connection: { cluster: server.startupNodes },
      raw,
      keys: (pattern) => server.keys(raw, pattern),
      flushAll: () => server.flushAll(raw),
      kill: () => server.kill(),
      start: () => server.start(),
      pause: () => server.pause(),
      resume: () => server.resume(),
      destroy: async () => {
        raw.disconnect();
        await server.destroy();
      },
    };
  },
};

export const L2_BACKENDS: readonly L2Backend[] = [single, cluster];

/**
 * Whether `backend` can run here; warns with the reason when it cannot. Under CI a missing backend
 * fails the file instead (.ci/run installs redis-server, and redis-cli with it).
 */
export function backendRuns(backend: L2Backend, file: string): boolean {
  if (backend.missing === undefined) return true;
  if (process.env.CI) throw new Error(`${file}: ${backend.missing}, but CI must run the ${backend.name} L2 tests`);
  console.warn(`[${file}] ${backend.name} tests SKIPPED: ${backend.missing}`);
  return false;
}

/** A connection to a port where nothing listens (a Redis that never answers). */
export async function unreachable(backend: L2Backend): Promise<L2Connection> {
  const port = await freePort();
  return backend.name === 'redis-cluster'
    ? { cluster: [{ host: '127.0.0.1', port }] }
    : { url: `redis://127.0.0.1:${port}` };
}
