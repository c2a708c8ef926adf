/**
 * Fault scenarios, each run in its own child process by test/faults/faults.test.ts (short form)
 * and scripts/fault-suite.ts (long form): the parent asserts the exit code and signal (the
 * process must survive, and exit by itself once the work is done), this side asserts that nothing
 * was mixed up and that every error is typed. A scenario prints one line
 * `FAULT-RESULT {"ok":true,...}` and lets the process end on its own (an open handle or a thread
 * left running would show up as a hang, a thread terminated mid-run as exit code 134).
 *
 * Run one by hand: npx tsx test/faults/scenarios.ts <scenario> <seed>
 * (env FAULT_MODELS: folder with tiny/ and tinybert-l2/ model dirs, made on demand when missing;
 * FAULT_SHORT=1: fewer rounds per scenario, for CI).
 */
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { encodeEntry } from '../../src/cache/codec.js';
import { createScoreCache, type ScoreCache } from '../../src/cache/score-cache.js';
import { DisposedError, InvalidArgumentError, ModelFormatError, RelevanceGateError } from '../../src/errors.js';
import {
  createCrossEncoder,
  createCrossEncoderWithFaults,
  type CrossEncoder,
} from '../../src/tiers/cross-encoder/cross-encoder.js';
import { InferenceError, InputLimitError, ModelContractError } from '../../src/tiers/cross-encoder/errors.js';
import { writeCrossEncoderModelDir } from '../../src/tooling/model-gen/index.js';
import { createCrossEncoderScorer } from '../../src/tiers/cross-encoder/scorer.js';
import { createGate } from '../../src/gate/gate.js';
import { createRouter } from '../../src/router/router.js';
import { crossEncoderTier, fastPathTier } from '../../src/router/tiers.js';
import { loadFastPathScorer } from '../../src/tiers/fast-path/fast-path-scorer.js';
import type { DetailedPairScore, Passage, Scorer, ScorerPairResult } from '../../src/types.js';
import { mulberry32 } from '../../src/util/seeded-random.js';
import { freePort, RedisServer, redisServerAvailable } from '../cache/redis-server.js';
import { loadCollection } from '../cross-encoder/data.js';
import { check, type Report, ScenarioFailure, SHORT } from './check.js';
import {
  clusterWorkerKill,
  serveApiKeyOutOfSight,
  serveForgedRedisEntries,
  serveHttpRefusals,
} from './server-scenarios.js';

export const SCENARIOS = [
  'ce-load-failure',
  'ce-close-under-load',
  'ce-worker-death',
  'ce-huge-passages',
  'ce-mutated-models',
  'fuzz-public-api',
  'redis-faults',
  'deadline-huge-and-stuck',
  'cluster-worker-kill',
  'serve-api-key-out-of-sight',
  'serve-http-refusals',
  'serve-forged-redis-entries',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Every rejection must be one of `types`; returns the counts by error name. */
function expectTyped(
  settled: ReadonlyArray<PromiseSettledResult<unknown>>,
  types: ReadonlyArray<abstract new (...args: never[]) => Error>,
  where: string,
): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of settled) {
    if (s.status === 'fulfilled') {
      counts.ok = (counts.ok ?? 0) + 1;
      continue;
    }
    const err = s.reason as Error;
    check(
      types.some((t) => err instanceof t),
      `${where}: untyped or unexpected rejection ${err?.name}: ${err?.message}`,
    );
    counts[err.name] = (counts[err.name] ?? 0) + 1;
  }
  return counts;
}

async function models(): Promise<{ tiny: string; big: string }> {
  const root = process.env.FAULT_MODELS ?? join(tmpdir(), 'rg-fault-models');
  const tiny = join(root, 'tiny');
  const big = join(root, 'tinybert-l2');
  if (!existsSync(join(tiny, 'onnx', 'model.onnx'))) await writeCrossEncoderModelDir(tiny, 'tiny', { seed: 42 });
  if (!existsSync(join(big, 'onnx', 'model.onnx'))) await writeCrossEncoderModelDir(big, 'tinybert-l2', { seed: 42 });
  return { tiny, big };
}

