/**
 * Gate overhead on top of a scorer that returns instantly (issue 4: ≤ 15 µs per call at k = 20).
 * Each sample runs BATCH sequential awaited calls so timer resolution and the per-sample
 * microtask turn are amortised; figures are per call. Peers run side by side in one process:
 * the direct scorer call is the baseline, every gate variant is reported as baseline + overhead.
 *
 *   npx tsx bench/gate-overhead.ts            (GATE_BENCH_MS=2000 for a longer run per task)
 */
import { Bench } from 'tinybench';
import { createGate, DEFAULT_ROUTING_RULES, type Passage, type Scorer, type ScorerPairResult } from '../src/index.js';

const K = Number(process.env.GATE_BENCH_K ?? 20);
const BATCH = 200;
const TIME_MS = Number(process.env.GATE_BENCH_MS ?? 1000);

const passages: Passage[] = Array.from({ length: K }, (_, i) => ({
  id: `doc-${i}`,
  text: `passage text number ${i} about something`,
}));
const single: ScorerPairResult[] = passages.map((_, i) => ({ relevant: ((i * 37) % 100) / 100 }));
const multi: ScorerPairResult[] = passages.map((_, i) => ({
  relevant: ((i * 37) % 100) / 100,
  evidence: ((i * 53) % 100) / 100,
  injection: ((i * 11) % 100) / 1000,
  contradicts_premise: ((i * 29) % 100) / 400,
}));
const instant = (id: string, results: ScorerPairResult[]): Scorer => ({ id, score: () => Promise.resolve(results) });
const scorer = instant('instant', single);
const multiScorer = instant('instant-multi', multi);

const query = 'what is the boiling point of water at altitude';
const threshold = createGate({ scorer, policy: { threshold: 0.5 } });
const thresholdCapped = createGate({
  scorer,
  policy: { threshold: 0.5, minKept: 3, maxKept: 10, insufficientBelow: 0.6 },
});
const rules = createGate({ scorer: multiScorer, policy: { rules: DEFAULT_ROUTING_RULES } });

const OVERRIDE = { threshold: 0.4, maxKept: 5 };
let sink = 0;
const bench = new Bench({ time: TIME_MS, warmupTime: 200 });
bench
  .add('direct scorer.score', async () => {
    for (let i = 0; i < BATCH; i++) sink += (await scorer.score(query, passages)).length;
  })
  .add('gate.filter threshold', async () => {
    for (let i = 0; i < BATCH; i++) sink += (await threshold.filter(query, passages)).stats.returned;
  })
  .add('gate.filter threshold+min/maxKept', async () => {
    for (let i = 0; i < BATCH; i++) sink += (await thresholdCapped.filter(query, passages)).stats.returned;
  })
  .add('gate.filter default rules (4 signals)', async () => {
    for (let i = 0; i < BATCH; i++) sink += (await rules.filter(query, passages)).stats.returned;
  })
  .add('gate.filter threshold + per-call override', async () => {
    for (let i = 0; i < BATCH; i++)
      sink += (await threshold.filter(query, passages, { policy: OVERRIDE })).stats.returned;
  })
  .add('gate.filter threshold + budgetMs 100', async () => {
    for (let i = 0; i < BATCH; i++) sink += (await threshold.filter(query, passages, { budgetMs: 100 })).stats.returned;
  });

await bench.run();

const perCall = (name: string): { mean: number; p50: number } => {
  const task = bench.tasks.find((t) => t.name === name);
  const result = task?.result;
  if (result === undefined || !('latency' in result))
    throw new Error(`task ${name} did not complete: ${result?.state}`);
  return { mean: (result.latency.mean * 1000) / BATCH, p50: (result.latency.p50 * 1000) / BATCH };
};
const base = perCall('direct scorer.score');
console.log(`k = ${K}, ${BATCH} calls per sample, ${TIME_MS} ms per task, node ${process.version}`);
console.log('task                                      mean µs/call  p50 µs/call  overhead µs (mean / p50)');
for (const task of bench.tasks) {
  const r = perCall(task.name);
  const overhead =
    task.name === 'direct scorer.score'
      ? '(baseline)'
      : `${(r.mean - base.mean).toFixed(2)} / ${(r.p50 - base.p50).toFixed(2)}`;
  console.log(`${task.name.padEnd(42)}${r.mean.toFixed(2).padStart(12)}${r.p50.toFixed(2).padStart(13)}  ${overhead}`);
}
if (sink === -1) console.log(sink);
