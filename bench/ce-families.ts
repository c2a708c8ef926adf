/**
 * Cross-encoder tier vs the straight-loop limit, per model family and per ONNX variant, in ONE run,
 * on generated SPEED/SHAPE models (seeded random weights, NOT relevance models) with real passages
 * from ../shared/data (20 per request).
 *
 *  (a) straight loop: pairs tokenized with `tokenizers` encode(q, p) and run through ONE onnxruntime
 *      session (all cores) at the best batch size of a small search, length-sorted, back to back.
 *      Its intra-op threads do not spin unless --a-spinning (spinning threads burn the cores other
 *      processes hold on a shared machine, and their CPU time then is not work).
 *  (c) this tier: createCrossEncoder (worker pool + dynamic batcher), closed loop at --concurrency.
 *
 * Besides pairs/s, every cell reports process CPU ms per pair: on a machine shared with other
 * processes, pairs/s follows the CPU share the scheduler grants (more threads, more share), while
 * CPU per pair follows the work done. "(c) CPU efficiency vs (a)" = (a) CPU/pair ÷ (c) CPU/pair.
 *
 * The tier picks the ONNX file with its `variant` option (the straight loop opens the same file).
 * Cells are INTERLEAVED over --rounds (the machine is shared: every round measures (a) and (c) of
 * every model again, and each (c)/(a) ratio is paired within its round); the load average is
 * printed per round. Entries are `<model>` or `<model>@<variant>`, e.g.
 * `minilm-l6,minilm-l6@qint8_avx512_vnni`; an entry with a variant is also compared with the fp32
 * entry of the same model on real pairs (max |Δ logit|, Spearman) and gets a throughput ratio.
 *
 *   npx tsx bench/ce-families.ts [--models bert,roberta,xlmr,modernbert,deberta] [--rounds 2]
 *     [--duration 6] [--concurrency 16] [--batch-sizes 16,32,64] [--hold all|one]
 *     [--quality-requests 40] [--collections cranfield,scifact] [--json out.json]
 *
 * Models (folders under models/generated/, generated when missing; see FAMILY_MODELS for shapes).
 */
import { writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createCrossEncoder, type CrossEncoder } from '../src/tiers/cross-encoder/cross-encoder.js';
import {
  isOnnxVariant,
  ONNX_VARIANT_FILES,
  type OnnxVariant,
  SPEED_SHAPE_NOTICE,
} from '../src/tooling/model-gen/index.js';
import { realRequests } from '../test/cross-encoder/data.js';
import {
  closedLoop,
  createMachineLimit,
  ensureBenchModel,
  FAMILY_MODELS,
  type LoopResult,
  type MachineLimit,
  type Request,
  spearman,
} from './cross-encoder-lib.js';

