/**
 * How late the gate answers when the input or a tier is abnormal: huge passages under a tight
 * budget on the fast path (alone and as the router's inline tier), an abort mid-call, a
 * cross-encoder tier that never answers, and the router's first call after start (cold, then
 * after `router.warmUp()`). Prints answer time against the budget per scenario, and how many calls
 * answered later than budget + the bound (docs/router.md, Hard deadline).
 * Usage: npx tsx bench/deadline.ts [--rounds 20] [--cross-encoder models/generated/tinybert-l2]
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  createCrossEncoder,
  createGate,
  createRouter,
  type Gate,
  loadFastPathScorer,
  type Scorer,
} from '../src/index.js';
import { DEFAULT_LATE_BOUND_MS } from '../src/tooling/loadgen/open-loop.js';
import { crossEncoderTier, fastPathTier } from '../src/router/tiers.js';

const argValue = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
};
const rounds = Number(argValue('rounds', '20'));
const crossEncoderDir = argValue('cross-encoder', 'models/generated/tinybert-l2');
const scorer = await loadFastPathScorer();
const fastGate = createGate({ scorer });
/** A cross-encoder stand-in that never answers (a stuck tier). */
const stuck: Scorer = { id: 'stuck-ce', signals: ['relevant'], score: () => new Promise<never>(() => undefined) };
const routerGate = createGate({
  scorer: createRouter({
    tiers: [fastPathTier(scorer), { name: 'cross-encoder', scorer: stuck, quality: 2, estimateMs: () => 1 }],
    routing: { mode: 'cascade' },
  }),
});
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
  readonly gate?: Gate;
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
  {
    name: 'router, 20 x 1 MB, budget 5 ms',
    budgetMs: 5,
    gate: routerGate,
    passages: Array.from({ length: 20 }, (_, i) => ({ id: `p${i}`, text: oneMb })),
  },
  {
    name: 'router, CE stuck, budget 20 ms',
    budgetMs: 20,
    gate: routerGate,
    passages: Array.from({ length: 20 }, (_, i) => ({ id: `p${i}`, text: `${sentence.repeat(11)} ${i}` })),
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
      const result = await (s.gate ?? fastGate).filter('swept wing boundary layer', s.passages, {
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
  report(s.name, s.abortAtMs ?? s.budgetMs, times, `unscored pairs ${unscored}/${rounds * s.passages.length}`);
}

function report(name: string, limit: number, times: number[], extra: string): void {
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(1);
  const late = times.filter((t) => t > limit + DEFAULT_LATE_BOUND_MS).length;
  console.log(
    `${name.padEnd(34)} limit ${String(limit).padStart(3)} ms  p50 ${q(0.5)}  p99 ${q(0.99)}  max ${times[times.length - 1].toFixed(1)} ms  late > limit + ${DEFAULT_LATE_BOUND_MS} ms: ${late}/${times.length}  ${extra}`,
  );
}

// The router's first call after start, against a real cross-encoder pool: cold (as created), then
// a fresh router after warmUp(). Each round creates a new pool so every first call is cold.
const modelThere =
  existsSync(join(crossEncoderDir, 'onnx', 'model.onnx')) || existsSync(join(crossEncoderDir, 'model.onnx'));
if (!modelThere) console.log(`(no cross-encoder model at ${crossEncoderDir}: cold-start scenarios skipped)`);
else {
  const coldRounds = Math.min(rounds, 4);
  const passages = Array.from({ length: 20 }, (_, i) => ({ id: `p${i}`, text: `${sentence.repeat(3)} ${i}` }));
  for (const warm of [false, true]) {
    const times: number[] = [];
    let unscored = 0;
    for (let r = 0; r < coldRounds; r++) {
      const encoder = await createCrossEncoder({ modelDir: crossEncoderDir });
      const freshTrees = await loadFastPathScorer();
      try {
        const router = createRouter({
          tiers: [fastPathTier(freshTrees), crossEncoderTier(encoder)],
          routing: { mode: 'cascade' },
        });
        if (warm) await router.warmUp();
        const gate = createGate({ scorer: router });
        const t0 = performance.now();
        const result = await gate.filter(`swept wing boundary layer ${r}`, passages, { budgetMs: 100 });
        times.push(performance.now() - t0);
        unscored += result.stats.unscored;
      } finally {
        await encoder.close();
        freshTrees.model.dispose();
      }
    }
    report(
      `router first call, ${warm ? 'after warmUp()' : 'cold'}, 100 ms`,
      100,
      times,
      `unscored pairs ${unscored}/${coldRounds * 20}`,
    );
  }
}
