/**
 * Cross-encoder tier benchmark, side by side in one process, on generated SPEED/SHAPE models
 * (random weights, NOT relevance models) at the sizes of ms-marco-TinyBERT-L-2-v2 and
 * ms-marco-MiniLM-L-6-v2, with real passages from ../shared/data (20 per request).
 *
 *  (a) machine limit, as the issue specifies it: pairs tokenized with `tokenizers` encode(q, p) and
 *      run through ONE onnxruntime session (all cores) at the best batch size of a small search,
 *      length-sorted, back to back in one straight loop, no pool, no waiting.
 *  (a') the same loop over pre-tokenized ids: inference alone, a ceiling no server that tokenizes
 *      its input can reach; reported for context ((c)/(a') shows what tokenization costs).
 *  (b) transformers.js: AutoTokenizer + AutoModelForSequenceClassification from the local folder,
 *      each request as one padded batch (as users run it).
 *  (c) this tier: createCrossEncoder (worker pool + dynamic batcher).
 * (a)/(a') are measured again after (b)/(c); ratios use the mean of both runs (the machine is shared).
 * (b) blocks the main thread for each call, so its cells overrun --duration by up to `concurrency`
 * calls (minutes for minilm-l6 at concurrency 32; use --modes a,c or --concurrency to skip).
 * (b) and (c) run closed loops at each concurrency; the main thread's event-loop delay is measured
 * with perf_hooks.monitorEventLoopDelay during every cell.
 *
 * Usage:
 *   npx tsx bench/cross-encoder.ts [--models tinybert-l2,minilm-l6] [--concurrency 1,8,32]
 *     [--duration 8] [--warmup 2] [--modes a,b,c] [--collections cranfield]
 *     [--workers N] [--intra-op-threads N] [--max-batch-tokens N] [--max-queue-delay-ms N]
 *     [--batch-sizes 8,16,32,64] [--max-length 512] [--json out.json]
 *
 * --peers DIR: the tier against sentence-transformers, a straight onnxruntime Python loop and
 * FlashRank on REAL weights (bench/cross-encoder-peers.ts; docs/bench.md, "Cross-encoder tier
 * against its peers"); DIR from `python/bench_cross_encoder_peers.py make DIR`:
 *   npx tsx bench/cross-encoder.ts --peers /tmp/rg-ce-peers [--peer-models minilm-cross,trained]
 *     [--rounds 3] [--throughput-seconds 12] [--latency-seconds 10] [--batched-requests 32]
 *     [--engines ours-fp32,ours-int8,st,ort,flashrank,flashrank-int8] [--single | --single-only]
 *     [--single-seconds 5]
 *     [--json out.json] [--plot out.svg]
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createCrossEncoder, type CrossEncoder } from '../src/tiers/cross-encoder/cross-encoder.js';
import {
  SPEED_SHAPE_NOTICE,
  writeCrossEncoderModelDir,
  type CrossEncoderPresetName,
} from '../src/tooling/model-gen/index.js';
import { packageRoot } from '../src/util/package-root.js';
import { realRequests } from '../test/cross-encoder/data.js';
import { closedLoop, createMachineLimit, type LoopResult, type Request } from './cross-encoder-lib.js';

const { values: args } = parseArgs({
  options: {
    models: { type: 'string', default: 'tinybert-l2,minilm-l6' },
    concurrency: { type: 'string', default: '1,8,32' },
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    modes: { type: 'string', default: 'a,b,c' },
    collections: { type: 'string', default: 'cranfield' },
    workers: { type: 'string' },
    'intra-op-threads': { type: 'string' },
    'max-batch-tokens': { type: 'string' },
    'max-queue-delay-ms': { type: 'string' },
    'batch-sizes': { type: 'string', default: '8,16,32,64' },
    'max-length': { type: 'string', default: '512' },
    requests: { type: 'string', default: '120' },
    json: { type: 'string' },
    peers: { type: 'string' },
    'peer-models': { type: 'string', default: 'minilm-cross,trained' },
    rounds: { type: 'string', default: '3' },
    'throughput-seconds': { type: 'string', default: '12' },
    'latency-seconds': { type: 'string', default: '10' },
    'batched-requests': { type: 'string', default: '32' },
    'parity-requests': { type: 'string', default: '8' },
    'tune-requests': { type: 'string', default: '8' },
    engines: { type: 'string', default: 'ours-fp32,ours-int8,st,ort,flashrank,flashrank-int8' },
    single: { type: 'boolean', default: false },
    'single-only': { type: 'boolean', default: false },
    'single-seconds': { type: 'string', default: '5' },
    plot: { type: 'string' },
  },
});

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const num = (s: string | undefined) => (s === undefined ? undefined : Number(s));
const DURATION_MS = Number(args.duration) * 1000;
const WARMUP_MS = Number(args.warmup) * 1000;
const MAX_LENGTH = Number(args['max-length']);
const MODES = new Set(list(args.modes!));
const CONCURRENCY = list(args.concurrency!).map(Number);
const PASSAGES_PER_REQUEST = 20;

interface Row extends Partial<LoopResult> {
  model: string;
  mode: string;
  concurrency: number | null;
  pairsPerSec: number;
  note?: string;
}

/**
 * (a) as the issue specifies it: tokenization (`encode(q, p)`) and inference of length-sorted
 * batches in one straight loop. (a') is the same loop over pre-tokenized ids: inference alone, a
 * ceiling above what any server that tokenizes can reach, reported for context.
 * Each searches its best batch size, then is measured; `again()` re-measures both (drift check).
 */
