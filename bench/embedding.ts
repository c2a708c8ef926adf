/**
 * Embedding tier benchmark, side by side in one run, on a real imported bi-encoder
 * (default all-MiniLM-L6-v2 from scripts/fetch-reference-models.sh) and real k = 20 requests
 * from ../shared/data (a query with its judged passages, topped up with others):
 *
 *  (a) straight onnxruntime loop: each request's 21 texts (query + 20 passages) tokenized with
 *      `tokenizers` and run as one padded batch through ONE session with all cores, back to back
 *      (what a service that embeds per request writes). Measured before and after the others; the
 *      mean is the ratio's base (the machine is shared).
 *  (b) sentence-transformers `encode([query, ...passages])` per request with torch limited to the
 *      same thread count (python/bench_st.py, in its own process while nothing else runs), and its
 *      bulk encode (batch 32, length-sorted by the library) for context.
 *  (c) this tier: createEmbeddingScorer with its vector cache off (every text embedded), closed
 *      loops at each concurrency: texts/s and the request's p50/p99.
 *  (d) the cached path: the same scorer with its vector cache on, every text seen before: µs per
 *      request of 20 passages (a dot product per pair).
 *
 * Needs python/.venv with sentence-transformers (bash python/setup-venv.sh --with-sentence-transformers)
 * for (b); without it (b) is skipped with a note.
 *
 * Usage: npx tsx bench/embedding.ts [--model models/.cache/all-minilm-l6-v2] [--variant fp32|int8]
 *          [--concurrency 1,8,32] [--duration 10] [--warmup 2] [--requests 120] [--modes a,b,c,d] [--json out.json]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import { createEmbeddingScorer } from '../src/tiers/embedding/index.js';
import { packageRoot } from '../src/util/package-root.js';
import { realRequests } from '../test/cross-encoder/data.js';
import { closedLoop, int64Batch, type LoopResult, percentile, type Request } from './cross-encoder-lib.js';

const { values: args } = parseArgs({
  options: {
    model: { type: 'string', default: 'models/.cache/all-minilm-l6-v2' },
    variant: { type: 'string', default: 'fp32' },
    concurrency: { type: 'string', default: '1,8,32' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    requests: { type: 'string', default: '120' },
    modes: { type: 'string', default: 'a,b,c,d' },
    json: { type: 'string' },
  },
});
const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const MODEL_DIR = resolve(args.model!);
const VARIANT = args.variant === 'int8' ? 'int8' : 'fp32';
const DURATION_MS = Number(args.duration) * 1000;
const WARMUP_MS = Number(args.warmup) * 1000;
const MODES = new Set(list(args.modes!));
const THREADS = availableParallelism();
const K = 20;
/** Texts one request embeds: its query and its passages. */
const TEXTS_PER_REQUEST = K + 1;

const meta = JSON.parse(readFileSync(join(MODEL_DIR, 'relevance-gate-model.json'), 'utf8')) as {
  maxLength: number;
  files: { fp32: string; int8?: string; tokenizer: string };
  source?: { folder?: string };
};
const requests: Request[] = realRequests(Number(args.requests), K);
const rows: Array<Record<string, unknown>> = [];
const textsPerSec = (r: LoopResult) => (r.pairsPerSec * TEXTS_PER_REQUEST) / K;

