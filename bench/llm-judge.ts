/**
 * LLM-judge bench against the chat-completions protocol stand-in (test/llm-judge/stand-in-server.ts,
 * a local HTTP server on 127.0.0.1, not a model) with a fixed simulated judge latency. The stand-in
 * runs in its own process (bench/llm-judge-stand-in.ts), so its measurements are an outside view.
 *
 * 1. Load: for each offered rate, a fresh judge behind createGate runs an open-loop phase
 *    (src/tooling/loadgen/open-loop.ts: Poisson arrivals at scheduled times, latency from the scheduled
 *    time) with a per-request budget. Offered rates go above the pool's capacity
 *    (concurrency / latency requests per second); the table shows that the pool bound holds
 *    (max in flight at the server ≤ concurrency) and the deadline is kept (p99 ≤ budget), with the
 *    work the pool cannot fit failing closed instead of queueing without bound.
 * 2. Modes: requests and tokens per pair for each way of sharing calls (one question per request,
 *    all questions per request, several candidates per request), default four questions.
 *
 * Workload: SciFact queries with their BM25 top-k abstracts (src/tooling/loadgen/workload.ts).
 *
 *   npx tsx --expose-gc bench/llm-judge.ts [--qps 20,40,60,80] [--duration 8] [--warmup 2] [--budget 250]
 *                              [--latency 50] [--concurrency 8] [--k 4] [--margin 25] [--prewarm 3] [--json out.json]
 *
 * --margin: the judge answers this long before each deadline (returnMarginMs), so its answer
 * reaches the caller in time even when timers fire late on a busy host (default 25 ms here; the
 * event-loop delay column shows the lag the run saw).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCollection } from '../src/tooling/eval/collection.js';
import { createGate } from '../src/index.js';
import { runOpenLoopPhase } from '../src/tooling/loadgen/open-loop.js';
import { buildWorkload } from '../src/tooling/loadgen/workload.js';
import { createLlmJudge, DEFAULT_QUESTIONS, type JudgeQuestion } from '../src/tiers/llm-judge/index.js';
import { parsePrompt } from '../test/llm-judge/helpers.js';
import type { StandInRequestBody } from '../test/llm-judge/stand-in-server.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const QPS = arg('qps', '20,40,60,80').split(',').map(Number);
const DURATION = Number(arg('duration', '8'));
const WARMUP = Number(arg('warmup', '2'));
const BUDGET = Number(arg('budget', '250'));
const LATENCY = Number(arg('latency', '50'));
const CONCURRENCY = Number(arg('concurrency', '8'));
const K = Number(arg('k', '4'));
/** The judge answers this long before the deadline (absorbs event-loop lag on a busy machine). */
const MARGIN = Number(arg('margin', '25'));
/** An unreported phase first: JIT warm-up and the major GC after building the workload. */
const PREWARM = Number(arg('prewarm', '3'));
const JSON_OUT = arg('json', '');
const COLLECTION = arg('collection', '/work/shared/data/scifact');

const ONE: JudgeQuestion[] = [{ name: 'relevant', instruction: DEFAULT_QUESTIONS[0].instruction }];

interface ServerStats {
  requests: number;
  maxInFlight: number;
  maxInFlightAnswered: number;
  cancelled: number;
  answered: number;
}

/** The stand-in process and a request/response helper over its IPC channel. */
const child: ChildProcess = fork(new URL('./llm-judge-stand-in.ts', import.meta.url).pathname, [String(LATENCY)], {
  execArgv: ['--import', 'tsx'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
function ask<T>(type: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: { type: string }): void => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      resolve(m as T);
    };
    child.on('message', onMessage);
    if (type !== 'ready') child.send({ type });
  });
}
const { baseURL } = await ask<{ baseURL: string }>('ready');
const server = {
  baseURL,
  reset: () => ask<unknown>('reset'),
  stats: () => ask<ServerStats>('stats'),
  bodies: async () => (await ask<{ bodies: StandInRequestBody[] }>('requests')).bodies,
};
const collection = loadCollection(COLLECTION);
const workload = buildWorkload(collection, { k: K, seed: 7, cacheDir: join(tmpdir(), 'relevance-gate-bench') });

