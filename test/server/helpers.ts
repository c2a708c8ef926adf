/**
 * Test helpers: start the real server on a random loopback port, real passages from the shared
 * SciFact collection, controllable scorers (blocking, failing, slow) and the library reference.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { createGate, loadFastPathScorer, type Passage, type Scorer } from '../../src/index.js';
import { startServer, type RelevanceGateServer, type ServerConfigInput } from '../../src/server/index.js';
import { packageRoot } from '../../src/util/package-root.js';

export const SHARED_DATA = join(packageRoot(), '..', 'shared', 'data');
export const FAST_PATH_DIR = join(packageRoot(), 'models', 'fast-path-lexical');

/**
 * Admission of the tests that are not about admission: bounds only and a long standing-queue
 * allowance, so a test host loaded by parallel test files does not turn their requests into 429s.
 * The admission tests pass their own `admission`.
 */
const TEST_ADMISSION = { predictive: false, maxQueueMs: 1000 } as const;

/** The same for `serve` child processes. */
export const TEST_ADMISSION_ARGS: readonly string[] = ['--admission', 'bounds', '--max-queue-ms', '1000'];

/** Starts a server on 127.0.0.1:0 with silent logs and waits until it is ready. */
export async function start(config: ServerConfigInput = {}): Promise<RelevanceGateServer> {
  return startServer(
    { host: '127.0.0.1', port: 0, logLevel: 'silent', admission: TEST_ADMISSION, ...config },
    { defaultMetrics: false },
  );
}

/** A `relevance-gate serve` child process, with what it has printed so far. */
export interface ServeCliProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** Resolves with the exit code once the process exits. */
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

/**
 * Runs `relevance-gate serve --port 0 <args> --log-level warn` from the sources, as a user runs the
 * CLI, node started with `nodeFlags`.
 */
export function spawnServeCli(args: readonly string[] = [], nodeFlags: readonly string[] = []): ServeCliProcess {
  const root = packageRoot();
  const serve = ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), 'serve'];
  const child = spawn(process.execPath, [...nodeFlags, ...serve, '--port', '0', ...args, '--log-level', 'warn'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

/** Waits up to `attempts` × 100 ms for the "serving on" line; its URL, or undefined when it never came. */
export async function waitForServing(cli: ServeCliProcess, attempts: number): Promise<string | undefined> {
  for (let i = 0; i < attempts && !/serving on http:\/\/\S+/.test(cli.stdout()); i++)
    await new Promise((r) => setTimeout(r, 100));
  return /serving on (http:\/\/\S+)/.exec(cli.stdout())?.[1];
}

export interface QueryWithDocs {
  readonly query: string;
  readonly documents: string[];
}

/** SciFact queries with their judged documents plus a few others (deterministic). */
export function scifactRequests(count: number, docsPerQuery = 8): QueryWithDocs[] {
  const dir = join(SHARED_DATA, 'scifact');
  if (!existsSync(dir)) throw new Error(`shared data not found at ${dir}`);
  const read = (file: string) =>
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .filter((l) => l.trim().length > 0)
      .map((l) => JSON.parse(l) as Record<string, string>);
  const docs = read('docs.jsonl');
  const text = new Map(docs.map((d) => [d.id, `${d.title ?? ''} ${d.text ?? ''}`.trim()]));
  const queries = read('queries.jsonl');
  const judged = new Map<string, string[]>();
  for (const line of readFileSync(join(dir, 'qrels.tsv'), 'utf8').split('\n').slice(1)) {
    const [qid, did] = line.split('\t');
    if (!qid || !did || !text.has(did)) continue;
    judged.set(qid, [...(judged.get(qid) ?? []), did]);
  }
  const out: QueryWithDocs[] = [];
  let filler = 0;
  for (const q of queries) {
    const ids = judged.get(q.id);
    if (ids === undefined) continue;
    const documents = ids.map((id) => text.get(id) as string);
    while (documents.length < docsPerQuery) documents.push(text.get(docs[filler++ % docs.length].id) as string);
    out.push({ query: q.text, documents: documents.slice(0, docsPerQuery) });
    if (out.length === count) break;
  }
  return out;
}

/**
 * The library's score for each document (index order), through createGate like the server:
 * `'rerank'` = what the rerank protocols report (the `ranking` signal when every document has it,
 * else the relevance), `'relevance'` = the relevance the gate decided with.
 */
export async function libraryScores(
  query: string,
  documents: readonly string[],
  which: 'rerank' | 'relevance' = 'rerank',
): Promise<number[]> {
  const scorer = await loadFastPathScorer(FAST_PATH_DIR);
  try {
    const gate = createGate({ scorer, policy: { relevanceSignal: ['relevant'] } });
    const passages: Passage[] = documents.map((text, i) => ({ id: String(i), text }));
    const result = await gate.filter(query, passages);
    const items = [...result.included, ...result.conflicting, ...result.excluded];
    // The rerank surfaces return the gate's calibrated score (GateItem.score).
    const scores = new Array<number>(documents.length);
    for (const item of items)
      scores[item.rank] = which === 'rerank' ? (item.score as number) : (item.relevance as number);
    return scores;
  } finally {
    scorer.model.dispose();
  }
}

/** A scorer that answers `relevance = 1 / (1 + index)` once `release()` is called (or at once when open). */
export function gatedScorer(id = 'gated'): Scorer & { release(): void; calls: number } {
  let waiters: Array<() => void> = [];
  let open = false;
  const scorer = {
    id,
    calls: 0,
    release() {
      open = true;
      for (const w of waiters) w();
      waiters = [];
    },
    async score(_query: string, passages: readonly Passage[]) {
      scorer.calls++;
      if (!open) await new Promise<void>((resolve) => waiters.push(resolve));
      return passages.map((p) => ({
        probabilities: { relevant: 1 / (1 + Number(p.id)) },
        raw: { relevant: -Number(p.id) },
      }));
    },
  };
  return scorer;
}

/** A scorer that takes `ms` per call (honours nothing: the gate's deadline race must cut it). */
export function slowScorer(ms: number, id = 'slow'): Scorer {
  return {
    id,
    async score(_query, passages) {
      await new Promise((r) => setTimeout(r, ms));
      return passages.map((p) => ({ relevant: 0.9 - Number(p.id) * 0.01 }));
    },
  };
}

export function failingScorer(id = 'failing'): Scorer {
  return {
    id,
    async score() {
      throw new Error('inference backend exploded at /secret/path/model.onnx');
    },
  };
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text.length === 0 ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}