async function machineLimit(model: string, dir: string, requests: Request[]) {
  const limit = await createMachineLimit(dir, requests, MAX_LENGTH);
  const sizes = list(args['batch-sizes']!).map(Number);
  const searchMs = Math.max(1000, DURATION_MS / 4);
  const variants = [
    { label: '(a) tokenize + infer', tokenize: true, best: { size: sizes[0], pairsPerSec: 0 } },
    { label: "(a') infer only, pre-tokenized", tokenize: false, best: { size: sizes[0], pairsPerSec: 0 } },
  ];
  for (const v of variants) {
    for (const size of sizes) {
      await limit.run(size, 300, { tokenize: v.tokenize });
      const r = await limit.run(size, searchMs, { tokenize: v.tokenize });
      console.log(`  ${v.label} search: batch ${size}: ${r.pairsPerSec.toFixed(1)} pairs/s`);
      if (r.pairsPerSec > v.best.pairsPerSec) v.best = { size, pairsPerSec: r.pairsPerSec };
    }
  }
  const measure = async (again: boolean): Promise<Row[]> => {
    const rows: Row[] = [];
    for (const v of variants) {
      const label = again ? `${v.label}, again after (b)/(c)` : v.label;
      const r = await limit.run(v.best.size, DURATION_MS, { tokenize: v.tokenize });
      console.log(`  ${label} batch ${v.best.size}: ${r.pairsPerSec.toFixed(1)} pairs/s`);
      rows.push({
        model,
        mode: label,
        concurrency: null,
        pairsPerSec: r.pairsPerSec,
        p50Ms: r.p50,
        p99Ms: r.p99,
        cpuMsPerPair: r.cpuMsPerPair,
        note: v.tokenize
          ? `batch ${v.best.size}, length-sorted, each batch tokenized (encode(q, p), awaited together) then run; latency per batch`
          : `batch ${v.best.size}, length-sorted, latency per batch; tokenization not included (${limit.tokenizePairsPerSec.toFixed(0)} pairs/s on its own)`,
      });
    }
    return rows;
  };
  const first = await measure(false);
  return { first, again: () => measure(true), release: () => limit.release() };
}

