/**
 * Entry of the cross-encoder tier. `createCrossEncoder` loads the tier's implementation (and with
 * it tokenizers and the workers' onnxruntime-node) on first use, so that the package root
 * costs nothing for users of other tiers, and names the missing package when one is not installed.
 */
import { assertInstalled, missingDependencyOf } from '../../util/optional-package.js';
import type { CrossEncoder, CrossEncoderOptions } from './cross-encoder.js';

const FEATURE = 'the cross-encoder tier';
const PEERS = ['onnxruntime-node', 'tokenizers'] as const;
const ORT_HINT = 'on a machine without network access to its CUDA download, install with ONNXRUNTIME_NODE_INSTALL=skip';

/** Starts the tier's worker pool on a Hugging Face–style ONNX cross-encoder folder. */
export async function createCrossEncoder(options: CrossEncoderOptions = {}): Promise<CrossEncoder> {
  assertInstalled('onnxruntime-node', FEATURE, ORT_HINT);
  assertInstalled('tokenizers', FEATURE);
  let implementation: typeof import('./cross-encoder.js');
  try {
    implementation = await import('./cross-encoder.js');
  } catch (err) {
    throw missingDependencyOf(err, PEERS, FEATURE);
  }
  return implementation.createCrossEncoder(options);
}

export { createCrossEncoderScorer } from './scorer.js';
export { SHIPPED_CROSS_ENCODER_MODEL_DIR } from './shipped-model.js';
export {
  ModelContractError,
  ExecutionProviderUnavailableError,
  TokenizationError,
  InferenceError,
  InputLimitError,
  ModelVariantNotFoundError,
} from './errors.js';
export type {
  CrossEncoder,
  CrossEncoderOptions,
  CrossEncoderScores,
  CrossEncoderScoreOptions,
  CrossEncoderSignals,
  CrossEncoderInfo,
  CrossEncoderStats,
  LongPassages,
} from './cross-encoder.js';
export type { WorkerPoolStats as CrossEncoderWorkerStats } from './worker-pool.js';
export type { TruncationMode, PairChunking } from './tokenize-pairs.js';
export type { PairInput } from './pair-input.js';
