/**
 * Shared pieces of the cross-encoder benchmarks (bench/cross-encoder.ts, bench/cross-encoder-tune.ts):
 * closed-loop driver with latency/event-loop measurement, and the "machine limit" runner
 * (one onnxruntime session, all cores, length-sorted pairs back to back, tokenized in the loop or before it).
 */
import { availableParallelism } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import {
  type ModelPresetName,
  ONNX_VARIANT_FILES,
  ONNX_VARIANTS,
  type OnnxVariant,
  type WriteCrossEncoderModelDirOptions,
  writeCrossEncoderModelDir,
} from '../src/tooling/model-gen/index.js';
import { packageRoot } from '../src/util/package-root.js';
import { mulberry32 } from '../src/util/seeded-random.js';

export type Request = { query: string; passages: string[] };

export interface LoopResult {
  pairsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  eventLoopP99Ms: number;
  /** Share of wall time the main thread's event loop was busy (performance.eventLoopUtilization). */
  mainThreadBusy: number;
  /**
   * Process CPU time (all threads) per pair, ms. Robust to other load on a shared machine, unlike
   * pairs/s: on an idle machine with C cores, pairs/s ≈ C × 1000 / cpuMsPerPair when saturated.
   */
  cpuMsPerPair: number;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Where each request list's cursor is, so successive cells walk the whole list, not its head. */
const cursors = new WeakMap<Request[], number>();

/** Closed loop: `concurrency` callers, each sending the next request as soon as its last returns. */
export async function closedLoop(
  requests: Request[],
  concurrency: number,
  call: (r: Request) => Promise<unknown>,
  durationMs: number,
  warmupMs: number,
): Promise<LoopResult> {
  const run = async (ms: number) => {
    const latencies: number[] = [];
    let pairs = 0;
    let next = cursors.get(requests) ?? 0;
    const end = performance.now() + ms;
    const eld = monitorEventLoopDelay({ resolution: 5 });
    eld.enable();
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const r = requests[next++ % requests.length];
          const t0 = performance.now();
          await call(r);
          latencies.push(performance.now() - t0);
          pairs += r.passages.length;
        }
      }),
    );
    const elapsed = performance.now() - started;
    cursors.set(requests, next);
    const cpu = cpuMs(cpu0);
    eld.disable();
    const elu = performance.eventLoopUtilization(elu0);
    latencies.sort((a, b) => a - b);
    return {
      pairsPerSec: (pairs / elapsed) * 1000,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      eventLoopP99Ms: eld.percentile(99) / 1e6,
      mainThreadBusy: elu.utilization,
      cpuMsPerPair: cpu / pairs,
    };
  };
  if (warmupMs > 0) await run(warmupMs);
  return run(durationMs);
}

/**
 * Writes int32 values into a little-endian int64 buffer (same trick as the tier's worker); padded
 * positions get `pad` (RoBERTa-style graphs derive positions from ids ≠ pad_token_id).
 */
export function int64Batch(
  rows: number[][],
  seq: number,
  value: (row: number[], t: number) => number,
  pad = 0,
): ort.Tensor {
  const data = new BigInt64Array(rows.length * seq);
  const view = new Int32Array(data.buffer);
  rows.forEach((row, b) => {
    for (let t = 0; t < seq; t++) view[2 * (b * seq + t)] = t < row.length ? value(row, t) : pad;
  });
  return new ort.Tensor('int64', data, [rows.length, seq]);
}

/** config.json `pad_token_id` of a model folder, 0 when absent. */
export function readPadTokenId(dir: string): number {
  try {
    const value: unknown = (JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>)
      .pad_token_id;
    return typeof value === 'number' ? value : 0;
  } catch {
    return 0;
  }
}

export interface MachineLimit {
  /**
   * Pairs/s of a straight loop over length-sorted batches of `batchSize`, plus per-batch latency.
   * `tokenize`: each batch's pairs are tokenized (`encode(q, p)`, awaited together) inside the loop,
   * right before its `session.run`, as the issue specifies (a); without it the loop runs
   * pre-tokenized ids only: an inference-only ceiling no tokenizing server can reach.
   */
  run(
    batchSize: number,
    ms: number,
    options?: { tokenize?: boolean },
  ): Promise<{ pairsPerSec: number; p50: number; p99: number; cpuMsPerPair: number }>;
  /** Tokenization throughput measured while pre-tokenizing (encode(q, p), all pairs in parallel). */
  readonly tokenizePairsPerSec: number;
  release(): Promise<void>;
}