async function transformersJs(model: string, dir: string, requests: Request[]): Promise<Row[]> {
  const { AutoModelForSequenceClassification, AutoTokenizer, env } = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  const tokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
  const hf = await AutoModelForSequenceClassification.from_pretrained(dir, {
    local_files_only: true,
    dtype: 'fp32',
    device: 'cpu',
  });
  const rows: Row[] = [];
  try {
    // One request warms it up (a closed-loop warmup at high concurrency takes minutes: every call
    // blocks the main thread).
    const w = requests[0];
    await hf(
      tokenizer(new Array(w.passages.length).fill(w.query), {
        text_pair: w.passages,
        padding: true,
        truncation: true,
        max_length: MAX_LENGTH,
      }),
    );
    for (const c of CONCURRENCY) {
      const r = await closedLoop(
        requests,
        c,
        async (req) => {
          const inputs = tokenizer(new Array(req.passages.length).fill(req.query), {
            text_pair: req.passages,
            padding: true,
            truncation: true,
            max_length: MAX_LENGTH,
          });
          await hf(inputs);
        },
        DURATION_MS,
        0,
      );
      rows.push({ model, mode: '(b) transformers.js', concurrency: c, ...r });
      console.log(
        `  (b) c=${c}: ${r.pairsPerSec.toFixed(1)} pairs/s p50 ${r.p50Ms.toFixed(1)} p99 ${r.p99Ms.toFixed(1)} eld99 ${r.eventLoopP99Ms.toFixed(1)}`,
      );
    }
  } finally {
    await hf.dispose();
  }
  return rows;
}

async function thisTier(model: string, dir: string, requests: Request[]): Promise<Row[]> {
  const ce: CrossEncoder = await createCrossEncoder({
    modelDir: dir,
    workers: num(args.workers),
    intraOpThreads: num(args['intra-op-threads']),
    maxBatchTokens: num(args['max-batch-tokens']),
    maxQueueDelayMs: num(args['max-queue-delay-ms']),
    maxLength: MAX_LENGTH,
    maxPendingPairs: 100_000,
  });
  const rows: Row[] = [];
  try {
    for (const c of CONCURRENCY) {
      const before = ce.stats();
      const r = await closedLoop(requests, c, (req) => ce.score(req.query, req.passages), DURATION_MS, WARMUP_MS);
      const s = ce.stats();
      const batches = s.batchesRun - before.batchesRun;
      const note = `workers ${ce.info.workers}×${ce.info.intraOpThreads} thr, mean batch ${((s.pairsRun - before.pairsRun) / Math.max(1, batches)).toFixed(1)}, padding ${((1 - (s.tokensRun - before.tokensRun) / Math.max(1, s.paddedTokensRun - before.paddedTokensRun)) * 100).toFixed(1)}%`;
      rows.push({ model, mode: '(c) this tier', concurrency: c, ...r, note });
      console.log(
        `  (c) c=${c}: ${r.pairsPerSec.toFixed(1)} pairs/s p50 ${r.p50Ms.toFixed(1)} p99 ${r.p99Ms.toFixed(1)} eld99 ${r.eventLoopP99Ms.toFixed(1)} main busy ${(r.mainThreadBusy * 100).toFixed(1)}% (${note})`,
      );
    }
  } finally {
    await ce.close();
  }
  return rows;
}

