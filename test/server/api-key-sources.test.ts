/**
 * The API key out of sight: `serve --api-key-file <path>` and `RELEVANCE_GATE_API_KEY` give the
 * key; `--api-key <key>` still works but warns that `ps` shows it; a bad key file is a start-up
 * error (exit 1). With `--processes 2` no worker's command line or environment holds the key (it
 * travels over the cluster's IPC channel), nor the cache signing key (handed over IPC too: every
 * worker still signs), and 401 answers carry `WWW-Authenticate: Bearer`.
 */
import { type ChildProcessByStdio, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerConfigError, resolveServerConfig } from '../../src/server/index.js';
import { workerArguments } from '../../src/server/cluster.js';
import { readApiKeyFile } from '../../src/server/config/index.js';
import { packageRoot } from '../../src/util/package-root.js';
import { freePort, RedisServer, redisServerAvailable } from '../cache/redis-server.js';
import { postJson } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rg-api-key-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function keyFile(name: string, content: string): string {
  const file = join(dir, name);
  writeFileSync(file, content, { mode: 0o600 });
  return file;
}

describe('readApiKeyFile', () => {
  it('reads the key, trimming the trailing newline', async () => {
    expect(await readApiKeyFile(keyFile('a', 'file-key-1\n'))).toBe('file-key-1');
    expect(await readApiKeyFile(keyFile('b', 'file-key-2\r\n'))).toBe('file-key-2');
    expect(await readApiKeyFile(keyFile('c', 'file key 3'))).toBe('file key 3');
  });

  it('an empty, missing, unreadable or multi-line file is a ServerConfigError naming the file', async () => {
    const empty = keyFile('empty', '\n');
    await expect(readApiKeyFile(empty)).rejects.toThrow(ServerConfigError);
    await expect(readApiKeyFile(empty)).rejects.toThrow(/empty/);
    await expect(readApiKeyFile(join(dir, 'missing'))).rejects.toThrow(/cannot read the API key file .*missing/);
    await expect(readApiKeyFile(keyFile('two', 'one\ntwo\n'))).rejects.toThrow(/more than one line/);
    if (process.getuid?.() !== 0) {
      const locked = keyFile('locked', 'k\n');
      chmodSync(locked, 0o000);
      await expect(readApiKeyFile(locked)).rejects.toThrow(/cannot read the API key file/);
    }
  });

  it('a key that could never match an Authorization header is refused', () => {
    expect(() => resolveServerConfig({ apiKey: ' padded' })).toThrow(/apiKey must be printable/);
    expect(() => resolveServerConfig({ apiKey: 'a\u0001b' })).toThrow(/apiKey must be printable/);
    expect(resolveServerConfig({ apiKey: 'fine-key' }).apiKey).toBe('fine-key');
  });
});

describe('workerArguments', () => {
  it('drops --api-key and its value, in both spellings, and nothing else', () => {
    expect(workerArguments(['serve', '--api-key', 'K', '--port', '0'])).toEqual(['serve', '--port', '0']);
    expect(workerArguments(['serve', '--api-key=K', '--processes', '2'])).toEqual(['serve', '--processes', '2']);
    expect(workerArguments(['serve', '--api-key-file', '/k'])).toEqual(['serve', '--api-key-file', '/k']);
  });
});

