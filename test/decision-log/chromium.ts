/**
 * A headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
 * JSON messages separated by NUL on file descriptors 3 and 4), so the inspector's browser test
 * needs the system's `chromium` (Debian's package; .ci/run installs it) and no npm package.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** The Chromium binary: CHROMIUM_PATH, else the usual Debian/Ubuntu names; undefined when none. */
export function chromiumPath(): string | undefined {
  const candidates = [
    process.env.CHROMIUM_PATH,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
  ];
  return candidates.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
}

type Json = Record<string, unknown>;

export interface Page {
  /** Evaluates an expression in the page (promises awaited) and returns its JSON value. */
  evaluate<T>(expression: string): Promise<T>;
  /** Polls `expression` until it is truthy (or throws after `timeoutMs`). */
  waitFor(expression: string, timeoutMs?: number): Promise<void>;
  navigate(url: string): Promise<void>;
  screenshot(): Promise<Buffer>;
}

export interface Browser {
  open(url: string): Promise<Page>;
  close(): Promise<void>;
}

export async function launchChromium(path: string): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'rg-chromium-'));
  const child: ChildProcess = spawn(
    path,
    [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--remote-debugging-pipe',
      `--user-data-dir=${profile}`,
      '--window-size=1400,900',
      'about:blank',
    ],
    // Its own process group, so close() can stop the helper processes too, not only the browser.
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const input = child.stdio[3] as Writable;
  const output = child.stdio[4] as Readable;
  let nextId = 1;
  const pending = new Map<number, { resolve(v: Json): void; reject(e: Error): void }>();
  const listeners = new Set<(message: Json) => void>();
  let buffer = '';
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let end = buffer.indexOf('\0');
    while (end >= 0) {
      const message = JSON.parse(buffer.slice(0, end)) as Json;
      buffer = buffer.slice(end + 1);
      end = buffer.indexOf('\0');
      const id = message.id as number | undefined;
      if (id !== undefined && pending.has(id)) {
        const p = pending.get(id) as { resolve(v: Json): void; reject(e: Error): void };
        pending.delete(id);
        if (message.error !== undefined) p.reject(new Error(JSON.stringify(message.error)));
        else p.resolve((message.result ?? {}) as Json);
      } else for (const l of listeners) l(message);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => {
    for (const p of pending.values()) p.reject(new Error(`chromium exited: ${stderr}`));
    pending.clear();
  });
  const send = (method: string, params: Json = {}, sessionId?: string): Promise<Json> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      input.write(`${JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) })}\0`);
    });
  const nextEvent = (method: string, sessionId: string, timeoutMs = 20_000): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        listeners.delete(on);
        reject(new Error(`no ${method} in ${timeoutMs} ms`));
      }, timeoutMs);
      const on = (m: Json): void => {
        if (m.method === method && m.sessionId === sessionId) {
          clearTimeout(timer);
          listeners.delete(on);
          resolve();
        }
      };
      listeners.add(on);
    });

  return {
    async open(url) {
      const { targetId } = (await send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
      const { sessionId } = (await send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
      await send('Page.enable', {}, sessionId);
      await send('Runtime.enable', {}, sessionId);
      const page: Page = {
        async evaluate<T>(expression: string): Promise<T> {
          const r = (await send(
            'Runtime.evaluate',
            { expression, awaitPromise: true, returnByValue: true },
            sessionId,
          )) as {
            result: { value?: unknown };
            exceptionDetails?: { text: string; exception?: { description?: string } };
          };
          if (r.exceptionDetails !== undefined)
            throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
          return r.result.value as T;
        },
        async waitFor(expression, timeoutMs = 20_000) {
          const until = Date.now() + timeoutMs;
          for (;;) {
            // A navigation in progress destroys the context being evaluated in: try again.
            const ok = await page.evaluate<boolean>(`Boolean(${expression})`).catch(() => false);
            if (ok) return;
            if (Date.now() > until) throw new Error(`timed out waiting for ${expression}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        },
        async navigate(to) {
          const loaded = nextEvent('Page.loadEventFired', sessionId);
          await send('Page.navigate', { url: to }, sessionId);
          await loaded;
        },
        async screenshot() {
          const { data } = (await send('Page.captureScreenshot', { format: 'png' }, sessionId)) as { data: string };
          return Buffer.from(data, 'base64');
        },
      };
      await page.navigate(url);
      return page;
    },
    async close() {
      try {
        await Promise.race([send('Browser.close'), new Promise((r) => setTimeout(r, 2000))]);
      } catch {
        // already gone
      }
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      // Chromium's helper processes can outlive the browser and keep writing to the profile.
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is already gone
      }
      rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    },
  };
}
