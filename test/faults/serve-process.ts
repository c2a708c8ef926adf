/**
 * `relevance-gate serve` as a child process for the fault scenarios (from the sources, as a user
 * runs the CLI), with what it printed, its worker processes and their /proc views.
 */
import { type ChildProcessByStdio, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { packageRoot } from '../../src/util/package-root.js';

export interface ServeProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly pid: number;
  /** Resolves with the exit code (or the signal's name) once the process exits. */
  readonly exited: Promise<number | string | null>;
  stdout(): string;
  stderr(): string;
  /** stderr lines with the time (performance.now()) they arrived. */
  readonly lines: ReadonlyArray<{ readonly at: number; readonly line: string }>;
}

/**
 * Starts `serve --port 0 --log-level warn <args>` with extra environment variables, from the
 * sources (tsx), or from the built CLI when `FAULT_SERVE_CLI` names it (e.g. dist/cli/main.js:
 * a start-up without the TypeScript transform, as in production).
 */
export function startServe(args: readonly string[], env: Record<string, string | undefined> = {}): ServeProcess {
  const root = packageRoot();
  const built = process.env.FAULT_SERVE_CLI;
  const entry =
    built === undefined || built === '' ? ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')] : [built];
  const child = spawn(process.execPath, [...entry, 'serve', '--port', '0', '--log-level', 'warn', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  let partial = '';
  const lines: Array<{ at: number; line: string }> = [];
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    const text = d.toString();
    stderr = (stderr + text).slice(-20_000);
    const parts = (partial + text).split('\n');
    partial = parts.pop() ?? '';
    const at = performance.now();
    for (const line of parts) lines.push({ at, line });
  });
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal)),
  );
  return { child, pid: child.pid as number, exited, stdout: () => stdout, stderr: () => stderr, lines };
}

/** Waits for the "serving on" line (the primary prints it once every worker is ready); its URL. */
export async function servingUrl(s: ServeProcess, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && s.child.exitCode === null && s.child.signalCode === null) {
    const url = /serving on (http:\/\/\S+)/.exec(s.stdout())?.[1];
    if (url !== undefined) return url;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`serve did not start (exit ${s.child.exitCode ?? s.child.signalCode}); stderr: ${s.stderr()}`);
}

/** SIGTERM, then the exit code; SIGKILL after `graceMs`. */
export async function stopServe(s: ServeProcess, graceMs = 30_000): Promise<number | string | null> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return s.exited;
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), graceMs);
  try {
    return await s.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Pids of the process's children. */
export function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    return []; // ps exits 1 when there is none
  }
}

/** Pids of the process's descendants (children, grandchildren, ...). */
export function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((c) => [c, ...descendantsOf(c)]);
}

export function cmdlineOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
}

export function environOf(pid: number): string {
  return readFileSync(`/proc/${pid}/environ`, 'utf8');
}

/** The worker processes of a `serve --processes N` primary: its children running `main.{ts,js} serve`. */
export function workersOf(primary: number): number[] {
  return childrenOf(primary).filter((pid) => {
    try {
      return /main\.[jt]s serve/.test(cmdlineOf(pid));
    } catch {
      return false;
    }
  });
}

/** The socket inodes process `pid` holds (its file descriptors), read synchronously. */
export function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m !== null) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** The TCP connections to local `port`: socket inode → the client's port (/proc/net/tcp{,6}). */
export function connectionsToPort(port: number): Map<string, number> {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')} `;
  const out = new Map<string, number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.includes(hex)) continue;
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !f[1].endsWith(hex.trim())) continue;
      out.set(f[9], Number.parseInt(f[2].split(':')[1], 16));
    }
  }
  return out;
}
