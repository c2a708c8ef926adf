/**
 * Chooses cross-encoder defaults by measurement on a noisy shared machine: configurations of the
 * tier (workers × intra-op threads, token budget) and the machine limit (a) are run INTERLEAVED in
 * several rounds, and each tier result is reported as a ratio to the (a) run of the same round
 * (paired ratios cancel most of the load drift caused by other processes). Closed loop, real
 * passages, 20 per request. Models are SPEED/SHAPE models (random weights, NOT relevance models).
 *
 *   npx tsx bench/cross-encoder-tune.ts [--model tinybert-l2] [--concurrency 32] [--rounds 3]
 *     [--duration 4] [--configs 2x1:8192,1x2:8192,2x1:4096,2x1:16384] [--a-batch 16]
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createCrossEncoder, type CrossEncoder } from '../src/tiers/cross-encoder/cross-encoder.js';
import {
  SPEED_SHAPE_NOTICE,
  writeCrossEncoderModelDir,
  type CrossEncoderPresetName,
} from '../src/tiers/cross-encoder/model-gen/index.js';
import { packageRoot } from '../src/util/package-root.js';
import { realRequests } from '../test/cross-encoder/data.js';
import { closedLoop, createMachineLimit } from './cross-encoder-lib.js';

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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const model = args.model!;
  const dir = join(packageRoot(), 'models', 'generated', model);
  if (!existsSync(join(dir, 'onnx', 'model.onnx')))
    await writeCrossEncoderModelDir(dir, model as CrossEncoderPresetName, { seed: 42 });
  console.log(
    `tuning on ${model} (${SPEED_SHAPE_NOTICE}), load ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  const requests = realRequests(120, 20, args.collections!.split(','));
  const concurrency = Number(args.concurrency);
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
  const ratios = new Map<string, number[]>(configs.map((c) => [c.label, []]));
  const rates = new Map<string, number[]>([['a', []], ...configs.map((c) => [c.label, []] as [string, number[]])]);
  const cpu = new Map<string, number[]>([
    ['a', []],
    ['a-nospin', []],
    ...configs.map((c) => [c.label, []] as [string, number[]]),
  ]);
  try {
    for (let round = 0; round < Number(args.rounds); round++) {
      await limit.run(aBatch, 300);
      const ar = await limit.run(aBatch, ms);
      const a = ar.pairsPerSec;
      rates.get('a')!.push(a);
      cpu.get('a')!.push(ar.cpuMsPerPair);
      const ns = await limitNoSpin.run(aBatch, ms / 2);
      cpu.get('a-nospin')!.push(ns.cpuMsPerPair);
      const line = [
        `round ${round + 1}: (a) batch ${aBatch} ${a.toFixed(1)} cpu ${ar.cpuMsPerPair.toFixed(2)} ms/pair (no spin ${ns.cpuMsPerPair.toFixed(2)})`,
      ];
      for (const c of configs) {
        const ce = encoders.get(c.label)!;
        const r = await closedLoop(requests, concurrency, (q) => ce.score(q.query, q.passages), ms, 500);
        rates.get(c.label)!.push(r.pairsPerSec);
        ratios.get(c.label)!.push(r.pairsPerSec / a);
        cpu.get(c.label)!.push(r.cpuMsPerPair);
        line.push(
          `${c.label} ${r.pairsPerSec.toFixed(1)} (${((r.pairsPerSec / a) * 100).toFixed(0)}%, cpu ${r.cpuMsPerPair.toFixed(2)} ms/pair, eld99 ${r.eventLoopP99Ms.toFixed(1)})`,
        );
      }
      console.log(line.join(' | '));
    }
  } finally {
    for (const ce of encoders.values()) await ce.close();
    await limit.release();
    await limitNoSpin.release();
  }
  console.log(`\nmedians over rounds (concurrency ${concurrency}):`);
  const aCpu = median(cpu.get('a-nospin')!);
  console.log(
    `  (a) machine limit, batch ${aBatch}: ${median(rates.get('a')!).toFixed(1)} pairs/s, cpu ${median(cpu.get('a')!).toFixed(2)} ms/pair (${aCpu.toFixed(2)} without spinning)`,
  );
  for (const c of configs) {
    const cCpu = median(cpu.get(c.label)!);
    console.log(
      `  ${c.label} (workers×threads:maxBatchTokens): ${median(rates.get(c.label)!).toFixed(1)} pairs/s, ${(median(ratios.get(c.label)!) * 100).toFixed(1)}% of (a) (paired), cpu ${cCpu.toFixed(2)} ms/pair = ${((aCpu / cCpu) * 100).toFixed(1)}% of (a)'s CPU efficiency`,
    );
  }
}

await main();