interface Serve {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

/** `relevance-gate serve --port 0 <args>` from the sources, with extra environment variables. */
function serve(args: readonly string[], env: Record<string, string> = {}): Serve {
  const root = packageRoot();
  const child = spawn(
    process.execPath,
    // Bounds-only admission: this test is about the key, not about refusing work on a busy host.
    [
      '--import',
      'tsx',
      join(root, 'src', 'cli', 'main.ts'),
      'serve',
      '--port',
      '0',
      '--log-level',
      'warn',
      '--admission',
      'bounds',
      ...args,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function served(s: Serve): Promise<string> {
  for (let i = 0; i < 900 && s.child.exitCode === null; i++) {
    const url = /serving on (http:\/\/\S+)/.exec(s.stdout())?.[1];
    if (url !== undefined) return url;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`serve did not start (exit ${s.child.exitCode}); stderr: ${s.stderr()}`);
}

async function stop(s: Serve): Promise<number | null> {
  if (s.child.exitCode === null) s.child.kill('SIGTERM');
  return s.exited;
}

/** Pids of the process's descendants (children, grandchildren, ...). */
function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    children = []; // ps exits 1 when there is none
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

function cmdline(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
}

function environ(pid: number): string {
  return readFileSync(`/proc/${pid}/environ`, 'utf8');
}

/** The worker processes of a `serve --processes N` primary: its children running `main.ts serve`. */
function workers(primary: number): number[] {
  return descendants(primary).filter((pid) => {
    try {
      return cmdline(pid).includes('main.ts serve');
    } catch {
      return false;
    }
  });
}

/** The key works (answers 200 from every worker), its absence is a 401 with the Bearer challenge. */
async function checkAuth(url: string, key: string): Promise<void> {
  const missing = await postJson(`${url}/v1/rerank`, { query: 'q', documents: ['a'] });
  expect(missing.status).toBe(401);
  expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="relevance-gate"');
  const wrong = await postJson(`${url}/rerank`, { query: 'q', texts: ['a'] }, { authorization: 'Bearer wrong' });
  expect(wrong.status).toBe(401);
  expect(wrong.body).toMatchObject({ error_type: 'Validation' });
  expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="relevance-gate", error="invalid_token"');
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      postJson(`${url}/v1/rerank`, { query: `q ${i}`, documents: ['a b', 'c'] }, { authorization: `Bearer ${key}` }),
    ),
  );
  expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
}

describe('serve: a bad key file stops the start with exit code 1', () => {
  it('empty file, missing file, and --api-key with --api-key-file', async () => {
    const empty = serve(['--api-key-file', keyFile('empty-cli', '')]);
    expect(await empty.exited).toBe(1);
    expect(empty.stderr()).toMatch(/RG_ERR_SERVER_CONFIG: the API key file .* is empty/);
    const missing = serve(['--api-key-file', join(dir, 'nope')]);
    expect(await missing.exited).toBe(1);
    expect(missing.stderr()).toMatch(/cannot read the API key file/);
    const both = serve(['--api-key-file', keyFile('both', 'k\n'), '--api-key', 'k']);
    expect(await both.exited).toBe(1);
    expect(both.stderr()).toMatch(/not both/);
  }, 60_000);
});

describe.skipIf(process.platform !== 'linux')(
  'serve --processes 2: the key in no worker command line or environment',
  () => {
    it('given by file: neither the primary nor any worker shows it', async () => {
      const key = 'file-secret-6f1d2c9a';
      const s = serve(['--processes', '2', '--api-key-file', keyFile('cluster-key', `${key}\n`)]);
      try {
        const url = await served(s);
        expect(s.stderr()).not.toMatch(/warning/);
        const pids = workers(s.child.pid as number);
        expect(pids).toHaveLength(2);
        for (const pid of [s.child.pid as number, ...pids, ...pids.flatMap(descendants)]) {
          expect(cmdline(pid), `cmdline of ${pid}`).not.toContain(key);
          expect(environ(pid), `environ of ${pid}`).not.toContain(key);
        }
        for (const pid of pids) expect(environ(pid)).not.toContain('RELEVANCE_GATE_CLUSTER_CONFIG');
        await checkAuth(url, key);
        expect(await stop(s)).toBe(0);
      } finally {
        if (s.child.exitCode === null) s.child.kill('SIGKILL');
      }
    }, 120_000);

    it('given by RELEVANCE_GATE_API_KEY: only the primary, where the user put it, holds it (and the cache signing key)', async () => {
      const key = 'env-secret-0b7e44d1';
      const signingKey = 'signing-secret-5c2e8f7a1d3b9e04';
      const s = serve(['--processes', '2'], {
        RELEVANCE_GATE_API_KEY: key,
        RELEVANCE_GATE_CACHE_SIGNING_KEY: signingKey,
      });
      try {
        const url = await served(s);
        const primary = s.child.pid as number;
        expect(environ(primary)).toContain(`RELEVANCE_GATE_API_KEY=${key}`);
        expect(cmdline(primary)).not.toContain(key);
        const pids = workers(primary);
        expect(pids).toHaveLength(2);
        for (const pid of [...pids, ...pids.flatMap(descendants)]) {
          expect(cmdline(pid), `cmdline of ${pid}`).not.toContain(key);
          expect(environ(pid), `environ of ${pid}`).not.toContain(key);
          expect(environ(pid)).not.toContain('RELEVANCE_GATE_API_KEY=');
          expect(environ(pid), `environ of ${pid}`).not.toContain(signingKey);
        }
        await checkAuth(url, key);
        expect(await stop(s)).toBe(0);
      } finally {
        if (s.child.exitCode === null) s.child.kill('SIGKILL');
      }
    }, 120_000);

    it('given by --api-key: a warning, and the workers get neither the flag nor the key', async () => {
      const key = 'flag-secret-93aa01e5';
      const s = serve(['--processes', '2', '--api-key', key]);
      try {
        const url = await served(s);
        expect(s.stderr()).toMatch(
          /warning: --api-key puts the key on the command line.*--api-key-file.*RELEVANCE_GATE_API_KEY/,
        );
        const pids = workers(s.child.pid as number);
        expect(pids).toHaveLength(2);
        for (const pid of [...pids, ...pids.flatMap(descendants)]) {
          expect(cmdline(pid), `cmdline of ${pid}`).not.toContain(key);
          expect(cmdline(pid)).not.toContain('--api-key');
          expect(environ(pid), `environ of ${pid}`).not.toContain(key);
        }
        await checkAuth(url, key);
        expect(await stop(s)).toBe(0);
      } finally {
        if (s.child.exitCode === null) s.child.kill('SIGKILL');
      }
    }, 120_000);
  },
);

describe.skipIf(process.platform !== 'linux' || !redisServerAvailable())(
  'serve --processes 2 with RELEVANCE_GATE_CACHE_SIGNING_KEY',
  () => {
    it('every worker signs its Redis entries, yet no worker environment holds the signing key', async () => {
      const redis = new RedisServer(await freePort());
      await redis.start();
      const signingKey = 'cluster-signing-key-7d41c0aa59e2b3f8';
      const s = serve(['--processes', '2', '--redis-url', redis.url], { RELEVANCE_GATE_CACHE_SIGNING_KEY: signingKey });
      try {
        const url = await served(s);
        const pids = workers(s.child.pid as number);
        expect(pids).toHaveLength(2);
        for (const pid of [...pids, ...pids.flatMap(descendants)])
          expect(environ(pid), `environ of ${pid}`).not.toContain(signingKey);
        // The gauge aggregates with min over the workers: 1 only when both sign.
        const metrics = await (await fetch(`${url}/metrics`)).text();
        expect(metrics).toMatch(/^relevance_gate_cache_l2_signed 1$/m);
        expect(await stop(s)).toBe(0);
      } finally {
        if (s.child.exitCode === null) s.child.kill('SIGKILL');
        await redis.kill();
      }
    }, 120_000);
  },
);