/** (a)/(a'): one session with all cores, pairs sorted by length, no pool, no waiting. */
export async function createMachineLimit(
  dir: string,
  requests: Request[],
  maxLength: number,
  {
    spinning = true,
    modelFile = join('onnx', 'model.onnx'),
    padId = readPadTokenId(dir),
  }: {
    spinning?: boolean;
    /** ONNX file, relative to `dir` (or absolute): e.g. onnx/model_qint8_avx512_vnni.onnx. */
    modelFile?: string;
    /** Id written into padded positions (config.json pad_token_id, else 0); masked either way. */
    padId?: number;
  } = {},
): Promise<MachineLimit> {
  const tok = Tokenizer.fromFile(join(dir, 'tokenizer.json'));
  tok.setTruncation(maxLength);
  const pairs = requests.flatMap((r) => r.passages.map((p) => [r.query, p] as const));
  const t0 = performance.now();
  const encoded = await Promise.all(pairs.map(([q, p]) => tok.encode(q, p)));
  const tokenizeMs = performance.now() - t0;
  const items = encoded.map((e, i) => ({ pair: pairs[i], ids: e.getIds(), types: e.getTypeIds() }));
  items.sort((x, y) => x.ids.length - y.ids.length);
  const session = await ort.InferenceSession.create(isAbsolute(modelFile) ? modelFile : join(dir, modelFile), {
    intraOpNumThreads: availableParallelism(),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    // onnxruntime's default (spinning on) is its best straight-loop throughput; off to measure CPU/pair.
    ...(spinning
      ? {}
      : {
          extra: { 'session.intra_op.allow_spinning': '0' } as unknown as ort.InferenceSession.SessionOptions['extra'],
        }),
  });
  // Batches are length-sorted (minimal padding) but visited in a seeded random order, with a
  // cursor that persists across calls: every run sees the same length mix as the tier does
  // (starting each run at the shortest batches would inflate (a)).
  const plans = new Map<number, { batches: Array<typeof items>; cursor: number }>();
  const plan = (batchSize: number) => {
    let p = plans.get(batchSize);
    if (!p) {
      const batches: Array<typeof items> = [];
      for (let i = 0; i < items.length; i += batchSize) batches.push(items.slice(i, i + batchSize));
      const rand = mulberry32(42);
      for (let i = batches.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [batches[i], batches[j]] = [batches[j], batches[i]];
      }
      p = { batches, cursor: 0 };
      plans.set(batchSize, p);
    }
    return p;
  };
  const run = async (batchSize: number, ms: number, { tokenize = false }: { tokenize?: boolean } = {}) => {
    const p = plan(batchSize);
    let done = 0;
    const times: number[] = [];
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    // At least 4 batches: with big models one batch can outlast the whole duration. Then run on to
    // the end of the current pass over all batches (capped at 4 × ms), so every run sees the same
    // length mix: a partial pass over length-sorted batches swings pairs/s by ±15 %.
    const atPassEnd = () => p.cursor % p.batches.length === 0;
    for (;;) {
      const elapsed = performance.now() - start;
      if (elapsed >= ms && times.length >= 4 && (atPassEnd() || elapsed >= 4 * ms)) break;
      const sorted = p.batches[p.cursor++ % p.batches.length];
      const t1 = performance.now();
      const batch = tokenize
        ? (await Promise.all(sorted.map((x) => tok.encode(x.pair[0], x.pair[1])))).map((e) => ({
            ids: e.getIds(),
            types: e.getTypeIds(),
          }))
        : sorted;
      const seq = Math.max(...batch.map((x) => x.ids.length));
      const feeds: Record<string, ort.Tensor> = {
        input_ids: int64Batch(
          batch.map((x) => x.ids),
          seq,
          (row, t) => row[t],
          padId,
        ),
        attention_mask: int64Batch(
          batch.map((x) => x.ids),
          seq,
          () => 1,
        ),
      };
      if (session.inputNames.includes('token_type_ids')) {
        feeds.token_type_ids = int64Batch(
          batch.map((x) => x.types),
          seq,
          (row, t) => row[t],
        );
      }
      await session.run(feeds);
      times.push(performance.now() - t1);
      done += batch.length;
    }
    const elapsed = performance.now() - start;
    const cpu = cpuMs(cpu0);
    times.sort((a, b) => a - b);
    return {
      pairsPerSec: (done / elapsed) * 1000,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      cpuMsPerPair: cpu / done,
    };
  };
  return {
    run,
    tokenizePairsPerSec: (pairs.length / tokenizeMs) * 1000,
    release: () => session.release(),
  };
}

/** Spearman rank correlation (average ranks for ties). */
export function spearman(x: readonly number[], y: readonly number[]): number {
  const ranks = (v: readonly number[]) => {
    const order = v.map((value, i) => ({ value, i })).sort((a, b) => a.value - b.value);
    const r = new Array<number>(v.length);
    for (let k = 0; k < order.length; ) {
      let end = k;
      while (end + 1 < order.length && order[end + 1].value === order[k].value) end++;
      for (let m = k; m <= end; m++) r[order[m].i] = (k + end) / 2;
      k = end + 1;
    }
    return r;
  };
  const rx = ranks(x);
  const ry = ranks(y);
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const mx = mean(rx);
  const my = mean(ry);
  let num = 0;
  let dx = 0;
  let dy = 0;
  for (let i = 0; i < rx.length; i++) {
    num += (rx[i] - mx) * (ry[i] - my);
    dx += (rx[i] - mx) ** 2;
    dy += (ry[i] - my) ** 2;
  }
  return num / Math.sqrt(dx * dy);
}

const SHARED_TOKENIZERS = join(packageRoot(), '..', 'shared', 'tokenizers');

