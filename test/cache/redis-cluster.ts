/**
 * A throwaway 3-node Redis Cluster on loopback for tests (no persistence, no replicas): three
 * redis-server processes with --cluster-enabled yes on free ports, joined and given the 16384 slots
 * by `redis-cli --cluster create`. Each node keeps its cluster config (nodes.conf) in a temporary
 * folder, so kill() then start() brings the same cluster back (empty: nothing is persisted).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { freePort } from './redis-server.js';

/** Whether redis-server and redis-cli (Debian's redis-tools, a dependency of redis-server) are installed. */
export function redisClusterAvailable(): boolean {
  return (
    spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0 &&
    spawnSync('redis-cli', ['--version'], { stdio: 'ignore' }).status === 0
  );
}

interface Node {
  port: number;
  busPort: number;
  child: ChildProcess | undefined;
}

export class RedisClusterServer {
  private readonly dir = mkdtempSync(join(tmpdir(), 'rg-redis-cluster-'));
  private nodes: Node[] = [];
  private created = false;

  /** The start-up nodes, as `redis.cluster` takes them. */
  get startupNodes(): { host: string; port: number }[] {
    return this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  }

  /** Starts the three nodes (creating the cluster the first time) and waits until it serves every slot. */
  async start(): Promise<void> {
    if (this.nodes.length === 0)
      for (let i = 0; i < 3; i++)
        this.nodes.push({ port: await freePort(), busPort: await freePort(), child: undefined });
    for (const node of this.nodes) this.startNode(node);
    for (const node of this.nodes) await this.waitForNode(node);
    if (!this.created) {
      const create = spawnSync(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...this.nodes.map((n) => `127.0.0.1:${n.port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { encoding: 'utf8', timeout: 30_000 },
      );
      if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
      this.created = true;
    }
    await this.waitUntilOk();
  }

  private startNode(node: Node): void {
    if (node.child !== undefined && node.child.exitCode === null && node.child.signalCode === null) return;
    node.child = spawn(
      'redis-server',
      [
        '--port',
        String(node.port),
        '--cluster-port',
        String(node.busPort),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(this.dir, `nodes-${node.port}.conf`),
        '--cluster-node-timeout',
        '2000',
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'no',
        '--loglevel',
        'warning',
        '--dir',
        this.dir,
      ],
      { stdio: 'ignore' },
    );
  }

  /**
   * Waits for a node's PONG. Before the cluster exists, a node that exits first (another test took
   * one of its ports between freePort() and the start) is started again on new ports, twice at most.
   */
  private async waitForNode(node: Node): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (await waitForPing(node)) return;
      if (this.created || attempt === 3)
        throw new Error(`redis-server (cluster node) on port ${node.port} exited before answering`);
      node.port = await freePort();
      node.busPort = await freePort();
      this.startNode(node);
    }
  }

  /** Waits until every node says cluster_state:ok (all slots served). */
  private async waitUntilOk(): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = this.nodes.map(
        (n) =>
          spawnSync('redis-cli', ['-p', String(n.port), 'cluster', 'info'], { encoding: 'utf8', timeout: 2000 })
            .stdout ?? '',
      );
      if (states.every((s) => s.includes('cluster_state:ok'))) return;
      if (Date.now() > deadline) throw new Error(`Redis Cluster not ok within 20 s: ${states.join(' | ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** A client of the cluster (for tests that look at or write keys directly); the caller quits it. */
  client(): Cluster {
    const client = new Cluster(this.startupNodes);
    client.on('error', () => undefined); // nodes killed on purpose
    return client;
  }

  /** Keys matching `pattern` on every master. */
  async keys(client: Cluster, pattern: string): Promise<string[]> {
    const all = await Promise.all(client.nodes('master').map((node) => node.keys(pattern)));
    return all.flat();
  }

  /** Empties every master. */
  async flushAll(client: Cluster): Promise<void> {
    await Promise.all(client.nodes('master').map((node) => node.flushall()));
  }

  /** SIGKILLs every node and waits for the exits (start() brings the cluster back, empty). */
  async kill(): Promise<void> {
    await Promise.all(
      this.nodes.map(async (node) => {
        const child = node.child;
        if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
        node.child = undefined;
      }),
    );
  }

  /** Freezes every node (connections stay open, nothing answers) until resume(). */
  pause(): void {
    for (const node of this.nodes) node.child?.kill('SIGSTOP');
  }

  resume(): void {
    for (const node of this.nodes) node.child?.kill('SIGCONT');
  }

  /** Kills the nodes and removes their folder. */
  async destroy(): Promise<void> {
    this.resume();
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** True once the node answers PING; false when its process exits first. */
async function waitForPing(node: Node): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const child = node.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return false;
    const reply = spawnSync('redis-cli', ['-p', String(node.port), 'ping'], { encoding: 'utf8', timeout: 1000 });
    if (reply.stdout?.includes('PONG')) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`redis-server (cluster node) did not answer on port ${node.port} within 10 s`);
}
