/**
 * Entry of the embedding tier. `createEmbeddingScorer` loads the tier's implementation (and with
 * it tokenizers and the workers' onnxruntime-node) on first use, so the package root costs nothing
 * for users of other tiers, and names the missing package when one is not installed.
 */
import { assertInstalled, missingDependencyOf } from '../../util/optional-package.js';
import type { EmbeddingScorer, EmbeddingScorerOptions } from './types.js';

const FEATURE = 'the embedding tier';
const PEERS = ['onnxruntime-node', 'tokenizers'] as const;
const ORT_HINT = 'on a machine without network access to its CUDA download, install with ONNXRUNTIME_NODE_INSTALL=skip';

/**
 * Starts a bi-encoder (a folder of `relevance-gate import-model --as bi-encoder`) on a worker pool
 * behind the cross-request batcher, as a `Scorer` with signals `relevant` and `similarity` plus
 * `embed`. Resolves once every worker loaded and probed the model. See docs/embedding.md.
 */
export async function createEmbeddingScorer(options: EmbeddingScorerOptions): Promise<EmbeddingScorer> {
  assertInstalled('onnxruntime-node', FEATURE, ORT_HINT);
  assertInstalled('tokenizers', FEATURE);
  let implementation: typeof import('./embedding-scorer.js');
  try {
    implementation = await import('./embedding-scorer.js');
  } catch (err) {
    throw missingDependencyOf(err, PEERS, FEATURE);
  }
  return implementation.createEmbeddingScorer(options);
}

export {
  EmbeddingDimensionError,
  EmbeddingValueError,
  EmbeddingModelMismatchError,
  EmbeddingModelError,
} from './errors.js';
export { EMBEDDING_TIER, SIMILARITY } from './types.js';
export type {
  EmbeddingScorer,
  EmbeddingScorerOptions,
  EmbeddingScoreOptions,
  EmbedOptions,
  EmbeddingScorerInfo,
  EmbeddingScorerStats,
  EmbeddingCalibrationSource,
} from './types.js';
export type { EmbeddingInput } from './vectors.js';
export type { VectorCacheStats } from './vector-cache.js';
export { DEFAULT_EMBEDDING_CALIBRATION } from './calibration.js';
export { CALIBRATION_FILE as EMBEDDING_CALIBRATION_FILE, MODEL_MANIFEST_FILE } from './model-folder.js';
