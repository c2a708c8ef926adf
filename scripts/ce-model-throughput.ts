/**
 * Smoke figure: onnxruntime-node CPU throughput of a generated cross-encoder (a SPEED/SHAPE model,
 * random weights, NOT a relevance model) on synthetic full-length rows. One session per ONNX file,
 * fixed batch, back to back; with several --variants the files are measured INTERLEAVED over
 * --rounds (the machine is shared) and each is reported as a ratio to the first, paired per round.
 * Inference only, no tokenization; the benchmark with real passages is bench/ce-families.ts.
 *
 *   npx tsx scripts/ce-model-throughput.ts [modelDir=models/generated/tinybert-l2] [--batch 32] [--seq 128]
 *     [--threads 2] [--seconds 5] [--variants fp32,qint8_avx512_vnni] [--rounds 1]
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import { isOnnxVariant, ONNX_VARIANT_FILES } from '../src/tiers/cross-encoder/model-gen/index.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    batch: { type: 'string', default: '32' },
    seq: { type: 'string', default: '128' },
    threads: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '5' },
    variants: { type: 'string', default: 'fp32' },
    rounds: { type: 'string', default: '1' },
  },
});
const dir = positionals[0] ?? 'models/generated/tinybert-l2';
const batch = Number(values.batch);
const seq = Number(values.seq);
const threads = Number(values.threads);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const variants = values.variants!.split(',').map((v) => v.trim());
for (const v of variants) if (!isOnnxVariant(v)) throw new Error(`unknown variant ${v}`);

const n = batch * seq;
const ids = BigInt64Array.from({ length: n }, (_, i) =>
  BigInt(i % seq === 0 ? 101 : i % seq === seq - 1 ? 102 : 1000 + ((i * 7919) % 28000)),
);
const feeds: Record<string, ort.Tensor> = {
  input_ids: new ort.Tensor('int64', ids, [batch, seq]),
  attention_mask: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [batch, seq]),
  token_type_ids: new ort.Tensor(
    'int64',
    BigInt64Array.from({ length: n }, (_, i) => (i % seq >= seq / 2 ? 1n : 0n)),
    [batch, seq],
  ),
};

const sessions = new Map<string, ort.InferenceSession>();
for (const v of variants) {
  sessions.set(
    v,
    await ort.InferenceSession.create(join(dir, ONNX_VARIANT_FILES[v as keyof typeof ONNX_VARIANT_FILES]), {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    }),
  );
}

async function measure(
  session: ort.InferenceSession,
): Promise<{ pairsPerSec: number; msPerBatch: number; runs: number }> {
  const input = Object.fromEntries(session.inputNames.map((name) => [name, feeds[name]!]));
  for (let i = 0; i < 2; i++) await session.run(input);
  let runs = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000 || runs < 3) {
    await session.run(input);
    runs++;
  }
  const elapsed = (performance.now() - start) / 1000;
  return { pairsPerSec: (runs * batch) / elapsed, msPerBatch: (elapsed / runs) * 1000, runs };
}

const rates = new Map<string, number[]>(variants.map((v) => [v, []]));
for (let round = 1; round <= rounds; round++) {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  for (const v of variants) {
    const r = await measure(sessions.get(v)!);
    rates.get(v)!.push(r.pairsPerSec);
    console.log(
      `round ${round} (load ${load}) ${dir} ${v} (speed/shape model, NOT a relevance model): batch ${batch} × seq ${seq}, intraOpNumThreads ${threads}: ` +
        `${r.pairsPerSec.toFixed(1)} pairs/s, ${r.msPerBatch.toFixed(1)} ms/batch over ${r.runs} batches`,
    );
  }
}
if (variants.length > 1) {
  /** Median; the mean of the two middle values for an even count. */
  const median = (xs: readonly number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const ref = rates.get(variants[0])!;
  for (const v of variants.slice(1)) {
    const ratios = rates.get(v)!.map((x, i) => x / ref[i]);
    console.log(
      `${v} / ${variants[0]}: ${median(ratios).toFixed(2)}× (median of ${rounds} paired rounds: ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
    );
  }
}
for (const s of sessions.values()) await s.release();