/**
 * The family models the benchmarks generate (SPEED/SHAPE models: seeded random weights). Real
 * widths, vocabularies and heads of the checkpoint each preset mimics; layer counts reduced so a
 * 2-core machine measures them in seconds (each costs about 2× MiniLM-L6's compute per token).
 * XLM-R and DeBERTa have no tokenizer.json in shared/tokenizers: they get RoBERTa's BPE
 * tokenizer.json (valid XLM-R ids; same <s>/</s> pair layout) and ModernBERT's (ids < 128100;
 * [CLS] A [SEP] B [SEP] layout), so token counts are those of a BPE tokenizer, not of their own
 * sentencepiece vocabularies.
 */
export const FAMILY_MODELS = {
  bert: {
    dirName: 'minilm-l6',
    preset: 'minilm-l6',
    options: {},
    shape: 'BERT, MiniLM-L6 shape: 6 layers, hidden 384, 12 heads, FFN 1536, vocab 30522, token_type_ids, 1 logit',
  },
  bertbase: {
    dirName: 'bench-bert-base-l4',
    preset: 'minilm-l6',
    options: { layers: 4, hidden: 768 },
    shape: 'BERT-base width: 4 of 12 layers, hidden 768, 12 heads, FFN 3072, vocab 30522, token_type_ids, 1 logit',
  },
  roberta: {
    dirName: 'bench-roberta-nli-l2',
    preset: 'roberta-nli',
    options: { layers: 2, tokenizerDir: join(SHARED_TOKENIZERS, 'roberta-large-mnli') },
    shape:
      'RoBERTa (roberta-large-mnli width): 2 of 24 layers, hidden 1024, 16 heads, FFN 4096, vocab 50265, no token types, NLI head [b,3]',
  },
  xlmr: {
    dirName: 'bench-xlmr-reranker-l3',
    preset: 'xlmr-reranker',
    options: { layers: 3, tokenizerJsonPath: join(SHARED_TOKENIZERS, 'roberta-large-mnli', 'tokenizer.json') },
    shape:
      'XLM-RoBERTa (bge-reranker-base width): 3 of 12 layers, hidden 768, 12 heads, FFN 3072, vocab 250002, 1 logit; RoBERTa BPE tokenizer.json',
  },
  modernbert: {
    dirName: 'bench-modernbert-reranker-l4',
    preset: 'modernbert-reranker',
    options: { layers: 4, tokenizerDir: join(SHARED_TOKENIZERS, 'modernbert-large') },
    shape:
      'ModernBERT (base reranker width): 4 of 22 layers, hidden 768, 12 heads, GeGLU FFN 1152, vocab 50368, global attention, 1 logit',
  },
  deberta: {
    dirName: 'bench-deberta-injection-l3',
    preset: 'deberta-injection',
    options: { layers: 3, tokenizerJsonPath: join(SHARED_TOKENIZERS, 'modernbert-large', 'tokenizer.json') },
    shape:
      'DeBERTa-v2/v3 (deberta-v3-base width): 3 of 12 layers, hidden 768, 12 heads, FFN 3072, vocab 128100, relative attention (256 buckets), head [b,2]; ModernBERT BPE tokenizer.json',
  },
} as const satisfies Record<
  string,
  { dirName: string; preset: ModelPresetName; options: WriteCrossEncoderModelDirOptions; shape: string }
>;

export type FamilyModelName = keyof typeof FAMILY_MODELS;

/**
 * The folder of a FAMILY_MODELS entry under models/generated/, (re)generated (seed 42) when it is
 * missing, has another layer count, or lacks one of `variants`. Variant files already there are kept.
 */
export async function ensureBenchModel(
  name: string,
  variants: readonly OnnxVariant[] = [],
): Promise<{ dir: string; shape: string; parameters?: number }> {
  if (!Object.hasOwn(FAMILY_MODELS, name)) throw new Error(`unknown bench model ${name}`);
  const m = FAMILY_MODELS[name as FamilyModelName];
  const dir = join(packageRoot(), 'models', 'generated', m.dirName);
  const present = ONNX_VARIANTS.filter((v) => v !== 'fp32' && existsSync(join(dir, ONNX_VARIANT_FILES[v])));
  const wanted = [...new Set([...present, ...variants])].filter((v) => v !== 'fp32');
  const layers = 'layers' in m.options ? m.options.layers : undefined;
  let current: number | undefined;
  try {
    current = (JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { num_hidden_layers?: number })
      .num_hidden_layers;
  } catch {
    current = undefined;
  }
  const stale =
    !existsSync(join(dir, ONNX_VARIANT_FILES.fp32)) ||
    wanted.some((v) => !present.includes(v)) ||
    (layers !== undefined && current !== layers);
  if (!stale) return { dir, shape: m.shape };
  const t0 = performance.now();
  const info = await writeCrossEncoderModelDir(dir, m.preset, { ...m.options, seed: 42, variants: wanted });
  console.log(
    `generated ${dir} (${info.parameters} parameters, ${(info.onnxBytes / 1e6).toFixed(0)} MB fp32, ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  return { dir, shape: m.shape, parameters: info.parameters };
}