function passagesOf(count: number, offset: number): string[] {
  const docs = [...loadCollection('cranfield').docs.values()];
  return Array.from({ length: count }, (_, i) => docs[(offset + i * 7) % docs.length]);
}

function requests(n: number, k: number, seed: number): Array<{ query: string; passages: string[] }> {
  const queries = [...loadCollection('cranfield').queries.values()];
  const rand = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => ({
    query: queries[Math.floor(rand() * queries.length)],
    passages: passagesOf(k, i * 13 + Math.floor(rand() * 1000)),
  }));
}

/** Scores must equal a clean encoder's (1e-4, batch composition differs): nothing mixed up. */
function sameScores(got: Float32Array, want: Float32Array, where: string): void {
  check(got.length === want.length, `${where}: ${got.length} scores for ${want.length} passages`);
  for (let i = 0; i < got.length; i++) {
    check(Math.abs(got[i] - want[i]) < 1e-4, `${where}: pair ${i} scored ${got[i]}, expected ${want[i]}`);
  }
}

async function reference(
  dir: string,
  reqs: ReadonlyArray<{ query: string; passages: string[] }>,
  maxLength: number,
): Promise<Float32Array[]> {
  const ce = await createCrossEncoder({ modelDir: dir, workers: 1, maxLength, maxPendingPairs: 100_000 });
  try {
    const out: Float32Array[] = [];
    for (const r of reqs) out.push((await ce.score(r.query, r.passages)).logits);
    return out;
  } finally {
    await ce.close();
  }
}

// ---------------------------------------------------------------------------------------------