function printTable(rows: Row[]): void {
  const f = (x: number | null | undefined, d = 1) =>
    x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d);
  console.log(
    '\n| model | mode | conc. | pairs/s | p50 ms | p99 ms | event-loop p99 ms | main busy | CPU ms/pair | note |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.model} | ${r.mode} | ${r.concurrency ?? '-'} | ${f(r.pairsPerSec)} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${f(r.eventLoopP99Ms)} | ${r.mainThreadBusy === undefined ? '-' : `${(r.mainThreadBusy * 100).toFixed(1)}%`} | ${f(r.cpuMsPerPair, 2)} | ${r.note ?? ''} |`,
    );
  }
  for (const model of new Set(rows.map((r) => r.model))) {
    // Mean of the runs before and after (b)/(c): halves the bias of load drift.
    const mean = (prefix: string) => {
      const xs = rows.filter((r) => r.model === model && r.mode.startsWith(prefix));
      return xs.length === 0 ? undefined : xs.reduce((x, r) => x + r.pairsPerSec, 0) / xs.length;
    };
    const a = mean('(a) ');
    const aPrime = mean("(a') ");
    const pct = (t: number, ref: number | undefined) => (ref === undefined ? '-' : `${((t / ref) * 100).toFixed(1)}%`);
    for (const c of CONCURRENCY) {
      const b = rows.find((r) => r.model === model && r.mode.startsWith('(b)') && r.concurrency === c);
      const t = rows.find((r) => r.model === model && r.mode.startsWith('(c)') && r.concurrency === c);
      if (!t) continue;
      const parts = [`${model} c=${c}: (c)/(a) = ${pct(t.pairsPerSec, a)}, (c)/(a') = ${pct(t.pairsPerSec, aPrime)}`];
      parts.push(`(c)/(b) = ${b ? `${(t.pairsPerSec / b.pairsPerSec).toFixed(2)}×` : '-'}`);
      parts.push(`event-loop p99 ${f(t.eventLoopP99Ms)} ms`);
      console.log(parts.join(', '));
    }
  }
}

async function main(): Promise<void> {
  if (args.peers !== undefined) {
    const { runPeers } = await import('./cross-encoder-peers.js');
    await runPeers({
      dir: args.peers,
      models: list(args['peer-models']!),
      rounds: Number(args.rounds),
      throughputSec: Number(args['throughput-seconds']),
      latencySec: Number(args['latency-seconds']),
      batchedRequests: Number(args['batched-requests']),
      parityRequests: Number(args['parity-requests']),
      tuneRequests: Number(args['tune-requests']),
      engines: list(args.engines!),
      single: args.single! || args['single-only']!,
      singleOnly: args['single-only']!,
      singleSeconds: Number(args['single-seconds']),
      ...(args.json === undefined ? {} : { json: args.json }),
      ...(args.plot === undefined ? {} : { plot: args.plot }),
    });
    return;
  }
  console.log(`cross-encoder bench: ${SPEED_SHAPE_NOTICE}`);
  console.log(
    `cores ${availableParallelism()}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}, duration ${DURATION_MS / 1000}s/cell, warmup ${WARMUP_MS / 1000}s`,
  );
  // Event-loop delay of this process doing nothing: the OS scheduling noise floor of the machine.
  const idle = monitorEventLoopDelay({ resolution: 5 });
  idle.enable();
  await new Promise((r) => setTimeout(r, 2000));
  idle.disable();
  console.log(`idle event-loop delay p99 (noise floor): ${(idle.percentile(99) / 1e6).toFixed(1)} ms`);
  const requests = realRequests(Number(args.requests), PASSAGES_PER_REQUEST, list(args.collections!));
  const rows: Row[] = [];
  for (const model of list(args.models!)) {
    const dir = join(packageRoot(), 'models', 'generated', model);
    if (!existsSync(join(dir, 'onnx', 'model.onnx'))) {
      console.log(`generating ${model} into ${dir}`);
      await writeCrossEncoderModelDir(dir, model as CrossEncoderPresetName, { seed: 42 });
    }
    console.log(`\n== ${model} (${SPEED_SHAPE_NOTICE})`);
    const limit = MODES.has('a') ? await machineLimit(model, dir, requests) : null;
    try {
      if (limit) rows.push(...limit.first);
      if (MODES.has('b')) rows.push(...(await transformersJs(model, dir, requests)));
      if (MODES.has('c')) rows.push(...(await thisTier(model, dir, requests)));
      // The machine is shared: measure (a) again so drift during the run is visible.
      if (limit && (MODES.has('b') || MODES.has('c'))) rows.push(...(await limit.again()));
    } finally {
      await limit?.release();
    }
  }
  printTable(rows);
  console.log(
    `load average after: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  if (args.json) await writeFile(args.json, JSON.stringify(rows, null, 2));
}

await main();
