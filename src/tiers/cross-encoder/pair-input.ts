/**
 * What the model reads for a (query, passage) pair: `query-passage` (a reranker: the tokenizer's
 * pair template with the query first), `passage-query` (an NLI model: premise = passage,
 * hypothesis = query) or `passage` (a sequence classifier such as a prompt-injection detector:
 * the passage alone, with the tokenizer's single-sequence template).
 */
import type { Encoding } from 'tokenizers';
import { InvalidArgumentError } from '../../errors.js';

/** Token ids of several sequences, concatenated (the shape of tokenize-pairs' EncodedPairs). */
export interface PackedEncodings {
  readonly ids: Int32Array;
  readonly typeIds: Int32Array;
  readonly lengths: Int32Array;
  readonly offsets: Int32Array;
}

export type PairInput = 'query-passage' | 'passage-query' | 'passage';
export const PAIR_INPUTS: readonly PairInput[] = ['query-passage', 'passage-query', 'passage'];
export const DEFAULT_PAIR_INPUT: PairInput = 'query-passage';

export function resolvePairInput(value: unknown): PairInput {
  if (value === undefined) return DEFAULT_PAIR_INPUT;
  if (typeof value !== 'string' || !(PAIR_INPUTS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`pairInput must be one of ${PAIR_INPUTS.join(', ')}; got ${String(value)}`);
  }
  return value as PairInput;
}

/** Packs encodings (one per passage) for transfer. */
export function packEncodings(encodings: readonly Encoding[]): PackedEncodings {
  const n = encodings.length;
  const lengths = new Int32Array(n);
  const offsets = new Int32Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const len = encodings[i].getLength();
    lengths[i] = len;
    offsets[i] = total;
    total += len;
  }
  const ids = new Int32Array(total);
  const typeIds = new Int32Array(total);
  for (let i = 0; i < n; i++) {
    ids.set(encodings[i].getIds(), offsets[i]);
    typeIds.set(encodings[i].getTypeIds(), offsets[i]);
  }
  return { ids, typeIds, lengths, offsets };
}