/** (a) a load that fails with several workers: one worker fails while the others still probe. */
async function ceLoadFailure(seed: number): Promise<Report> {
  const { tiny } = await models();
  const rand = mulberry32(seed);
  const report: Report = {};
  // Injected: worker i fails after its probe, at a random moment, while the others are loading.
  for (let round = 0; round < (SHORT ? 1 : 3); round++) {
    const workers = 2 + Math.floor(rand() * 3);
    const index = Math.floor(rand() * workers);
    const err = await createCrossEncoderWithFaults(
      { modelDir: tiny, workers },
      { failLoadOfWorker: { index, delayMs: Math.floor(rand() * 40) } },
    ).catch((e: unknown) => e);
    check(err instanceof ModelContractError, `injected load failure gave ${String(err)}`);
  }
  const scratch = await mkdtemp(join(tmpdir(), 'rg-fault-load-'));
  try {
    // A corrupt ONNX file → ModelFormatError (documented), with 3 workers.
    const corrupt = join(scratch, 'corrupt');
    await cp(tiny, corrupt, { recursive: true });
    const bytes = await readFile(join(corrupt, 'onnx', 'model.onnx'));
    await writeFile(join(corrupt, 'onnx', 'model.onnx'), bytes.subarray(0, Math.floor(bytes.length / 3)));
    const e1 = await createCrossEncoder({ modelDir: corrupt, workers: 3 }).catch((e: unknown) => e);
    check(e1 instanceof ModelFormatError, `truncated ONNX gave ${String(e1)}`);
    // A directory in place of onnx/model.onnx → InvalidArgumentError, not a bare EISDIR.
    const dirModel = join(scratch, 'dir-model');
    await cp(tiny, dirModel, { recursive: true });
    await rm(join(dirModel, 'onnx', 'model.onnx'));
    await mkdir(join(dirModel, 'onnx', 'model.onnx'));
    const e2 = await createCrossEncoder({ modelDir: dirModel, workers: 2 }).catch((e: unknown) => e);
    check(e2 instanceof InvalidArgumentError, `directory as model gave ${String(e2)}`);
    // A tokenizer whose ids exceed the model's embedding table → ModelContractError at load.
    const vocab = join(scratch, 'vocab');
    await cp(tiny, vocab, { recursive: true });
    const tok = JSON.parse(await readFile(join(vocab, 'tokenizer.json'), 'utf8')) as {
      added_tokens: Array<Record<string, unknown>>;
    };
    tok.added_tokens.push({
      id: 40_000,
      content: '[BEYOND]',
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    });
    await writeFile(join(vocab, 'tokenizer.json'), JSON.stringify(tok));
    const cfgPath = join(vocab, 'config.json');
    const cfg = JSON.parse(await readFile(cfgPath, 'utf8')) as Record<string, unknown>;
    delete cfg.vocab_size; // only the probe can catch it now
    await writeFile(cfgPath, JSON.stringify(cfg));
    const e3 = await createCrossEncoder({ modelDir: vocab, workers: 2 }).catch((e: unknown) => e);
    check(e3 instanceof ModelContractError, `tokenizer beyond the vocabulary gave ${String(e3)}`);
    report.cases = 6;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return report;
}

/** (b) close() while batches run: right after a burst, and 20–60 ms after a single score(). */
async function ceCloseUnderLoad(seed: number): Promise<Report> {
  const { big } = await models();
  const rand = mulberry32(seed);
  const reqs = requests(SHORT ? 20 : 40, SHORT ? 8 : 16, seed);
  const want = await reference(big, reqs, 256);
  const report: Report = {};
  {
    const ce = await createCrossEncoder({ modelDir: big, workers: 2, maxLength: 256, maxPendingPairs: 100_000 });
    const pending = Promise.allSettled(reqs.map((r) => ce.score(r.query, r.passages)));
    await new Promise((r) => setTimeout(r, Math.floor(rand() * 300)));
    const t0 = performance.now();
    await ce.close();
    report.closeMs = Math.round(performance.now() - t0);
    const settled = await pending;
    report.burst = expectTyped(settled, [DisposedError], 'burst + close');
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') sameScores(s.value.logits, want[i], `burst request ${i}`);
    });
    check((await ce.score('q', ['p']).catch((e: unknown) => e)) instanceof DisposedError, 'score after close');
  }
  {
    // A close whose timeout passes while a run is still in flight: the worker must be left to
    // finish (terminating it would abort the process), and the process must still exit by itself.
    const ce = await createCrossEncoder({ modelDir: big, workers: 1, maxLength: 512, closeTimeoutMs: 1 });
    const long = 'aerodynamic heating of a slender body at hypersonic speed '.repeat(60);
    const one = Promise.allSettled([
      ce.score(
        'what is the heat transfer',
        Array.from({ length: 32 }, (_, i) => `${i} ${long}`),
      ),
    ]);
    await new Promise((r) => setTimeout(r, 20 + Math.floor(rand() * 40)));
    await ce.close();
    report.shortTimeout = expectTyped(await one, [DisposedError], 'close with 1 ms timeout');
    report.stillRunningAfterClose = ce.stats().workers.readyWorkers + ce.stats().workers.loadingWorkers;
  }
  return report;
}