/** (a): one session, all cores, a request's texts as one padded batch. */
async function straightLoop(): Promise<LoopResult> {
  const tok = Tokenizer.fromFile(join(MODEL_DIR, meta.files.tokenizer));
  tok.setTruncation(meta.maxLength);
  const session = await ort.InferenceSession.create(join(MODEL_DIR, meta.files[VARIANT] ?? meta.files.fp32), {
    intraOpNumThreads: THREADS,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  try {
    return await closedLoop(
      requests,
      1,
      async (r) => {
        const encoded = await Promise.all([r.query, ...r.passages].map((t) => tok.encode(t)));
        const ids = encoded.map((e) => e.getIds());
        const seq = Math.max(...ids.map((x) => x.length));
        const feeds: Record<string, ort.Tensor> = {
          input_ids: int64Batch(ids, seq, (row, t) => row[t]),
          attention_mask: int64Batch(ids, seq, () => 1),
        };
        if (session.inputNames.includes('token_type_ids')) feeds.token_type_ids = int64Batch(ids, seq, () => 0);
        await session.run(feeds);
      },
      DURATION_MS,
      WARMUP_MS,
    );
  } finally {
    await session.release();
  }
}

interface StResult {
  torch: string;
  threads: number;
  maxSeqLength: number;
  perRequest: { requests: number; textsPerSec: number; p50Ms: number; p99Ms: number };
  bulk: { texts: number; textsPerSec: number };
}

/** (b): python/bench_st.py in its own process. */
function sentenceTransformers(): StResult | string {
  const python = join(packageRoot(), 'python', '.venv', 'bin', 'python');
  const hfFolder = meta.source?.folder === undefined ? null : resolve(MODEL_DIR, meta.source.folder);
  if (!existsSync(python)) return 'python/.venv missing (bash python/setup-venv.sh --with-sentence-transformers)';
  if (hfFolder === null || !existsSync(hfFolder)) return `the model's source folder is missing (${hfFolder})`;
  const dir = mkdtempSync(join(tmpdir(), 'rg-bench-st-'));
  try {
    const file = join(dir, 'requests.json');
    writeFileSync(file, JSON.stringify(requests));
    const run = spawnSync(
      python,
      [
        join(packageRoot(), 'python', 'bench_st.py'),
        '--model',
        hfFolder,
        '--requests',
        file,
        '--threads',
        String(THREADS),
        '--duration',
        String(DURATION_MS / 1000),
        '--warmup',
        String(WARMUP_MS / 1000),
      ],
      {
        encoding: 'utf8',
        timeout: 20 * 60_000,
        env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
      },
    );
    if (run.status !== 0) {
      const why = `${run.stderr ?? ''}`.trim().split('\n').slice(-3).join(' / ');
      return /No module named/.test(why)
        ? 'sentence-transformers is not installed (bash python/setup-venv.sh --with-sentence-transformers)'
        : `bench_st.py failed (${run.status ?? run.signal}): ${why}`;
    }
    return JSON.parse(run.stdout.trim().split('\n').pop()!) as StResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const passagesOf = (r: Request) => r.passages.map((text, i) => ({ id: String(i), text }));
const fmt = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : 'n/a');
const log = (line: string) => process.stdout.write(`${line}\n`);

log(
  `embedding bench: ${MODEL_DIR} (${VARIANT}, max length ${meta.maxLength}), ${requests.length} real requests of ` +
    `${K} passages + query, ${THREADS} threads, ${DURATION_MS / 1000} s per cell, load ${loadavg()[0].toFixed(2)}`,
);

const loops: LoopResult[] = [];
if (MODES.has('a')) {
  const r = await straightLoop();
  loops.push(r);
  log(
    `(a) straight loop, run 1: ${fmt(textsPerSec(r))} texts/s, request p50 ${fmt(r.p50Ms)} ms p99 ${fmt(r.p99Ms)} ms`,
  );
}
let st: StResult | string | null = null;
if (MODES.has('b')) {
  st = sentenceTransformers();
  if (typeof st === 'string') log(`(b) sentence-transformers: skipped: ${st}`);
  else
    log(
      `(b) sentence-transformers ${st.torch} (${st.threads} threads, max length ${st.maxSeqLength}): per request ` +
        `${fmt(st.perRequest.textsPerSec)} texts/s, p50 ${fmt(st.perRequest.p50Ms)} ms p99 ${fmt(st.perRequest.p99Ms)} ms; ` +
        `bulk encode ${fmt(st.bulk.textsPerSec)} texts/s`,
    );
}
const tier: Array<{ concurrency: number; result: LoopResult }> = [];
if (MODES.has('c')) {
  const scorer = await createEmbeddingScorer({ modelDir: MODEL_DIR, variant: VARIANT, cacheBytes: 0 });
  try {
    for (const c of list(args.concurrency!).map(Number)) {
      const result = await closedLoop(requests, c, (r) => scorer.score(r.query, passagesOf(r)), DURATION_MS, WARMUP_MS);
      tier.push({ concurrency: c, result });
      log(
        `(c) tier, concurrency ${c}: ${fmt(textsPerSec(result))} texts/s, request p50 ${fmt(result.p50Ms)} ms ` +
          `p99 ${fmt(result.p99Ms)} ms, event-loop p99 ${fmt(result.eventLoopP99Ms)} ms`,
      );
    }
  } finally {
    await scorer.close();
  }
}
let cachedUs: { p50: number; p99: number } | null = null;
if (MODES.has('d')) {
  const scorer = await createEmbeddingScorer({ modelDir: MODEL_DIR, variant: VARIANT });
  try {
    const few = requests.slice(0, 30);
    for (const r of few) await scorer.score(r.query, passagesOf(r));
    const missesBefore = scorer.stats().cache.misses;
    const times: number[] = [];
    for (let i = 0; i < 3000; i++) {
      const r = few[i % few.length];
      const t0 = performance.now();
      await scorer.score(r.query, passagesOf(r));
      times.push((performance.now() - t0) * 1000);
    }
    const misses = scorer.stats().cache.misses - missesBefore;
    times.sort((a, b) => a - b);
    cachedUs = { p50: percentile(times, 50), p99: percentile(times, 99) };
    const ran = misses === 0 ? 'every vector from the cache' : `${misses} cache misses`;
    log(
      `(d) cached path (${ran}): ${fmt(cachedUs.p50, 0)} µs p50, ${fmt(cachedUs.p99, 0)} µs p99 per request of ${K} ` +
        `passages (${fmt(cachedUs.p50 / K, 2)} µs per pair)`,
    );
  } finally {
    await scorer.close();
  }
}
if (MODES.has('a')) {
  const r = await straightLoop();
  loops.push(r);
  log(
    `(a) straight loop, run 2: ${fmt(textsPerSec(r))} texts/s, request p50 ${fmt(r.p50Ms)} ms p99 ${fmt(r.p99Ms)} ms`,
  );
}

const loopTexts = loops.length === 0 ? Number.NaN : loops.reduce((s, r) => s + textsPerSec(r), 0) / loops.length;
const best = tier.reduce<(typeof tier)[number] | null>(
  (b, t) => (b === null || textsPerSec(t.result) > textsPerSec(b.result) ? t : b),
  null,
);
if (best !== null) {
  const t = textsPerSec(best.result);
  const stTexts = st !== null && typeof st !== 'string' ? st.perRequest.textsPerSec : Number.NaN;
  log(
    `ratios (k = ${K} requests, tier at its best concurrency ${best.concurrency}): ` +
      `tier / straight loop ${fmt(t / loopTexts, 2)}×, tier / sentence-transformers ${fmt(t / stTexts, 2)}×` +
      (st !== null && typeof st !== 'string' ? `, tier / ST bulk encode ${fmt(t / st.bulk.textsPerSec, 2)}×` : ''),
  );
}
rows.push({
  model: MODEL_DIR,
  variant: VARIANT,
  threads: THREADS,
  loops,
  st,
  tier,
  cachedUs,
  loopTextsPerSec: loopTexts,
});
if (args.json) writeFileSync(args.json, `${JSON.stringify(rows, null, 2)}\n`);
