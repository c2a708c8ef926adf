/**
 * Tokenization for the kserve protocol: the engine tokenizes (query, passage) pairs with the local
 * cross-encoder tier's pair tokenizer (src/tiers/cross-encoder/tokenize-pairs.ts: the same ids,
 * truncation and special tokens the local tier feeds its ONNX session) and sends the ids. The
 * tokenizer module, and with it the optional `tokenizers` package, is loaded at first use so the
 * package root stays free of it.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from '../../errors.js';
import { missingDependencyOf } from '../../util/optional-package.js';
import { modelConfigFields, readConfigJson } from '../cross-encoder/model-config.js';
import type { EncodedPairs } from '../cross-encoder/tokenize-pairs.js';
import { RemoteConfigError } from './errors.js';
import type { TokenTensors } from './kserve-protocol.js';
import type { KserveSettings } from './options.js';

export const KSERVE_FEATURE = 'the kserve remote tier';

/** A loaded pair tokenizer with what the tensors need besides the ids. */
export interface KserveTokenizer {
  /** Tokens per pair at most, special tokens included. */
  readonly maxLength: number;
  /** Id written into padded input_ids slots: config.json pad_token_id, default 0 (as the local tier). */
  readonly padTokenId: number;
  encode(query: string, passages: readonly string[]): Promise<EncodedPairs>;
}

/** The tokenizer file of `dir`: tokenizer.json, else a WordPiece vocab.txt. Throws RemoteConfigError. */
export function tokenizerFileIn(dir: string): string {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new RemoteConfigError(`createRemoteScorer: tokenizerDir ${dir} does not exist`);
  }
  if (!isDir) throw new RemoteConfigError(`createRemoteScorer: tokenizerDir ${dir} is not a folder`);
  for (const name of ['tokenizer.json', 'vocab.txt']) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  throw new RemoteConfigError(`createRemoteScorer: no tokenizer.json or vocab.txt in tokenizerDir ${dir}`);
}

/** Loads the pair tokenizer of `settings.tokenizerDir` with the local tier's length rules. */
export async function loadKserveTokenizer(settings: KserveSettings): Promise<KserveTokenizer> {
  let module: typeof import('../cross-encoder/tokenize-pairs.js');
  try {
    module = await import('../cross-encoder/tokenize-pairs.js');
  } catch (error) {
    throw missingDependencyOf(error, ['tokenizers'], KSERVE_FEATURE);
  }
  const dir = settings.tokenizerDir;
  const tokenizerPath = tokenizerFileIn(dir);
  const inDir = (name: string): string | null => (existsSync(join(dir, name)) ? join(dir, name) : null);
  const configPath = inDir('config.json');
  let maxLength: number;
  try {
    maxLength = module.resolveMaxLength(
      settings.maxLength,
      module.readModelLengthLimits(configPath, inDir('tokenizer_config.json')),
    );
  } catch (error) {
    if (error instanceof InvalidArgumentError && !(error instanceof RemoteConfigError))
      throw new RemoteConfigError(`createRemoteScorer: ${error.message}`);
    throw error;
  }
  const padTokenId = modelConfigFields(readConfigJson(configPath)).padTokenId ?? 0;
  const tokenizer = module.PairTokenizer.fromFile({ tokenizerPath, maxLength, truncation: settings.truncation });
  return { maxLength, padTokenId, encode: (query, passages) => tokenizer.encodePairs(query, passages) };
}

/**
 * The tensors of pairs [start, end): padded to the longest pair of the batch (as the local tier's
 * batches are) or to the model's fixed `sequence`; pads get padTokenId, mask 0 and type id 0.
 */
export function batchTensors(
  encoded: EncodedPairs,
  start: number,
  end: number,
  padTokenId: number,
  fixedSequence: number | undefined,
): TokenTensors {
  const rows = end - start;
  let sequence = 0;
  for (let i = start; i < end; i++) sequence = Math.max(sequence, encoded.lengths[i]);
  if (fixedSequence !== undefined) sequence = fixedSequence;
  const ids = new Int32Array(rows * sequence);
  if (padTokenId !== 0) ids.fill(padTokenId);
  const mask = new Int32Array(rows * sequence);
  const typeIds = new Int32Array(rows * sequence);
  for (let r = 0; r < rows; r++) {
    const i = start + r;
    const from = encoded.offsets[i];
    const n = encoded.lengths[i];
    ids.set(encoded.ids.subarray(from, from + n), r * sequence);
    typeIds.set(encoded.typeIds.subarray(from, from + n), r * sequence);
    mask.fill(1, r * sequence, r * sequence + n);
  }
  return { rows, sequence, ids, mask, typeIds };
}