const capacityRps = (CONCURRENCY * 1000) / LATENCY;
const capacityQps = capacityRps / workload.meanPassages;
console.log(
  `stand-in latency ${LATENCY} ms, pool ${CONCURRENCY} → capacity ${capacityRps.toFixed(0)} requests/s = ` +
    `${capacityQps.toFixed(1)} queries/s at ${workload.meanPassages.toFixed(2)} pairs/query (1 question); budget ${BUDGET} ms, judge answers ${MARGIN} ms before it`,
);

interface LoadRow {
  offeredQps: number;
  load: number;
  achievedQps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  pairsAnsweredPct: number;
  unscoredByReason: Record<string, number>;
  serverMaxInFlight: number;
  serverMaxInFlightAnswered: number;
  judgeMaxInFlight: number;
  requestsSent: number;
  skippedForTime: number;
  cancelledAtServer: number;
  eventLoopP99: number;
  cpuCores: number;
  scheduleLagP99: number;
  poolHeld: boolean;
  deadlineKept: boolean;
}

const rows: LoadRow[] = [];
for (const [point, qps] of [...(PREWARM > 0 ? [QPS[0]] : []), ...QPS].entries()) {
  const prewarm = PREWARM > 0 && point === 0;
  const judge = createLlmJudge({
    baseURL: server.baseURL,
    model: 'stand-in-judge',
    questions: ONE,
    concurrency: CONCURRENCY,
    answerCache: false,
    expectedLatencyMs: LATENCY,
    returnMarginMs: MARGIN,
  });
  const gate = createGate({ scorer: judge, policy: { threshold: 0.5 } });
  workload.restart();
  // With --expose-gc: start every phase with a clean heap, so a major GC of the previous phase's
  // garbage does not land in this one's measurements.
  (globalThis as { gc?: () => void }).gc?.();
  let unscoredByReason: Record<string, number> = {};
  const countingGate = {
    ...gate,
    scorer: gate.scorer,
    filter: (async (q, ps, o) => {
      const r = await gate.filter(q, ps, o);
      for (const [reason, n] of Object.entries(r.stats.unscoredByReason))
        unscoredByReason[reason] = (unscoredByReason[reason] ?? 0) + (n as number);
      return r;
    }) as typeof gate.filter,
  };
  const result = await runOpenLoopPhase({
    gate: countingGate,
    workload,
    qps,
    durationSec: prewarm ? PREWARM : DURATION,
    warmupSec: prewarm ? 0 : WARMUP,
    budgetMs: BUDGET,
    seed: 11,
    drainTimeoutMs: 10_000,
    onMeasureStart: () => {
      void server.reset();
      judge.resetStats();
      unscoredByReason = {};
    },
  });
  const s = judge.stats();
  const st = await server.stats();
  const answered = result.pairsByTier['llm-judge'] ?? 0;
  const row: LoadRow = {
    offeredQps: qps,
    load: qps / capacityQps,
    achievedQps: result.achievedQps,
    p50: result.latencyMs.p50,
    p90: result.latencyMs.p90,
    p99: result.latencyMs.p99,
    max: result.latencyMs.max,
    pairsAnsweredPct: result.pairs === 0 ? 0 : (100 * answered) / result.pairs,
    unscoredByReason,
    serverMaxInFlight: st.maxInFlight,
    serverMaxInFlightAnswered: st.maxInFlightAnswered,
    judgeMaxInFlight: s.maxInFlight,
    requestsSent: s.attempts,
    skippedForTime: s.skippedForTime,
    cancelledAtServer: st.cancelled,
    eventLoopP99: result.eventLoopDelayMs.p99,
    cpuCores: result.cpuCores,
    scheduleLagP99: result.scheduleLagMs.p99,
    poolHeld: st.maxInFlightAnswered <= CONCURRENCY && s.maxInFlight <= CONCURRENCY,
    deadlineKept: result.latencyMs.p99 <= BUDGET,
  };
  if (prewarm) continue;
  rows.push(row);
  console.log(JSON.stringify(row));
}

