/**
 * Shared pieces of the generated-model tests: real tokenizer folders, real (query, passage) pairs
 * from scifact, feeds built the way a loader would build them, and rank statistics.
 */
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import { packageRoot } from '../../src/util/package-root.js';
import { loadCollection } from '../cross-encoder/data.js';

export const SHARED_TOKENIZERS = join(packageRoot(), '..', 'shared', 'tokenizers');
export const tokenizerFolder = (name: string): string => join(SHARED_TOKENIZERS, name);

export const SESSION_OPTIONS: ort.InferenceSession.SessionOptions = { intraOpNumThreads: 1, interOpNumThreads: 1 };

export interface EncodedPair {
  readonly ids: readonly number[];
  readonly typeIds: readonly number[];
}

/** `count` scifact pairs: each query with a judged document, then with the next query's document. */
export function scifactPairs(count: number): [string, string][] {
  const data = loadCollection('scifact');
  const judged = [...data.judged.entries()];
  const pairs: [string, string][] = [];
  for (let i = 0; pairs.length < count && i < judged.length; i++) {
    const [qid, docs] = judged[i]!;
    const query = data.queries.get(qid)!;
    pairs.push([query, data.docs.get(docs[0]!)!]);
    const other = judged[(i + 1) % judged.length]![1][0]!;
    if (pairs.length < count) pairs.push([query, data.docs.get(other)!]);
  }
  if (pairs.length < count) throw new Error(`scifact has only ${pairs.length} pairs`);
  return pairs;
}

export async function encodePairs(
  tokenizer: Tokenizer,
  pairs: readonly [string, string][],
  maxLength: number,
): Promise<EncodedPair[]> {
  tokenizer.setTruncation(maxLength);
  return Promise.all(
    pairs.map(async ([q, p]) => {
      const e = await tokenizer.encode(q, p);
      return { ids: e.getIds(), typeIds: e.getTypeIds() };
    }),
  );
}

export interface FeedOptions {
  /** Token id written into padding (the model's pad_token_id). */
  readonly padId?: number;
  /** Values of a `position_ids` input per row: default 0…S−1. */
  readonly positionIds?: (row: number, position: number, rowLength: number) => number;
}

/**
 * Right-pads rows to `length` and builds a feed for every input the session declares, in the
 * declared dtype: ids, mask, token types, position ids, and zeros for any other input.
 */
export function feedsFor(
  session: ort.InferenceSession,
  rows: readonly EncodedPair[],
  length: number,
  options: FeedOptions = {},
): Record<string, ort.Tensor> {
  const b = rows.length;
  const value = (name: string, r: number, i: number): number => {
    const row = rows[r]!;
    const real = i < row.ids.length;
    if (name === 'input_ids') return real ? row.ids[i]! : (options.padId ?? 0);
    if (name === 'attention_mask') return real ? 1 : 0;
    if (name === 'token_type_ids') return real ? row.typeIds[i]! : 0;
    if (name === 'position_ids') return options.positionIds?.(r, i, row.ids.length) ?? i;
    return 0;
  };
  const feeds: Record<string, ort.Tensor> = {};
  for (const meta of session.inputMetadata) {
    const int32 = meta.isTensor && meta.type === 'int32';
    const values = Array.from({ length: b * length }, (_, k) => value(meta.name, Math.floor(k / length), k % length));
    feeds[meta.name] = int32
      ? new ort.Tensor('int32', Int32Array.from(values), [b, length])
      : new ort.Tensor(
          'int64',
          BigInt64Array.from(values, (v) => BigInt(v)),
          [b, length],
        );
  }
  return feeds;
}

/** Logits rows ([b, C]) of a run. */
export async function runLogits(
  session: ort.InferenceSession,
  rows: readonly EncodedPair[],
  length: number,
  options: FeedOptions = {},
): Promise<number[][]> {
  const out = (await session.run(feedsFor(session, rows, length, options))).logits!;
  const width = out.dims[1]!;
  const data = out.data as Float32Array;
  return rows.map((_, r) => Array.from(data.subarray(r * width, (r + 1) * width)));
}

/** Runs rows in batches of `batch`, each padded to its longest row. */
export async function runBatched(
  session: ort.InferenceSession,
  rows: readonly EncodedPair[],
  batch: number,
  options: FeedOptions = {},
): Promise<number[][]> {
  const out: number[][] = [];
  for (let i = 0; i < rows.length; i += batch) {
    const chunk = rows.slice(i, i + batch);
    out.push(...(await runLogits(session, chunk, Math.max(...chunk.map((r) => r.ids.length)), options)));
  }
  return out;
}

function ranks(values: readonly number[]): number[] {
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const result = new Array<number>(values.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
    for (let k = i; k <= j; k++) result[order[k]![1]] = (i + j) / 2;
    i = j + 1;
  }
  return result;
}

/** Spearman rank correlation (Pearson on average ranks). */
export function spearman(a: readonly number[], b: readonly number[]): number {
  const ra = ranks(a);
  const rb = ranks(b);
  const mean = (ra.length - 1) / 2;
  let num = 0;
  let da = 0;
  let db = 0;
  for (let i = 0; i < ra.length; i++) {
    num += (ra[i]! - mean) * (rb[i]! - mean);
    da += (ra[i]! - mean) ** 2;
    db += (rb[i]! - mean) ** 2;
  }
  return num / Math.sqrt(da * db);
}

export function maxAbsDiff(a: readonly number[][], b: readonly number[][]): number {
  if (a.length !== b.length) throw new Error(`row counts differ: ${a.length} vs ${b.length}`);
  let max = 0;
  for (let r = 0; r < a.length; r++) {
    if (a[r]!.length !== b[r]!.length) throw new Error(`row ${r} widths differ`);
    for (let c = 0; c < a[r]!.length; c++) max = Math.max(max, Math.abs(a[r]![c]! - b[r]![c]!));
  }
  return max;
}

export function loadTokenizer(folder: string): Tokenizer {
  return Tokenizer.fromFile(join(folder, 'tokenizer.json'));
}
