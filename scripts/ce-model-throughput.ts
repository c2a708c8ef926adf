/**
 * Smoke figure: onnxruntime-node CPU throughput of a generated cross-encoder (a SPEED/SHAPE model,
 * random weights, NOT a relevance model) on synthetic full-length rows. One session, fixed batch,
 * back to back; not the issue-3 benchmark (that one lives in bench/ and uses real passages).
 *
 *   npx tsx scripts/ce-model-throughput.ts [modelDir=models/generated/tinybert-l2] [--batch 32] [--seq 128] [--threads 2] [--seconds 5]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    batch: { type: 'string', default: '32' },
    seq: { type: 'string', default: '128' },
    threads: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '5' },
  },
});
const dir = positionals[0] ?? 'models/generated/tinybert-l2';
const batch = Number(values.batch);
const seq = Number(values.seq);
const threads = Number(values.threads);
const seconds = Number(values.seconds);

const session = await ort.InferenceSession.create(join(dir, 'onnx', 'model.onnx'), {
  intraOpNumThreads: threads,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
});
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
const run = async (): Promise<void> => {
  await session.run(Object.fromEntries(session.inputNames.map((name) => [name, feeds[name]!])));
};
for (let i = 0; i < 3; i++) await run();
let runs = 0;
const start = performance.now();
while (performance.now() - start < seconds * 1000) {
  await run();
  runs++;
}
const elapsed = (performance.now() - start) / 1000;
console.log(
  `${dir} (speed/shape model, NOT a relevance model): batch ${batch} × seq ${seq}, intraOpNumThreads ${threads}: ` +
    `${((runs * batch) / elapsed).toFixed(0)} pairs/s, ${((elapsed / runs) * 1000).toFixed(1)} ms/batch over ${runs} batches`,
);
await session.release();
