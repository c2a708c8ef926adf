/**
 * The ioredis client of the L2: one Redis (`url`) or a Redis Cluster (`cluster` start-up nodes),
 * with the settings that make it fail fast instead of queueing, and the two Lua scripts of the
 * lease protocol. Every command the L2 sends names keys of one hash tag (one request's scope,
 * keys.ts), so each runs on one Cluster slot.
 */
import type { Cluster, Redis } from 'ioredis';
import { requirePackage } from '../util/optional-package.js';

/** A start-up node of a Redis Cluster; the client discovers the others from it. */
export interface RedisClusterNode {
  /** Host name or address. */
  readonly host: string;
  /** Client port (not the cluster bus port). */
  readonly port: number;
}

/** What the client is built from (RedisL2Settings' connection part). */
export interface RedisClientSettings {
  readonly url: string | undefined;
  readonly cluster: readonly RedisClusterNode[] | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  readonly connectTimeoutMs: number;
  readonly reconnectMaxDelayMs: number;
}

/**
 * Reads each value; where there is none, takes the pair's lease (SET NX PX) for this cache.
 * KEYS: n value keys, then their n lease keys. ARGV: this cache's token, the lease length (ms).
 * Returns per pair the value, 1 (the lease is this cache's now) or 0 (another holder's lease).
 * A lease already holding this cache's token (one its earlier call did not release) is its own.
 */
const LEASE_READ_LUA = `
local n = #KEYS / 2
local out = {}
for i = 1, n do
  local v = redis.call('GET', KEYS[i])
  if v then
    out[i] = v
  elseif redis.call('SET', KEYS[n + i], ARGV[1], 'NX', 'PX', ARGV[2]) then
    out[i] = 1
  elseif redis.call('GET', KEYS[n + i]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[n + i], ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
`;

/**
 * Writes values and drops the leases this cache holds on them, atomically: a reader sees the
 * lease until the value is there. KEYS: n value keys, then their n lease keys. ARGV: token, entry
 * TTL (ms), then the n values. Without values (n = 0 of ARGV), only releases the leases.
 */
const STORE_LUA = `
local n = #KEYS / 2
local values = #ARGV - 2
for i = 1, n do
  if values > 0 then redis.call('SET', KEYS[i], ARGV[2 + i], 'PX', ARGV[2]) end
  if redis.call('GET', KEYS[n + i]) == ARGV[1] then redis.call('DEL', KEYS[n + i]) end
end
return n
`;

/** The scripts as client commands (ioredis defineCommand: EVALSHA, EVAL on NOSCRIPT). */
interface ScriptCommands {
  rgLeaseReadBuffer(numKeys: number, ...args: Array<string | Buffer | number>): Promise<Array<Buffer | number>>;
  rgStore(numKeys: number, ...args: Array<string | Buffer | number>): Promise<number>;
}

export type L2Client = (Redis | Cluster) & ScriptCommands;

export interface ClientHooks {
  /** Whether the L2 was closed: a closed client must not schedule another reconnect. */
  readonly closed: () => boolean;
  /** An 'error' event of the connection (or of a Cluster node). */
  readonly onError: () => void;
}

/** States of a Cluster node's connection that mean it was lost (a node not used yet is still 'wait'). */
const LOST: ReadonlySet<string> = new Set(['reconnecting', 'close', 'end']);

/**
 * Whether the client can serve commands: connected (one server), or the cluster ready and none
 * of its masters' connections lost (a Cluster client stays 'ready' while some of its nodes are
 * down; it connects to a node when it first sends it a command).
 */
export function clientConnected(client: L2Client): boolean {
  if (client.status !== 'ready') return false;
  if (!client.isCluster) return true;
  const masters = (client as Cluster).nodes('master');
  return masters.length > 0 && masters.every((node) => !LOST.has(node.status));
}

/**
 * Opens the connection to every master of a cluster (ioredis opens a node's connection at the
 * first command sent to it: on a loaded host that first read can outlast the read timeout).
 * Resolves once each has answered or failed; a no-op for one server.
 */
export async function connectAllNodes(client: L2Client): Promise<void> {
  if (!client.isCluster) return;
  await Promise.all((client as Cluster).nodes('master').map((node) => node.ping().catch(() => undefined)));
}

export function createRedisClient(settings: RedisClientSettings, hooks: ClientHooks): L2Client {
  // ioredis loads only when a Redis L2 is configured.
  const ioredis = requirePackage<typeof import('ioredis')>('ioredis', 'the Redis L2 cache');
  const reconnectMax = settings.reconnectMaxDelayMs;
  // null once closed: a connection that drops after close() must not arm another reconnect timer
  // (measured: one left armed kept the host process alive after Redis was killed).
  const retry = (times: number): number | null =>
    hooks.closed() ? null : Math.min(25 * 2 ** Math.min(times, 10), reconnectMax);
  const common = {
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: settings.connectTimeoutMs,
    disableClientInfo: true,
  };
  let client: Redis | Cluster;
  if (settings.cluster !== undefined) {
    client = new ioredis.Cluster(
      settings.cluster.map((n) => ({ host: n.host, port: n.port })),
      {
        enableOfflineQueue: false,
        lazyConnect: false,
        // A node that restarts with its slots (no topology change) is reconnected; null would wait
        // for a MOVED that never comes.
        clusterNodeRetryStrategy: retry,
        // Reads and writes go to the slot's master: a replica may lag behind a fresh write.
        scaleReads: 'master',
        clusterRetryStrategy: retry,
        slotsRefreshTimeout: settings.connectTimeoutMs,
        // A slot moving or a failover answers MOVED / TRYAGAIN / CLUSTERDOWN: a retry after this
        // long is still bounded by the caller's read timeout, which drops what comes too late.
        retryDelayOnMoved: 0,
        retryDelayOnFailover: 50,
        retryDelayOnClusterDown: 50,
        retryDelayOnTryAgain: 50,
        redisOptions: {
          ...common,
          ...(settings.username === undefined ? {} : { username: settings.username }),
          ...(settings.password === undefined ? {} : { password: settings.password }),
          ...(settings.tls ? { tls: {} } : {}),
        },
      },
    );
    // A node's connection errors come as 'node error'; without a listener they are only logged.
    client.on('node error', hooks.onError);
  } else {
    client = new ioredis.Redis(settings.url as string, {
      ...common,
      // Fail fast instead of queueing while disconnected: a queued read would outlive its caller.
      enableOfflineQueue: false,
      retryStrategy: retry,
      lazyConnect: false,
    });
  }
  // Without a listener, an 'error' event would crash the process.
  client.on('error', hooks.onError);
  client.defineCommand('rgLeaseRead', { lua: LEASE_READ_LUA });
  client.defineCommand('rgStore', { lua: STORE_LUA });
  return client as L2Client;
}
