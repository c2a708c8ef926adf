/**
 * Runs an imported bi-encoder the way the engine does: texts tokenized by the engine's own
 * tokenizer (PairTokenizer.encodeTexts: the single-sequence template, cut to maxLength), rows
 * right-padded per batch, `embeddings` read back.
 */
import type ort from 'onnxruntime-node';
import { PairTokenizer } from '../../src/tiers/cross-encoder/tokenize-pairs.js';
import { type EncodedPair, feedsFor } from './helpers.js';

export function textTokenizer(tokenizerPath: string, maxLength: number): PairTokenizer {
  return PairTokenizer.fromFile({ tokenizerPath, maxLength, truncation: 'longest_first' });
}

/** Token ids and type ids of each text (engine tokenizer). */
export async function encodeTexts(tokenizer: PairTokenizer, texts: readonly string[]): Promise<EncodedPair[]> {
  const enc = await tokenizer.encodeTexts(texts);
  return Array.from(enc.lengths, (n, i) => ({
    ids: Array.from(enc.ids.subarray(enc.offsets[i]!, enc.offsets[i]! + n)),
    typeIds: Array.from(enc.typeIds.subarray(enc.offsets[i]!, enc.offsets[i]! + n)),
  }));
}

/** Embedding rows of encoded texts, `batch` rows per run, each batch padded to its longest row. */
export async function runEmbeddings(
  session: ort.InferenceSession,
  rows: readonly EncodedPair[],
  batch = 16,
  output = 'embeddings',
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < rows.length; i += batch) {
    const chunk = rows.slice(i, i + batch);
    const length = Math.max(...chunk.map((r) => r.ids.length));
    const result = (await session.run(feedsFor(session, chunk, length)))[output]!;
    const width = result.dims[1]!;
    const data = result.data as Float32Array;
    for (let r = 0; r < chunk.length; r++) out.push(data.slice(r * width, (r + 1) * width));
  }
  return out;
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

export function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}
