/**
 * How late the gate answers on the fast path when the input is abnormal: huge passages under a
 * tight budget, and an abort mid-call. Prints answer time against the budget, per scenario.
 * Usage: npx tsx bench/deadline.ts [--rounds 20]
 */
import { createGate, loadFastPathScorer } from '../src/index.js';

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1] || 20);
const scorer = await loadFastPathScorer();
const gate = createGate({ scorer });
const sentence = 'the boundary layer on a swept wing becomes turbulent near the leading edge at high speed. ';
// Flat strings, as JSON.parse makes them (a repeat() rope would be flattened on first use and time that instead).
const mb = (n: number) =>
  JSON.parse(JSON.stringify(sentence.repeat(Math.ceil((n * 1024 * 1024) / sentence.length)))) as string;
const oneMb = mb(1);
const tenMb = mb(10);

interface Scenario {
  readonly name: string;
  readonly budgetMs: number;
  readonly abortAtMs?: number;
  readonly passages: { id: string; text: string }[];
}
const scenarios: Scenario[] = [
  {
    name: '20 x 1 MB, budget 5 ms',
    budgetMs: 5,
    passages: Array.from({ length: 20 }, (_, i) => ({ id: `p${i}`, text: oneMb })),
  },
  {
    name: '5 x 10 MB, budget 5 ms',
    budgetMs: 5,
    passages: Array.from({ length: 5 }, (_, i) => ({ id: `p${i}`, text: tenMb })),
  },
  {
    name: '5 x 10 MB, abort at 5 ms',
    budgetMs: 10_000,
    abortAtMs: 5,
    passages: Array.from({ length: 5 }, (_, i) => ({ id: `p${i}`, text: tenMb })),
  },
  {
    name: '20 x 1 KB, budget 5 ms',
    budgetMs: 5,
    passages: Array.from({ length: 20 }, (_, i) => ({ id: `p${i}`, text: sentence.repeat(11) })),
  },
];

for (const s of scenarios) {
  const times: number[] = [];
  let unscored = 0;
  for (let r = 0; r < rounds; r++) {
    const controller = new AbortController();
    const timer = s.abortAtMs === undefined ? undefined : setTimeout(() => controller.abort(), s.abortAtMs);
    const t0 = performance.now();
    try {
      const result = await gate.filter('swept wing boundary layer', s.passages, {
        budgetMs: s.budgetMs,
        signal: controller.signal,
      });
      unscored += result.stats.retrieved - result.stats.scored;
    } catch {
      unscored += s.passages.length;
    }
    times.push(performance.now() - t0);
    if (timer) clearTimeout(timer);
  }
  times.sort((a, b) => a - b);
  const limit = s.abortAtMs ?? s.budgetMs;
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(1);
  console.log(
    `${s.name.padEnd(28)} limit ${String(limit).padStart(3)} ms  p50 ${q(0.5)}  p99 ${q(0.99)}  max ${times[times.length - 1].toFixed(1)} ms  unscored pairs ${unscored}/${rounds * s.passages.length}`,
  );
}