const { values: args } = parseArgs({
  options: {
    models: { type: 'string', default: 'bert,roberta,xlmr,modernbert,deberta' },
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '16' },
    'batch-sizes': { type: 'string', default: '16,32,64' },
    'max-length': { type: 'string', default: '512' },
    hold: { type: 'string', default: 'all' },
    'quality-requests': { type: 'string', default: '40' },
    collections: { type: 'string', default: 'cranfield,scifact' },
    workers: { type: 'string' },
    'intra-op-threads': { type: 'string' },
    'a-spinning': { type: 'boolean', default: false },
    json: { type: 'string' },
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
const CONCURRENCY = Number(args.concurrency);
const ROUNDS = Number(args.rounds);
const PASSAGES_PER_REQUEST = 20;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
/** Median; the mean of the two middle values for an even count. */
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

interface Entry {
  readonly label: string;
  readonly model: string;
  readonly variant: OnnxVariant;
  dir: string;
  shape: string;
  limit?: MachineLimit;
  best?: number;
  tier?: CrossEncoder;
  tierNote?: string;
  readonly a: number[];
  /** CPU ms per pair of each (a) run (spinning included when --a-spinning). */
  readonly aCpu: number[];
  readonly c: Array<LoopResult & { round: number }>;
  readonly ratios: number[];
  /** (a) CPU ms/pair ÷ (c) CPU ms/pair per round: the tier's CPU efficiency vs the straight loop. */
  readonly cpuEfficiency: number[];
}

function parseEntry(text: string): Entry {
  const [model, variant = 'fp32'] = text.split('@');
  if (!Object.hasOwn(FAMILY_MODELS, model)) {
    throw new Error(`unknown model "${model}"; known: ${Object.keys(FAMILY_MODELS).join(', ')}`);
  }
  if (!isOnnxVariant(variant)) throw new Error(`unknown variant "${variant}"`);
  return { label: text, model, variant, dir: '', shape: '', a: [], aCpu: [], c: [], ratios: [], cpuEfficiency: [] };
}

/** Loads the tier with the entry's ONNX file, chosen by the tier's own `variant` option. */
async function openTier(e: Entry): Promise<CrossEncoder> {
  const ce = await createCrossEncoder({
    modelDir: e.dir,
    ...(e.variant === 'fp32' ? {} : { variant: e.variant }),
    maxLength: MAX_LENGTH,
    maxPendingPairs: 100_000,
    workers: num(args.workers),
    intraOpThreads: num(args['intra-op-threads']),
  });
  const expected = join(e.dir, ONNX_VARIANT_FILES[e.variant]);
  if (ce.info.modelPath !== expected) {
    await ce.close();
    throw new Error(`${e.label}: the tier loaded ${ce.info.modelPath}, expected ${expected}`);
  }
  return ce;
}

async function open(e: Entry, requests: Request[]): Promise<void> {
  e.limit = await createMachineLimit(e.dir, requests, MAX_LENGTH, {
    modelFile: ONNX_VARIANT_FILES[e.variant],
    spinning: args['a-spinning'],
  });
  const sizes = list(args['batch-sizes']!).map(Number);
  if (e.best === undefined && sizes.length === 1) e.best = sizes[0];
  if (e.best === undefined) {
    let best = { size: 0, pairsPerSec: 0 };
    for (const size of sizes) {
      await e.limit.run(size, 300, { tokenize: true });
      const r = await e.limit.run(size, Math.max(1500, DURATION_MS / 4), { tokenize: true });
      console.log(`  ${e.label} (a) search: batch ${size}: ${r.pairsPerSec.toFixed(1)} pairs/s`);
      if (r.pairsPerSec > best.pairsPerSec) best = { size, pairsPerSec: r.pairsPerSec };
    }
    e.best = best.size;
  }
  try {
    e.tier = await openTier(e);
    e.tierNote = `workers ${e.tier.info.workers}×${e.tier.info.intraOpThreads} thr`;
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'no code';
    e.tierNote = `LOAD FAILED: ${code}: ${(err as Error).message.slice(0, 300)}`;
    console.log(`  ${e.label} (c): ${e.tierNote}`);
  }
}

async function close(e: Entry): Promise<void> {
  await e.tier?.close();
  await e.limit?.release();
  e.tier = undefined;
  e.limit = undefined;
}

async function measure(e: Entry, round: number, requests: Request[]): Promise<void> {
  const a = await e.limit!.run(e.best!, DURATION_MS, { tokenize: true });
  e.a.push(a.pairsPerSec);
  e.aCpu.push(a.cpuMsPerPair);
  let line = `  ${e.label}: (a) batch ${e.best} ${a.pairsPerSec.toFixed(1)} pairs/s (cpu ${a.cpuMsPerPair.toFixed(0)} ms/pair)`;
  if (e.tier) {
    const tier = e.tier;
    const c = await closedLoop(requests, CONCURRENCY, (q) => tier.score(q.query, q.passages), DURATION_MS, WARMUP_MS);
    e.c.push({ ...c, round });
    e.ratios.push(c.pairsPerSec / a.pairsPerSec);
    e.cpuEfficiency.push(a.cpuMsPerPair / c.cpuMsPerPair);
    line += ` | (c) c=${CONCURRENCY} ${c.pairsPerSec.toFixed(1)} pairs/s p50 ${c.p50Ms.toFixed(0)} p99 ${c.p99Ms.toFixed(0)} ms, cpu ${c.cpuMsPerPair.toFixed(0)} ms/pair, (c)/(a) ${((c.pairsPerSec / a.pairsPerSec) * 100).toFixed(1)}%`;
  }
  console.log(line);
}

/** Scores the same requests one at a time through two tiers: max |Δ logit| and Spearman per logit column. */
async function compareScores(fp32: CrossEncoder, other: CrossEncoder, requests: Request[]) {
  const x: number[] = [];
  const y: number[] = [];
  for (const r of requests) {
    const [s, t] = [await fp32.score(r.query, r.passages), await other.score(r.query, r.passages)];
    const a = s.signals?.logits ?? s.logits;
    const b = t.signals?.logits ?? t.logits;
    for (let i = 0; i < a.length; i++) {
      x.push(a[i]);
      y.push(b[i]);
    }
  }
  let maxDelta = 0;
  for (let i = 0; i < x.length; i++) maxDelta = Math.max(maxDelta, Math.abs(x[i] - y[i]));
  const range = Math.max(...x) - Math.min(...x);
  return { pairs: x.length, maxDelta, range, spearman: spearman(x, y) };
}

async function main(): Promise<void> {
  console.log(`ce-families bench: ${SPEED_SHAPE_NOTICE}`);
  console.log(
    `cores ${availableParallelism()}, load average ${load()}, ${args.duration}s/cell, ${ROUNDS} rounds, concurrency ${CONCURRENCY}, hold ${args.hold}`,
  );
  const entries = list(args.models!).map(parseEntry);
  const requests = realRequests(120, PASSAGES_PER_REQUEST, list(args.collections!));
  for (const e of entries) {
    const info = await ensureBenchModel(e.model, e.variant === 'fp32' ? [] : [e.variant]);
    e.dir = info.dir;
    e.shape = info.shape;
    console.log(`${e.label}: ${info.shape} (${info.dir})`);
  }
  const holdAll = args.hold === 'all';
  try {
    if (holdAll) for (const e of entries) await open(e, requests);
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}: load average ${load()}`);
      for (const e of entries) {
        if (!holdAll) await open(e, requests);
        await measure(e, round, requests);
        if (!holdAll) await close(e);
      }
    }
    // Quality of every variant entry against the fp32 entry of the same model.
    const quality: string[] = [];
    for (const e of entries) {
      if (e.variant === 'fp32' || Number(args['quality-requests']) <= 0) continue;
      const ref = entries.find((r) => r.model === e.model && r.variant === 'fp32');
      const fp32 = ref?.tier ?? (await openTier({ ...e, variant: 'fp32' }));
      const other = e.tier ?? (await openTier(e));
      try {
        const q = await compareScores(
          fp32,
          other,
          realRequests(Number(args['quality-requests']), 20, ['scifact', 'nfcorpus', 'cranfield']),
        );
        quality.push(
          `${e.label} vs ${e.model} fp32 on ${q.pairs} real pairs (scifact/nfcorpus/cranfield, one request at a time): max |Δ logit| ${q.maxDelta.toFixed(4)} (fp32 logit range ${q.range.toFixed(3)}), Spearman ${q.spearman.toFixed(4)}`,
        );
      } finally {
        if (fp32 !== ref?.tier) await fp32.close();
        if (other !== e.tier) await other.close();
      }
    }
    printSummary(entries, quality);
  } finally {
    for (const e of entries) await close(e);
  }
  console.log(`load average after: ${load()}`);
  if (args.json) {
    await writeFile(
      args.json,
      JSON.stringify(
        entries.map(({ label, shape, best, a, aCpu, c, ratios, cpuEfficiency, tierNote }) => ({
          label,
          shape,
          best,
          a,
          aCpu,
          c,
          ratios,
          cpuEfficiency,
          tierNote,
        })),
        null,
        2,
      ),
    );
  }
}

function printSummary(entries: Entry[], quality: string[]): void {
  console.log(
    `\n| model | shape | (a) pairs/s (median) | (c) pairs/s (median) | (c) p99 ms (median) | (c) CPU ms/pair (median) | (c)/(a) pairs/s, paired (median) | (c) CPU efficiency vs (a), paired (median) | note |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const e of entries) {
    const c = e.c.map((r) => r.pairsPerSec);
    console.log(
      `| ${e.label} | ${e.shape} | ${median(e.a).toFixed(1)} (a batch ${e.best}) | ${c.length ? median(c).toFixed(1) : '-'} | ${c.length ? median(e.c.map((r) => r.p99Ms)).toFixed(0) : '-'} | ${c.length ? median(e.c.map((r) => r.cpuMsPerPair)).toFixed(0) : '-'} | ${e.ratios.length ? `${(median(e.ratios) * 100).toFixed(1)}%` : '-'} | ${e.cpuEfficiency.length ? `${(median(e.cpuEfficiency) * 100).toFixed(1)}%` : '-'} | ${e.tierNote ?? ''} |`,
    );
  }
  for (const e of entries) {
    if (e.variant === 'fp32' || e.a.length === 0) continue;
    const ref = entries.find((r) => r.model === e.model && r.variant === 'fp32');
    if (!ref) continue;
    // Paired per round: variant / fp32 of the same round.
    const aRatio = e.a.map((x, i) => x / ref.a[i]);
    const cRatio = e.c.map((r, i) => r.pairsPerSec / (ref.c[i]?.pairsPerSec ?? Number.NaN));
    const aCpuRatio = e.aCpu.map((x, i) => ref.aCpu[i] / x);
    console.log(
      `${e.label} / ${ref.label} straight-loop CPU ms/pair fp32/variant ${median(aCpuRatio).toFixed(2)}× (rounds: ${aCpuRatio.map((x) => x.toFixed(2)).join(', ')})`,
    );
    // CPU time per pair of the tier (no spinning threads): robust to other load on the machine.
    const cpuRatio = e.c.map((r, i) => (ref.c[i]?.cpuMsPerPair ?? Number.NaN) / r.cpuMsPerPair);
    console.log(
      `${e.label} / ${ref.label} throughput: straight loop (a) ${median(aRatio).toFixed(2)}× (rounds: ${aRatio.map((x) => x.toFixed(2)).join(', ')}), tier (c) ${cRatio.length ? median(cRatio).toFixed(2) : '-'}× (rounds: ${cRatio.map((x) => x.toFixed(2)).join(', ')}), tier CPU ms/pair fp32/variant ${cpuRatio.length ? median(cpuRatio).toFixed(2) : '-'}× (rounds: ${cpuRatio.map((x) => x.toFixed(2)).join(', ')})`,
    );
  }
  for (const q of quality) console.log(q);
}

await main();
