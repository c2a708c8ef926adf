/**
 * The writer thread: it writes exactly the lines the inline writer writes, and when it cannot run
 * (fails to start, dies) the log writes on its own thread instead, losing nothing it had handed over.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDecisionLog,
  type DecisionEntry,
  type DecisionLogModel,
  parseDecisionLines,
  readDecisionLog,
} from '../../src/decision-log/index.js';
import { createThreadWriter, type WriterHost } from '../../src/decision-log/writers.js';
import { createGate, type GateResult } from '../../src/index.js';
import { requests, signalScorer, tempDir } from './helpers.js';

const scorer = signalScorer();
const policy = { threshold: 0.5, minKept: 1 };
const gate = createGate({ scorer, policy });
const model: DecisionLogModel = { name: 'm', scorer, policy };
const other: DecisionLogModel = { name: 'other', scorer, policy: { threshold: 0.3 } };

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
function temp(): string {
  const t = tempDir();
  cleanups.push(t.remove);
  return t.dir;
}

async function entries(): Promise<DecisionEntry[]> {
  const out: DecisionEntry[] = [];
  const reqs = requests(12, 8);
  for (let i = 0; i < reqs.length; i++) {
    const { query, passages } = reqs[i];
    const override = i % 4 === 1 ? { threshold: 0.2 } : undefined;
    const result: GateResult = await gate.filter(query, passages, override === undefined ? {} : { policy: override });
    out.push({
      requestId: `r${i}`,
      model: i % 3 === 2 ? other : model,
      result,
      endpoint: i % 2 === 0 ? '/v1/gate' : '/v1/rerank',
      serverMs: i + 0.5,
      ...(override === undefined ? {} : { override }),
      ...(i % 5 === 4 ? { shadowOf: `r${i - 1}` } : {}),
    });
  }
  return out;
}

/** Every line of a log directory with its time left out (each log stamps its own). */
function linesOf(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n'))
    .filter((l) => l.length > 0)
    .map((l) => l.replace(/"time":"[^"]*",/, ''));
}

describe('the writer thread', () => {
  it('writes the same lines as the inline writer, across batches and new models', async () => {
    const all = await entries();
    const dirs = { thread: temp(), inline: temp() };
    for (const [mode, dir] of Object.entries(dirs)) {
      const log = createDecisionLog({ dir, includeQuery: true, thread: mode === 'thread' });
      for (const [i, entry] of all.entries()) {
        log.record(entry);
        if (i === 5) await log.flush(); // a second batch, with labels and a policy the first did not have
      }
      await log.close();
      expect(log.stats()).toMatchObject({ written: all.length, dropped: 0, queued: 0 });
    }
    const thread = linesOf(dirs.thread);
    expect(thread).toHaveLength(all.length + 2); // two policy lines
    expect(thread).toEqual(linesOf(dirs.inline));
    const { decisions } = await readDecisionLog(dirs.thread);
    expect(decisions.map((d) => d.requestId)).toEqual(all.map((e) => e.requestId));
  });

  it('keeps the window from the lines the thread wrote', async () => {
    const all = await entries();
    const log = createDecisionLog({ dir: temp(), window: 5, thread: true });
    for (const entry of all) log.record(entry);
    await log.flush();
    const { decisions, policies } = log.window();
    expect(decisions.map((d) => d.requestId)).toEqual(all.slice(-5).map((e) => e.requestId));
    for (const d of decisions) expect(policies.get(d.policyHash)?.kind).toBe('policy');
    await log.close();
  });

  for (const [how, start] of [
    [
      'cannot start',
      () => {
        throw new Error('no threads here');
      },
    ],
    ['dies before answering', () => new Worker('process.exit(3)', { eval: true })],
  ] as const) {
    it(`that ${how} hands its work to the log's own thread: nothing is lost`, async () => {
      const all = await entries();
      const dir = temp();
      const counts = { written: 0, bytes: 0, dropped: 0 };
      let error: string | undefined;
      const host: WriterHost = {
        keepsLines: false,
        written: (n, bytes) => {
          counts.written += n;
          counts.bytes += bytes;
        },
        dropped: (_reason, n) => {
          counts.dropped += n;
        },
        failed: (e) => {
          error = e;
        },
        remember: () => undefined,
      };
      const writer = createThreadWriter(
        host,
        { includeQuery: false, includeText: false },
        { dir, maxFileBytes: 1 << 20, maxFiles: 4, retryMs: 10 },
        start,
      );
      const policyLine = { hash: 'p1', line: '{"kind":"policy","v":2,"policyHash":"p1"}' };
      for (const [i, entry] of all.entries()) {
        writer.add(entry, policyLine, new Date());
        if (i === 3) await writer.flush();
      }
      await writer.close();
      expect(error).toMatch(/writer thread: .*writing on the main thread/);
      expect(counts).toMatchObject({ written: all.length, dropped: 0 });
      const text = readdirSync(dir)
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join('');
      const { records, malformed } = parseDecisionLines(text);
      expect(malformed).toBe(0);
      expect(
        records.filter((r) => r.kind === 'decision').map((r) => (r.kind === 'decision' ? r.requestId : '')),
      ).toEqual(all.map((e) => e.requestId));
    });
  }
});

describe('the reader', () => {
  it('reads version 1 lines (sha256 passage hashes) beside version 2 ones', () => {
    const v1 =
      '{"kind":"policy","v":1,"policyHash":"a","model":"m","scorer":{"id":"s","signals":null,"decisions":null},"policy":{},"replayable":true}\n' +
      '{"kind":"decision","v":1,"requestId":"old","policyHash":"a","passages":[]}\n' +
      '{"kind":"decision","v":2,"requestId":"new","policyHash":"a","passages":[]}\n' +
      '{"kind":"decision","v":3,"requestId":"future","policyHash":"a","passages":[]}\n';
    const { records, malformed } = parseDecisionLines(v1);
    expect(records.map((r) => (r.kind === 'decision' ? r.requestId : r.kind))).toEqual(['policy', 'old', 'new']);
    expect(malformed).toBe(1);
  });
});
