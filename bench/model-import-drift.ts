/**
 * int8 drift of an imported model: the fp32 and int8 graphs of the imported all-MiniLM-L6-v2
 * (models/.cache/all-minilm-l6-v2/, written by scripts/fetch-reference-models.sh) against the
 * float64 reference embeddings of the parity set (python/reference_embed.py) and against each
 * other, plus the cross-encoder on the same encoder (logits vs python/reference_cross.py).
 *
 *   npx tsx bench/model-import-drift.ts [--limit N] [--threads 2] [--json out.json]
 *
 * Per graph: min / mean cosine and max |Δ| per component over the texts, the worst text, and the
 * Spearman correlation of query–passage cosine similarities over the parity pairs (how much the
 * ranking a retriever would produce moves); for the cross-encoder, max |Δ logit| and Spearman.
 * The nDCG@10 change on SciFact / NFCorpus comes from the embedding tier's eval.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import { cosine, encodeTexts, maxAbs, runEmbeddings, textTokenizer } from '../test/models/embed.js';
import { type EncodedPair, spearman } from '../test/models/helpers.js';
import {
  EMBEDDINGS_PREFIX,
  LOGITS_PREFIX,
  MINILM_BI,
  MINILM_CROSS,
  missingParityFiles,
  PARITY_PAIRS,
  PARITY_TEXTS,
  readJsonl,
  readReferenceRows,
} from '../test/models/reference-outputs.js';

const { values: args } = parseArgs({
  options: {
    limit: { type: 'string' },
    threads: { type: 'string', default: '2' },
    json: { type: 'string' },
  },
});

const missing = missingParityFiles();
if (missing.length > 0) {
  console.error(`model-import-drift: missing ${missing.join(', ')}; run bash scripts/fetch-reference-models.sh`);
  process.exit(1);
}
const threads = Number(args.threads);
const MAX_LENGTH = 256;

async function embed(
  path: string,
  rows: readonly EncodedPair[],
  output = 'embeddings',
): Promise<{ out: Float32Array[]; msPerText: number }> {
  const session = await ort.InferenceSession.create(path, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  try {
    const order = rows.map((_, i) => i).sort((a, b) => rows[a]!.ids.length - rows[b]!.ids.length);
    const started = performance.now();
    const got = await runEmbeddings(
      session,
      order.map((i) => rows[i]!),
      32,
      output,
    );
    const ms = performance.now() - started;
    const out = new Array<Float32Array>(rows.length);
    order.forEach((i, k) => {
      out[i] = got[k]!;
    });
    return { out, msPerText: ms / rows.length };
  } finally {
    await session.release();
  }
}

interface Row {
  graph: string;
  against: string;
  texts: number;
  minCosine: number;
  meanCosine: number;
  maxDelta: number;
  worst: string;
}

function compare(graph: string, against: string, ids: readonly string[], a: Float32Array[], b: Float32Array[]): Row {
  let min = 1;
  let sum = 0;
  let maxDelta = 0;
  let worst = '';
  for (let i = 0; i < ids.length; i++) {
    const c = cosine(a[i]!, b[i]!);
    sum += c;
    if (c < min || worst === '') [min, worst] = [c, ids[i]!];
    maxDelta = Math.max(maxDelta, maxAbs(a[i]!, b[i]!));
  }
  return { graph, against, texts: ids.length, minCosine: min, meanCosine: sum / ids.length, maxDelta, worst };
}

async function main(): Promise<void> {
  const limit = args.limit === undefined ? Number.POSITIVE_INFINITY : Number(args.limit);
  const texts = readJsonl<{ id: string; text: string }>(PARITY_TEXTS).slice(0, limit);
  const pairs = readJsonl<{ id: string; query: string; passage: string }>(PARITY_PAIRS);
  const reference = readReferenceRows(EMBEDDINGS_PREFIX).rows.slice(0, texts.length);
  const ids = texts.map((t) => t.id);
  const tokenizer = textTokenizer(join(MINILM_BI, 'tokenizer.json'), MAX_LENGTH);
  const rows = await encodeTexts(
    tokenizer,
    texts.map((t) => t.text),
  );
  const fp32 = await embed(join(MINILM_BI, 'onnx', 'model.onnx'), rows);
  const int8 = await embed(join(MINILM_BI, 'onnx', 'model_int8.onnx'), rows);
  const table: Row[] = [
    compare('fp32', 'reference', ids, fp32.out, reference),
    compare('int8', 'reference', ids, int8.out, reference),
    compare('int8', 'fp32', ids, int8.out, fp32.out),
  ];

  // Query–passage similarities of the parity pairs: does int8 move a retriever's ranking?
  const queryRows = await encodeTexts(
    tokenizer,
    pairs.map((p) => p.query),
  );
  const passageRows = await encodeTexts(
    tokenizer,
    pairs.map((p) => p.passage),
  );
  const sims: Record<string, number[]> = {};
  for (const [name, file] of [
    ['fp32', 'model.onnx'],
    ['int8', 'model_int8.onnx'],
  ] as const) {
    const q = (await embed(join(MINILM_BI, 'onnx', file), queryRows)).out;
    const p = (await embed(join(MINILM_BI, 'onnx', file), passageRows)).out;
    sims[name] = q.map((v, i) => cosine(v, p[i]!));
  }

  // Cross-encoder logits on the same encoder, on the reference's own pair tokens (the graph's drift,
  // not the tokenizer's: test/models/minilm-parity.test.ts checks the tokens).
  const logitsFile = readReferenceRows(LOGITS_PREFIX);
  const logitsRef = logitsFile.rows.map((r) => r[0]!);
  const pairRows: EncodedPair[] = pairs.map((_, i) => ({
    ids: logitsFile.meta.token_ids![i]!,
    typeIds: logitsFile.meta.type_ids![i]!,
  }));
  const cross: Record<string, { maxDelta: number; spearman: number }> = {};
  for (const [name, file] of [
    ['fp32', 'model.onnx'],
    ['int8', 'model_int8.onnx'],
  ] as const) {
    const got = await embed(join(MINILM_CROSS, 'onnx', file), pairRows, 'logits');
    const values = got.out.map((r) => r[0]!);
    cross[name] = {
      maxDelta: Math.max(...values.map((v, i) => Math.abs(v - logitsRef[i]!))),
      spearman: spearman(values, logitsRef),
    };
  }

  console.log(
    `all-MiniLM-L6-v2 imported (models/.cache/all-minilm-l6-v2), ${ids.length} parity texts, ${threads} thread(s)`,
  );
  console.log('| graph | against | texts | min cosine | 1 − min cosine | mean cosine | max abs diff | worst text |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of table) {
    console.log(
      `| ${r.graph} | ${r.against} | ${r.texts} | ${r.minCosine.toFixed(6)} | ${(1 - r.minCosine).toExponential(2)} | ` +
        `${r.meanCosine.toFixed(6)} | ${r.maxDelta.toExponential(2)} | ${r.worst} |`,
    );
  }
  console.log(
    `time per text: fp32 ${fp32.msPerText.toFixed(2)} ms, int8 ${int8.msPerText.toFixed(2)} ms (batches of 32, length-sorted)`,
  );
  console.log(
    `query–passage cosine over ${pairs.length} pairs: Spearman int8 vs fp32 ${spearman(sims.int8!, sims.fp32!).toFixed(5)}, ` +
      `max |Δ cosine| ${Math.max(...sims.int8!.map((v, i) => Math.abs(v - sims.fp32![i]!))).toExponential(2)}`,
  );
  for (const [name, c] of Object.entries(cross)) {
    console.log(
      `cross-encoder ${name} vs reference logits (${pairs.length} pairs): max |Δ| ${c.maxDelta.toExponential(2)}, Spearman ${c.spearman.toFixed(5)}`,
    );
  }
  if (args.json !== undefined) {
    await writeFile(
      args.json,
      `${JSON.stringify({ texts: ids.length, threads, table, msPerText: { fp32: fp32.msPerText, int8: int8.msPerText }, cross }, null, 2)}\n`,
    );
  }
}

await main();
