/**
 * Checks the cross-encoder tier's CUDA path and measures it against the CPU, on the MiniLM-L6
 * shape (a generated SPEED/SHAPE model: seeded random weights, NOT a relevance model) with real
 * passages from ../shared/data, 20 per request.
 *
 *  1. loads the tier with `executionProvider: 'cuda'`; when CUDA is unavailable the tier's
 *     ExecutionProviderUnavailableError is printed with what to install (docs/cuda.md);
 *  2. loads it on the CPU;
 *  3. scores the same requests on both (max |Δ logit|, Spearman: the GPU must compute the same model);
 *  4. closed loops at each --concurrency on both: pairs/s, p50 and p99 request latency.
 *
 * Exit status: 0 = CUDA measured; 2 = CUDA unavailable (CPU figures still printed unless
 * --require-cuda); 1 = any other failure.
 *
 *   npx tsx scripts/cuda-check.ts [--concurrency 1,8,32] [--duration 10] [--cuda-workers 2]
 *     [--cpu-workers N] [--max-batch-tokens 16384] [--requests 120] [--require-cuda]
 */
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { closedLoop, ensureBenchModel, spearman } from '../bench/cross-encoder-lib.js';
import { createCrossEncoder, type CrossEncoder } from '../src/tiers/cross-encoder/cross-encoder.js';
import { ExecutionProviderUnavailableError } from '../src/tiers/cross-encoder/errors.js';
import { SPEED_SHAPE_NOTICE } from '../src/tooling/model-gen/index.js';
import { realRequests } from '../test/cross-encoder/data.js';

const { values: args } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '1,8,32' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    'cuda-workers': { type: 'string', default: '2' },
    'cpu-workers': { type: 'string' },
    'max-batch-tokens': { type: 'string' },
    requests: { type: 'string', default: '120' },
    collections: { type: 'string', default: 'cranfield,scifact,nfcorpus' },
    'require-cuda': { type: 'boolean', default: false },
  },
});

const num = (s: string | undefined) => (s === undefined ? undefined : Number(s));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

async function open(dir: string, executionProvider: 'cpu' | 'cuda'): Promise<CrossEncoder> {
  return createCrossEncoder({
    modelDir: dir,
    executionProvider,
    workers: num(executionProvider === 'cuda' ? args['cuda-workers'] : args['cpu-workers']),
    maxBatchTokens: num(args['max-batch-tokens']),
    maxPendingPairs: 100_000,
  });
}

function explainUnavailable(err: ExecutionProviderUnavailableError): string {
  return [
    `CUDA unavailable: ${err.code}: ${err.message}`,
    'What to check (docs/cuda.md):',
    '  - linux x64 with an NVIDIA GPU and driver (nvidia-smi works);',
    '  - onnxruntime-node installed WITH its CUDA binaries: `npm install onnxruntime-node --onnxruntime-node-install=cuda12`',
    '    (or ONNXRUNTIME_NODE_INSTALL=cuda12); without them node_modules/onnxruntime-node/bin/napi-v6/linux/x64/',
    '    has no libonnxruntime_providers_cuda.so;',
    '  - CUDA 12.x runtime libraries and cuDNN 9.x on the loader path (LD_LIBRARY_PATH).',
  ].join('\n');
}

async function main(): Promise<number> {
  console.log(`cuda-check: MiniLM-L6 shape (${SPEED_SHAPE_NOTICE})`);
  console.log(`cores ${availableParallelism()}, load average ${load()}`);
  const { dir, shape } = await ensureBenchModel('bert');
  console.log(`model: ${shape} (${dir})`);

  let cuda: CrossEncoder | null = null;
  let unavailable: ExecutionProviderUnavailableError | null = null;
  try {
    cuda = await open(dir, 'cuda');
    console.log(`cuda: loaded, ${cuda.info.workers} worker(s), execution provider ${cuda.info.executionProvider}`);
  } catch (err) {
    if (!(err instanceof ExecutionProviderUnavailableError)) throw err;
    unavailable = err;
    console.log(explainUnavailable(err));
    if (args['require-cuda']) return 2;
  }

  const cpu = await open(dir, 'cpu');
  console.log(`cpu: loaded, ${cpu.info.workers} worker(s) × ${cpu.info.intraOpThreads} intra-op thread(s)`);
  const requests = realRequests(Number(args.requests), 20, args.collections!.split(','));
  try {
    if (cuda) {
      const x: number[] = [];
      const y: number[] = [];
      for (const r of requests.slice(0, 10)) {
        const [a, b] = [await cpu.score(r.query, r.passages), await cuda.score(r.query, r.passages)];
        x.push(...a.logits);
        y.push(...b.logits);
      }
      let maxDelta = 0;
      for (let i = 0; i < x.length; i++) maxDelta = Math.max(maxDelta, Math.abs(x[i] - y[i]));
      console.log(
        `cuda vs cpu on ${x.length} real pairs: max |Δ logit| ${maxDelta.toExponential(2)}, Spearman ${spearman(x, y).toFixed(5)}`,
      );
    }
    const rows: string[] = [];
    for (const c of args.concurrency!.split(',').map(Number)) {
      for (const [name, ce] of [
        ['cpu', cpu],
        ['cuda', cuda],
      ] as const) {
        if (!ce) continue;
        const r = await closedLoop(
          requests,
          c,
          (q) => ce.score(q.query, q.passages),
          Number(args.duration) * 1000,
          Number(args.warmup) * 1000,
        );
        const line = `| ${name} | ${c} | ${r.pairsPerSec.toFixed(1)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.eventLoopP99Ms.toFixed(1)} |`;
        console.log(line);
        rows.push(line);
      }
    }
    console.log(`\nload average after: ${load()}`);
    console.log('| provider | concurrency | pairs/s | p50 ms | p99 ms | event-loop p99 ms |');
    console.log('|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
  } finally {
    await cpu.close();
    await cuda?.close();
  }
  if (unavailable) {
    console.log('\nCUDA was not measured (see above); CPU figures only.');
    return 2;
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