/** (c) a worker thread dying (process.exit / uncaught error in the thread) with a batch assigned. */
async function ceWorkerDeath(seed: number): Promise<Report> {
  const { tiny } = await models();
  const reqs = requests(SHORT ? 16 : 30, 8, seed);
  const want = await reference(tiny, reqs, 512);
  const report: Report = {};
  for (const fault of ['exit', 'throw'] as const) {
    const ce = await createCrossEncoderWithFaults(
      { modelDir: tiny, workers: 2, maxBatchTokens: 1024 },
      fault === 'exit' ? { exitOnInfer: 2 + (seed % 3) } : { throwOnInfer: 2 + (seed % 3) },
    );
    try {
      const settled = await Promise.allSettled(reqs.map((r) => ce.score(r.query, r.passages)));
      const counts = expectTyped(settled, [InferenceError], `worker ${fault}`);
      settled.forEach((s, i) => {
        if (s.status === 'fulfilled') sameScores(s.value.logits, want[i], `${fault}: request ${i}`);
      });
      check((counts.InferenceError ?? 0) > 0, `${fault}: no request met the dying worker`);
      check((counts.ok ?? 0) > 0, `${fault}: every request failed (only the dying batch's may)`);
      // The dead workers are replaced (replacements carry no faults): scoring works again.
      const deadline = Date.now() + 20_000;
      while (ce.stats().workers.readyWorkers < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const stats = ce.stats().workers;
      check(
        stats.crashes > 0 && stats.replacements > 0,
        `${fault}: crashes ${stats.crashes}, replacements ${stats.replacements}`,
      );
      sameScores((await ce.score(reqs[0].query, reqs[0].passages)).logits, want[0], `${fault}: after replacement`);
      report[fault] = { ...counts, crashes: stats.crashes, replacements: stats.replacements };
    } finally {
      await ce.close();
    }
  }
  return report;
}

/** Huge and adversarial passages: typed limits, bounded cost, no stall for normal callers. */
async function ceHugePassages(seed: number): Promise<Report> {
  const { tiny } = await models();
  const ce = await createCrossEncoder({ modelDir: tiny, workers: 2 });
  const report: Report = {};
  try {
    const eight = 'x'.repeat(8 * 1024 * 1024);
    const e = await ce.score('q', [eight], { deadline: Date.now() + 100 }).catch((x: unknown) => x);
    check(e instanceof InputLimitError && e.code === 'RG_ERR_INPUT_LIMIT', `8 MB passage gave ${String(e)}`);
    const limit = 200_000;
    const adversarial = [
      'a'.repeat(limit), // one giant word
      `${' '.repeat(limit - 20)} final words here`, // nothing but spaces before the words
      '😀'.repeat(limit / 2), // surrogate pairs
      '東京大学'.repeat(limit / 4), // CJK, no spaces
      'e\u0301'.repeat(limit / 2), // combining marks
      'word '.repeat(limit / 5),
    ];
    const t0 = performance.now();
    const huge = [ce.score('query one', adversarial), ce.score('query two', adversarial.slice(seed % 3))];
    // Normal callers right behind the huge ones must still be served.
    const normal = requests(3, 8, seed).map((r) => ce.score(r.query, r.passages, { deadline: Date.now() + 5000 }));
    const normalSettled = await Promise.allSettled(normal);
    report.normalMs = Math.round(performance.now() - t0);
    const normalCounts = expectTyped(normalSettled, [], 'normal calls behind huge passages');
    check(normalCounts.ok === 3, 'a normal call failed behind huge passages');
    const hugeSettled = await Promise.allSettled(huge);
    expectTyped(hugeSettled, [], 'adversarial passages at the limit');
    report.hugeMs = Math.round(performance.now() - t0);
    check(performance.now() - t0 < 30_000, `adversarial requests took ${report.hugeMs} ms`);
  } finally {
    const t1 = performance.now();
    await ce.close();
    report.closeMs = Math.round(performance.now() - t1);
  }
  return report;
}

/** Mutated model files: the load fails typed, or the model loads and scores (or fails typed). */
async function ceMutatedModels(seed: number): Promise<Report> {
  const { tiny } = await models();
  const rand = mulberry32(seed);
  const scratch = await mkdtemp(join(tmpdir(), 'rg-fault-mut-'));
  const outcomes: Record<string, number> = {};
  try {
    const onnx = await readFile(join(tiny, 'onnx', 'model.onnx'));
    const tokenizer = await readFile(join(tiny, 'tokenizer.json'));
    for (let m = 0; m < (SHORT ? 2 : 4); m++) {
      const dir = join(scratch, `m${m}`);
      await mkdir(join(dir, 'onnx'), { recursive: true });
      await copyFile(join(tiny, 'config.json'), join(dir, 'config.json'));
      const kind = Math.floor(rand() * 5);
      let model = Buffer.from(onnx);
      let tok = Buffer.from(tokenizer);
      if (kind === 0) model = model.subarray(0, Math.floor(rand() * model.length));
      else if (kind === 1)
        for (let i = 0; i < 64; i++) model[Math.floor(rand() * model.length)] ^= 1 << Math.floor(rand() * 8);
      else if (kind === 2) model.fill(0xff, Math.floor(rand() * 200), Math.floor(rand() * 200) + 64);
      else if (kind === 3) tok = tok.subarray(0, Math.floor(rand() * tok.length));
      else for (let i = 0; i < 16; i++) tok[Math.floor(rand() * tok.length)] = Math.floor(rand() * 256);
      await writeFile(join(dir, 'onnx', 'model.onnx'), model);
      await writeFile(join(dir, 'tokenizer.json'), tok);
      let ce: CrossEncoder | undefined;
      try {
        ce = await createCrossEncoder({ modelDir: dir, workers: 2 });
        const r = await ce.score('a query', ['a passage', 'another passage']).catch((x: unknown) => x);
        check(!(r instanceof Error) || r instanceof RelevanceGateError, `mutated model scoring threw ${String(r)}`);
        outcomes.loaded = (outcomes.loaded ?? 0) + 1;
      } catch (err) {
        check(err instanceof RelevanceGateError, `mutation ${kind}: untyped load error ${String(err)}`);
        outcomes[(err as Error).name] = (outcomes[(err as Error).name] ?? 0) + 1;
      } finally {
        await ce?.close();
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return { outcomes };
}

const JUNK: readonly unknown[] = [
  undefined,
  null,
  0,
  -1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  1e300,
  '',
  'x',
  true,
  [],
  [null],
  {},
  { id: 1 },
  { text: 5 },
  { id: 'a', text: 'b', title: 7 },
  () => 1,
  Symbol('s'),
  10n,
  new Float32Array(2),
  new AbortController().signal,
];

/** Fuzzed public-API inputs: every refusal is a RelevanceGateError, never a TypeError or crash. */
async function fuzzPublicApi(seed: number): Promise<Report> {
  const { tiny } = await models();
  const rand = mulberry32(seed);
  const pick = (): unknown => JUNK[Math.floor(rand() * JUNK.length)];
  let calls = 0;
  let refused = 0;
  const attempt = async (what: string, f: () => unknown): Promise<void> => {
    calls++;
    try {
      const value = await f();
      // Whatever an accepted call created must not outlive the scenario.
      if (typeof (value as { close?: unknown } | undefined)?.close === 'function')
        await (value as CrossEncoder).close();
    } catch (err) {
      check(err instanceof RelevanceGateError, `${what}: untyped ${(err as Error)?.name}: ${(err as Error)?.message}`);
      refused++;
    }
  };
  const ce = await createCrossEncoder({ modelDir: tiny, workers: 1 });
  const scorer = createCrossEncoderScorer(ce);
  const cache = createScoreCache({ maxBytes: 1 << 20 });
  try {
    for (let i = 0; i < (SHORT ? 60 : 200); i++) {
      const a = pick();
      const b = pick();
      const c = pick();
      await attempt('ce.score', () => ce.score(a as string, b as string[], c as never));
      await attempt('ce.score passages', () => ce.score('q', [a, b] as string[], c as never));
      await attempt('scorer.score', () => scorer.score(a as string, [b, c] as Passage[]));
      await attempt('createScoreCache', () => createScoreCache(a as never));
      await attempt('createScoreCache opts', () =>
        createScoreCache({ maxBytes: 1 << 20, ttlMs: a, requiredSignals: b, maxClockSkewMs: c } as never),
      );
      await attempt('cache.resolve', () =>
        cache.resolve({ scorerId: a, query: b, passages: [c] } as never, async (m) => m.map(() => null)),
      );
      await attempt('cache.resolve scoreMisses', () =>
        cache.resolve(
          { scorerId: 's', query: 'q', passages: [{ id: 'p', text: 't' }] },
          (() => a) as never,
          b as never,
        ),
      );
      await attempt('cache.lookup', () => cache.lookup({ scorerId: 's', query: a, passages: b } as never));
      await attempt('createCrossEncoder', () =>
        createCrossEncoder({ modelDir: tiny, workers: a, maxLength: b } as never),
      );
    }
  } finally {
    await ce.close();
    await cache.close();
  }
  return { calls, refused };
}

/** Redis hang (SIGSTOP), kill, junk values and a full server: L2 stays best effort and honest. */
async function redisFaults(seed: number): Promise<Report> {
  if (!redisServerAvailable()) return { skipped: 'redis-server not installed' };
  const server = new RedisServer(await freePort());
  await server.start();
  const rand = mulberry32(seed);
  const report: Report = {};
  const raw = new Redis(server.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  raw.on('error', () => undefined);
  const passages: Passage[] = Array.from({ length: 12 }, (_, i) => ({ id: `p${i}`, text: `passage ${i} ${seed}` }));
  let scored = 0;
  const scoreMisses = async (idx: readonly number[]): Promise<ScorerPairResult[]> => {
    scored += idx.length;
    return idx.map((i) => ({ probabilities: { relevant: (i + 1) / 20 }, raw: { relevant: i }, tier: 'test' }));
  };
  const expectRight = (results: readonly ScorerPairResult[], where: string): void => {
    results.forEach((r, i) => {
      const p = (r as { probabilities?: Record<string, number> } | null)?.probabilities?.relevant;
      check(p === (i + 1) / 20, `${where}: pair ${i} got ${String(p)}`);
    });
  };
  // Generous read timeout (the machine may be loaded) except where the timeout is what is tested.
  const make = (timeoutMs = 2000): ScoreCache =>
    createScoreCache({
      maxBytes: 1 << 20,
      ttlMs: 24 * 3600_000,
      redis: { url: server.url, timeoutMs, cooldownMs: 200, connectTimeoutMs: 2000 },
    });
  try {
    // Junk: values that decode but are invalid must be dropped, counted, rescored, never promoted.
    const writer = make();
    await writer.ready();
    const request = { scorerId: 'fault-scorer', query: `q${seed}`, passages };
    expectRight((await writer.resolve(request, scoreMisses)).results, 'first call');
    await writer.flush();
    const keys = (await raw.keys('rg:score:*')).sort();
    check(keys.length === passages.length, `expected ${passages.length} keys in Redis, found ${keys.length}`);
    const now = Date.now();
    const junk: Buffer[] = [
      encodeEntry({ result: { probabilities: { relevant: 5 } } as never, scoredAt: now }),
      encodeEntry({ result: { probabilities: { relevant: -0.5 } } as never, scoredAt: now }),
      encodeEntry({ result: { probabilities: { injection: 0.1 } }, scoredAt: now }),
      encodeEntry({ result: { probabilities: { relevant: 0.5 } }, scoredAt: 1e300 }),
      encodeEntry({ result: { probabilities: { relevant: 0.5 } }, scoredAt: now + 3600_000 }),
      Buffer.from('not msgpack at all'),
      Buffer.alloc(0),
    ];
    for (let i = 0; i < keys.length; i++) await raw.set(keys[i], junk[Math.floor(rand() * junk.length)]);
    const reader = make();
    await reader.ready();
    const before = scored;
    expectRight((await reader.resolve(request, scoreMisses)).results, 'junk in Redis');
    const stats = reader.stats();
    check(scored - before === passages.length, `junk: ${scored - before} of ${passages.length} pairs rescored`);
    check(
      stats.l2Invalid === passages.length && stats.l2Hits === 0,
      `junk: l2Invalid ${stats.l2Invalid}, l2Hits ${stats.l2Hits}`,
    );
    expectRight((await reader.resolve(request, scoreMisses)).results, 'after junk (L1)');
    check(scored - before === passages.length, 'junk: pairs rescored twice');
    report.junk = { invalid: stats.l2Invalid };
    await Promise.all([writer.close(), reader.close()]);

    // Hang: every call stays bounded by the L2 timeout, answers right, then the breaker skips Redis.
    const hang = make(30);
    await hang.ready();
    server.pause();
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) {
      hang.clear();
      expectRight((await hang.resolve({ ...request, query: `hang${i}` }, scoreMisses)).results, 'hang');
    }
    const hangMs = performance.now() - t0;
    server.resume();
    // Each call is bounded by the 30 ms read timeout; after 3 failures the breaker skips Redis.
    check(hangMs < 3000, `5 calls against a hung Redis took ${Math.round(hangMs)} ms`);
    report.hang = { ms: Math.round(hangMs), timeouts: hang.stats().l2Timeouts };
    await hang.close();

    // Full: writes fail with OOM; calls still answer right; failures are counted.
    // maxmemory 1 byte with noeviction: every write is refused with OOM, reads still work.
    await raw.config('SET', 'maxmemory-policy', 'noeviction');
    await raw.config('SET', 'maxmemory', '1');
    const full = make();
    await full.ready();
    for (let i = 0; i < 5; i++)
      expectRight((await full.resolve({ ...request, query: `full${i}` }, scoreMisses)).results, 'full Redis');
    await full.flush();
    report.full = { l2Errors: full.stats().l2Errors };
    check(full.stats().l2Errors > 0, 'full Redis: no write error counted');
    await full.close();

    // Kill: the server dies; calls answer right without it.
    const killed = make();
    await killed.ready();
    await server.kill();
    for (let i = 0; i < 5; i++)
      expectRight((await killed.resolve({ ...request, query: `kill${i}` }, scoreMisses)).results, 'killed Redis');
    report.kill = { l2Errors: killed.stats().l2Errors, connectionErrors: killed.stats().l2ConnectionErrors };
    await killed.close();
  } finally {
    raw.disconnect();
    await server.kill();
  }
  return report;
}

/**
 * The deadline under abnormal input and a stuck tier: the gate over the fast path and over the
 * cascade router (fast path → a real pool, and fast path → a tier that never answers), with huge
 * passages mixed into ordinary ones and tight budgets, many calls at once. Every call must
 * resolve (no hang, no rejection), every pair is either unscored for `timeout` or carries exactly
 * the score a clean fast path (or the pool) gives it: nothing cut short, nothing mixed up.
 */
async function deadlineHugeAndStuck(seed: number): Promise<Report> {
  const { tiny } = await models();
  const rand = mulberry32(seed);
  const fastPath = await loadFastPathScorer();
  const clean = await loadFastPathScorer();
  const ce = await createCrossEncoder({ modelDir: tiny, workers: 2 });
  const report: Report = {};
  const stuck: Scorer = { id: 'stuck-ce', signals: ['relevant'], score: () => new Promise<never>(() => undefined) };
  const routers = {
    pool: createRouter({ tiers: [fastPathTier(fastPath), crossEncoderTier(ce)], routing: { mode: 'cascade' } }),
    stuck: createRouter({
      tiers: [fastPathTier(fastPath), { name: 'cross-encoder', scorer: stuck, quality: 2, estimateMs: () => 1 }],
      routing: { mode: 'cascade' },
    }),
  };
  const gates = {
    fastPath: createGate({ scorer: fastPath }),
    pool: createGate({ scorer: routers.pool }),
    stuck: createGate({ scorer: routers.stuck }),
  };
  try {
    const mb = 'the boundary layer on a swept wing becomes turbulent near the leading edge. '.repeat(14_000);
    const calls = SHORT ? 6 : 20;
    // Inputs are built first (flat strings, as JSON.parse makes them), so that nothing but the
    // calls themselves runs on the event loop while they are in flight.
    const inputs = requests(calls, 12, seed).map((base, c) => ({
      query: base.query,
      gate: (['fastPath', 'pool', 'stuck'] as const)[c % 3],
      budget: [5, 20, 60][Math.floor(rand() * 3)],
      passages: base.passages.map(
        (text, i): Passage => ({
          id: `c${c}p${i}`,
          // A few huge passages (1 MB, distinct per call) among ordinary ones.
          text: rand() < 0.4 ? (JSON.parse(JSON.stringify(`${mb} ${c} ${i}`)) as string) : text,
        }),
      ),
    }));
    const pending = inputs.map(({ query, gate, budget, passages }) => {
      const t0 = performance.now();
      return gates[gate]
        .filter(query, passages, { budgetMs: budget })
        .then((result) => ({ gate, passages, budget, ms: performance.now() - t0, result }));
    });
    const settled = await Promise.allSettled(pending);
    expectTyped(settled, [], 'gate calls with huge passages and tight budgets');
    let unscored = 0;
    let scored = 0;
    let worstOverMs = 0;
    for (const s of settled) {
      const { gate, passages, result, ms, budget } = (s as PromiseFulfilledResult<Awaited<(typeof pending)[number]>>)
        .value;
      worstOverMs = Math.max(worstOverMs, ms - budget);
      check(ms < budget + 5000, `${gate}: a ${budget} ms call took ${Math.round(ms)} ms`);
      // The fast path past the gate's deadline: `timeout`. Through the router, a pair it had no
      // score for at its answer time (a little before the deadline) comes back null: `scorer-null`.
      const allowed = gate === 'fastPath' ? ['timeout'] : ['timeout', 'scorer-null'];
      const reasons = Object.keys(result.stats.unscoredByReason);
      check(
        reasons.every((r) => allowed.includes(r)),
        `${gate}: unscored for ${reasons.join(', ')}`,
      );
      const items = [...result.included, ...result.conflicting, ...result.excluded];
      check(items.length === passages.length, `${gate}: ${items.length} items for ${passages.length} passages`);
      const query = result.query;
      const truth = await clean.score(query, passages);
      for (const item of items) {
        check(item.passage === passages[item.rank], `${gate}: item of rank ${item.rank} is another passage`);
        if (item.signals === null || item.signals === undefined) {
          unscored++;
          continue;
        }
        scored++;
        const tier = (item as { tier?: string }).tier;
        if (tier === 'fast-path' || tier === undefined || gate === 'fastPath') {
          const want = (truth[item.rank] as DetailedPairScore).probabilities.relevant;
          check(
            item.signals.relevant === want,
            `${gate}: pair ${item.rank} scored ${item.signals.relevant}, a clean fast path gives ${want}`,
          );
        }
      }
    }
    Object.assign(report, { calls, scored, unscored, worstOverBudgetMs: Math.round(worstOverMs) });
  } finally {
    routers.pool.close();
    routers.stuck.close();
    await ce.close();
    fastPath.model.dispose();
    clean.model.dispose();
  }
  return report;
}

const RUNNERS: Record<ScenarioName, (seed: number) => Promise<Report>> = {
  'ce-load-failure': ceLoadFailure,
  'ce-close-under-load': ceCloseUnderLoad,
  'ce-worker-death': ceWorkerDeath,
  'ce-huge-passages': ceHugePassages,
  'ce-mutated-models': ceMutatedModels,
  'fuzz-public-api': fuzzPublicApi,
  'redis-faults': redisFaults,
  'deadline-huge-and-stuck': deadlineHugeAndStuck,
  'cluster-worker-kill': clusterWorkerKill,
  'serve-api-key-out-of-sight': serveApiKeyOutOfSight,
  'serve-http-refusals': serveHttpRefusals,
  'serve-forged-redis-entries': serveForgedRedisEntries,
};

async function main(): Promise<void> {
  const [name, seedArg] = process.argv.slice(2);
  const runner = RUNNERS[name as ScenarioName];
  if (runner === undefined) {
    console.log(`FAULT-RESULT ${JSON.stringify({ ok: false, error: `unknown scenario ${name}` })}`);
    process.exitCode = 2;
    return;
  }
  const seed = Number(seedArg ?? 1);
  const started = performance.now();
  try {
    const report = await runner(seed);
    console.log(`FAULT-RESULT ${JSON.stringify({ ok: true, ms: Math.round(performance.now() - started), ...report })}`);
    // Diagnosis of a hang: if something keeps the process alive, say what (this timer itself
    // does not keep it alive).
    setTimeout(() => {
      console.error(
        `still alive 15 s after the verdict; active resources: ${process.getActiveResourcesInfo().join(', ')}`,
      );
    }, 15_000).unref();
  } catch (err) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    const report = err instanceof ScenarioFailure ? err.report : undefined;
    console.log(`FAULT-RESULT ${JSON.stringify({ ok: false, error: message, ...report })}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && /scenarios\.ts$/.test(process.argv[1])) await main();
