/**
 * Chooses cross-encoder pool sizes by measurement on a noisy shared machine: configurations of the
 * tier (workers × intra-op threads, token budget) and the straight-loop limit (a) are run
 * INTERLEAVED in several rounds, and each tier result is reported as a ratio to the (a) run of the
 * same round (paired ratios cancel most of the load drift caused by other processes). Closed loop,
 * real passages, 20 per request, at each --concurrency; pairs/s, p50/p99 request latency and the
 * event-loop delay p99 per cell. Models are SPEED/SHAPE models (random weights, NOT relevance models).
 *
 *   npx tsx bench/cross-encoder-tune.ts [--model minilm-l6] [--concurrency 1,8] [--rounds 3]
 *     [--duration 4] [--configs 1x1:4096,2x1:4096,1x2:4096,2x2:4096] [--a-batch 16]
 *
 * --model: a BERT preset (tinybert-l2, minilm-l6) or a bench model of cross-encoder-lib.ts'
 * FAMILY_MODELS (bert, bertbase, roberta, xlmr, modernbert, deberta).
 */
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createCrossEncoder, type CrossEncoder } from '../src/tiers/cross-encoder/cross-encoder.js';
import {
  SPEED_SHAPE_NOTICE,
  writeCrossEncoderModelDir,
  type CrossEncoderPresetName,
} from '../src/tooling/model-gen/index.js';
import { packageRoot } from '../src/util/package-root.js';
import { realRequests } from '../test/cross-encoder/data.js';
import {
  closedLoop,
  createMachineLimit,
  ensureBenchModel,
  FAMILY_MODELS,
  type LoopResult,
} from './cross-encoder-lib.js';

const { values: args } = parseArgs({
  options: {
    model: { type: 'string', default: 'tinybert-l2' },
    concurrency: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '4' },
    configs: { type: 'string', default: '2x1:8192,1x2:8192,2x1:4096,2x1:16384' },
    'a-batch': { type: 'string', default: '16' },
    collections: { type: 'string', default: 'cranfield' },
  },
});

/** Median; the mean of the two middle values for an even count. */
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

async function modelDir(model: string): Promise<string> {
  if (Object.hasOwn(FAMILY_MODELS, model)) return (await ensureBenchModel(model)).dir;
  const dir = join(packageRoot(), 'models', 'generated', model);
  if (!existsSync(join(dir, 'onnx', 'model.onnx')))
    await writeCrossEncoderModelDir(dir, model as CrossEncoderPresetName, { seed: 42 });
  return dir;
}

async function main(): Promise<void> {
  const model = args.model!;
  const dir = await modelDir(model);
  console.log(`tuning on ${model} (${SPEED_SHAPE_NOTICE}), cores ${availableParallelism()}, load ${load()}`);
  const requests = realRequests(120, 20, args.collections!.split(','));
  const concurrencies = args.concurrency!.split(',').map(Number);
  const ms = Number(args.duration) * 1000;
  const aBatch = Number(args['a-batch']);
  const limit = await createMachineLimit(dir, requests, 512);
  // Same loop without spinning threads: its CPU per pair is the real work (spinning burns idle time).
  const limitNoSpin = await createMachineLimit(dir, requests, 512, { spinning: false });
  const configs = args.configs!.split(',').map((c) => {
    const [wt, budget] = c.split(':');
    const [w, t] = wt.split('x').map(Number);
    return { label: c, workers: w, intra: t, budget: Number(budget) };
  });
  const encoders = new Map<string, CrossEncoder>();
  for (const c of configs) {
    encoders.set(
      c.label,
      await createCrossEncoder({
        modelDir: dir,
        workers: c.workers,
        intraOpThreads: c.intra,
        maxBatchTokens: c.budget,
        maxPendingPairs: 100_000,
      }),
    );
  }
  const key = (label: string, c: number) => `${label}@${c}`;
  const results = new Map<string, Array<LoopResult & { ratio: number }>>();
  const aRates: number[] = [];
  const aCpu: number[] = [];
  const aNoSpinCpu: number[] = [];
  try {
    for (let round = 0; round < Number(args.rounds); round++) {
      await limit.run(aBatch, 300);
      const ar = await limit.run(aBatch, ms);
      const a = ar.pairsPerSec;
      aRates.push(a);
      aCpu.push(ar.cpuMsPerPair);
      const ns = await limitNoSpin.run(aBatch, ms / 2);
      aNoSpinCpu.push(ns.cpuMsPerPair);
      console.log(
        `round ${round + 1} (load ${load()}): (a) batch ${aBatch} ${a.toFixed(1)} pairs/s, cpu ${ar.cpuMsPerPair.toFixed(2)} ms/pair (no spin ${ns.cpuMsPerPair.toFixed(2)})`,
      );
      for (const conc of concurrencies) {
        for (const c of configs) {
          const ce = encoders.get(c.label)!;
          const r = await closedLoop(requests, conc, (q) => ce.score(q.query, q.passages), ms, 500);
          const k = key(c.label, conc);
          if (!results.has(k)) results.set(k, []);
          results.get(k)!.push({ ...r, ratio: r.pairsPerSec / a });
          console.log(
            `  c=${conc} ${c.label}: ${r.pairsPerSec.toFixed(1)} pairs/s (${((r.pairsPerSec / a) * 100).toFixed(0)}% of (a)), p50 ${r.p50Ms.toFixed(0)} p99 ${r.p99Ms.toFixed(0)} ms, eld99 ${r.eventLoopP99Ms.toFixed(1)} ms, cpu ${r.cpuMsPerPair.toFixed(2)} ms/pair`,
          );
        }
      }
    }
  } finally {
    for (const ce of encoders.values()) await ce.close();
    await limit.release();
    await limitNoSpin.release();
  }
  const noSpin = median(aNoSpinCpu);
  console.log(`\nmedians over ${args.rounds} rounds, model ${model}:`);
  console.log(
    `  (a) straight loop, batch ${aBatch}: ${median(aRates).toFixed(1)} pairs/s, cpu ${median(aCpu).toFixed(2)} ms/pair (${noSpin.toFixed(2)} without spinning)`,
  );
  console.log(
    '| concurrency | workers×threads:maxBatchTokens | pairs/s | % of (a), paired | p50 ms | p99 ms | event-loop p99 ms | CPU efficiency vs (a) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const conc of concurrencies) {
    for (const c of configs) {
      const rs = results.get(key(c.label, conc)) ?? [];
      const m = (f: (r: LoopResult & { ratio: number }) => number) => median(rs.map(f));
      console.log(
        `| ${conc} | ${c.label} | ${m((r) => r.pairsPerSec).toFixed(1)} | ${(m((r) => r.ratio) * 100).toFixed(1)}% | ${m((r) => r.p50Ms).toFixed(0)} | ${m((r) => r.p99Ms).toFixed(0)} | ${m((r) => r.eventLoopP99Ms).toFixed(1)} | ${((noSpin / m((r) => r.cpuMsPerPair)) * 100).toFixed(1)}% |`,
      );
    }
  }
}

await main();
