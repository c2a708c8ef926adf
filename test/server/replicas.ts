/**
 * Replicas behind a real load balancer, for tests: one throwaway redis-server, `relevance-gate serve`
 * child processes sharing it (each from the sources, as `spawnServeCli` runs the CLI), and Debian's
 * nginx in front, all on loopback. nginx runs in the foreground with its own prefix in a temporary
 * folder, from deploy/nginx.conf (the deployment recipe of docs/deploy.md, rendered the same way
 * scripts/replicas.sh renders it), as an unprivileged user (`nobody` when the tests run as root).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/package-root.js';
import { freePort } from '../cache/redis-server.js';
import { type ServeCliProcess, spawnServeCli, TEST_ADMISSION_ARGS, waitForServing } from './helpers.js';

/** The nginx binary (Debian's package installs /usr/sbin/nginx, which is not on every user's PATH). */
export function nginxBinary(): string | undefined {
  for (const candidate of ['nginx', '/usr/sbin/nginx'])
    if (spawnSync(candidate, ['-v'], { stdio: 'ignore' }).status === 0) return candidate;
  return undefined;
}

/** deploy/nginx.conf with its placeholders filled in. */
export function renderNginxConf(listen: string, replicaA: string, replicaB: string): string {
  const template = readFileSync(join(packageRoot(), 'deploy', 'nginx.conf'), 'utf8');
  const out = template
    .replaceAll('__RG_LISTEN__', listen)
    .replaceAll('__RG_REPLICA_A__', replicaA)
    .replaceAll('__RG_REPLICA_B__', replicaB);
  if (/__RG_[A-Z_]+__/.test(out)) throw new Error('deploy/nginx.conf has a placeholder this helper does not fill');
  return out;
}

const NOBODY = 65534;

export interface Nginx {
  readonly url: string;
  readonly prefix: string;
  /** The error log so far (for failure messages). */
  errorLog(): string;
  /** The access log's lines (`upstream=[…] upstream_status=[…]` per request). */
  accessLog(): string[];
  stop(): Promise<void>;
}

/** Starts nginx in front of the given replicas (host:port each) and waits until it accepts requests. */
export async function startNginx(replicaA: string, replicaB: string): Promise<Nginx> {
  const binary = nginxBinary();
  if (binary === undefined) throw new Error('nginx is not installed');
  const port = await freePort();
  const prefix = mkdtempSync(join(tmpdir(), 'rg-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  mkdirSync(join(prefix, 'tmp'));
  writeFileSync(join(prefix, 'nginx.conf'), renderNginxConf(`127.0.0.1:${port}`, replicaA, replicaB));
  // As root, run it as nobody: the master never holds privileges it does not need (a loopback port
  // above 1024 needs none), and it can write its prefix only.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) for (const path of ['', 'logs', 'tmp', 'nginx.conf']) chownSync(join(prefix, path), NOBODY, NOBODY);
  const child = spawn(binary, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', 'logs/error.log'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const read = (file: string): string => {
    try {
      return readFileSync(join(prefix, 'logs', file), 'utf8');
    } catch {
      return '';
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    await stopChild(child, 'SIGQUIT');
    rmSync(prefix, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = read('error.log');
      rmSync(prefix, { recursive: true, force: true });
      throw new Error(`nginx exited with ${child.exitCode}: ${stderr}${log}`);
    }
    try {
      // /health/live is answered by any live replica.
      if ((await fetch(`${url}/health/live`)).status === 200) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not answer within 10 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    prefix,
    errorLog: () => stderr + read('error.log'),
    accessLog: () =>
      read('access.log')
        .split('\n')
        .filter((l) => l.length > 0),
    stop,
  };
}

export interface Replica {
  readonly url: string;
  /** host:port, as nginx's `$upstream_addr` reports it. */
  readonly addr: string;
  readonly cli: ServeCliProcess;
  readonly pid: number;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * A `relevance-gate serve` child process on a free loopback port using the given Redis, ready
 * (models warmed, Redis connected or given up on) when this resolves. The Redis read timeout is
 * raised from its 5 ms default to 50 ms, as in a deployment where Redis is across a network: on a
 * loaded test host a read slower than 5 ms would be scored instead and the scorer-call counts would
 * depend on the host's load. It stays under the 100 ms default budget: a read is skipped when the
 * deadline is closer than the timeout.
 */
export async function startReplica(redisUrl: string, configDir: string): Promise<Replica> {
  const config = join(configDir, `replica-${readdirSync(configDir).length}.json`);
  writeFileSync(config, JSON.stringify({ cache: { redisUrl, redisTimeoutMs: 50 } }));
  const cli = spawnServeCli(['--config', config, ...TEST_ADMISSION_ARGS]);
  const url = await waitForServing(cli, 600);
  if (url === undefined) {
    cli.child.kill('SIGKILL');
    throw new Error(`serve did not start: ${cli.stderr()}`);
  }
  for (let i = 0; ; i++) {
    const ready = await fetch(`${url}/health/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (i > 300) throw new Error(`${url} not ready in 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    addr: new URL(url).host,
    cli,
    pid: cli.child.pid as number,
    kill: (signal = 'SIGTERM') => stopChild(cli.child, signal),
  };
}

/** Sends a signal and waits for the exit (SIGKILL after 10 s). */
async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