console.log(
  '\n| offered q/s | load | achieved q/s | p50 ms | p90 ms | p99 ms | max ms | pairs answered | fail-closed pairs | in flight at server: max answered / max incl. cancelled | judge max in flight | requests sent | refused (no time) | cancelled in flight | event-loop p99 ms | pool ≤ bound | p99 ≤ budget |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const failed = Object.entries(r.unscoredByReason)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  console.log(
    `| ${r.offeredQps} | ${r.load.toFixed(2)}× | ${r.achievedQps.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p90.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ${r.pairsAnsweredPct.toFixed(1)}% | ${failed || '0'} | ${r.serverMaxInFlightAnswered} / ${r.serverMaxInFlight} | ${r.judgeMaxInFlight} | ${r.requestsSent} | ${r.skippedForTime} | ${r.cancelledAtServer} | ${r.eventLoopP99.toFixed(1)} | ${r.poolHeld ? 'yes' : 'NO'} | ${r.deadlineKept ? 'yes' : 'NO'} |`,
  );
}

// 2. Requests and tokens per pair for each mode (default four questions, 12 queries).
let bpe: ((text: string) => Promise<number>) | undefined;
try {
  const { Tokenizer } = await import('tokenizers');
  const tok = await Tokenizer.fromFile('/work/shared/tokenizers/modernbert-large/tokenizer.json');
  bpe = async (text) => (await tok.encode(text, null, { addSpecialTokens: false })).getIds().length;
} catch {
  bpe = undefined;
}
const modes = [
  { label: 'one question per request', options: {} },
  { label: 'all 4 questions per request', options: { questionsPerRequest: 'all' as const } },
  { label: '4 candidates per request, one question', options: { candidatesPerRequest: 4 } },
  {
    label: '4 candidates × 4 questions per request',
    options: { questionsPerRequest: 'all' as const, candidatesPerRequest: 4 },
  },
];
const sample = workload.queries.slice(0, 12);
console.log(
  `\n| mode | requests/pair | tokens/pair (stand-in usage: chars/4) | prompt+answer tokens/pair (ModernBERT byte-level BPE${bpe === undefined ? ': unavailable' : ''}) |`,
);
console.log('|---|---|---|---|');
const modeRows: Array<Record<string, unknown>> = [];
for (const mode of modes) {
  await server.reset();
  const judge = createLlmJudge({
    baseURL: server.baseURL,
    model: 'stand-in-judge',
    concurrency: CONCURRENCY,
    answerCache: false,
    ...mode.options,
  });
  let pairs = 0;
  for (const q of sample) {
    await judge.score(q.text, q.passages);
    pairs += q.passages.length;
  }
  const s = judge.stats();
  let bpeTokens = 0;
  if (bpe !== undefined) {
    for (const body of await server.bodies()) {
      const p = parsePrompt(body);
      for (const m of body.messages) bpeTokens += await bpe(m.content);
      bpeTokens += p.passages.length * p.questions.length;
    }
  }
  const row = {
    mode: mode.label,
    requestsPerPair: s.requestsPerPair,
    tokensPerPair: s.tokensPerPair,
    bpeTokensPerPair: bpe === undefined ? null : bpeTokens / pairs,
  };
  modeRows.push(row);
  console.log(
    `| ${row.mode} | ${row.requestsPerPair.toFixed(2)} | ${row.tokensPerPair.toFixed(0)} | ${row.bpeTokensPerPair === null ? '–' : row.bpeTokensPerPair.toFixed(0)} |`,
  );
}

if (JSON_OUT !== '') writeFileSync(JSON_OUT, JSON.stringify({ rows, modes: modeRows }, null, 2));
child.send({ type: 'close' });
