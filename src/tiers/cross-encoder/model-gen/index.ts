/**
 * Generator of BERT-architecture ONNX cross-encoders with seeded random weights: SPEED/SHAPE
 * models for tests and benchmarks, NOT relevance models.
 */
export {
  writeCrossEncoderModelDir,
  defaultTokenizerJsonPath,
  TokenizerSourceError,
  type WriteCrossEncoderModelDirOptions,
  type CrossEncoderModelDirInfo,
} from './write-model-dir.js';
export {
  buildCrossEncoderOnnx,
  DEFAULT_MODEL_SEED,
  ONNX_OPSET,
  ONNX_IR_VERSION,
  type BuildOnnxOptions,
} from './bert-onnx.js';
export {
  CROSS_ENCODER_PRESETS,
  BENCHMARK_PRESETS,
  SPEED_SHAPE_NOTICE,
  resolveCrossEncoderSpec,
  isCrossEncoderPresetName,
  countParameters,
  type CrossEncoderModelSpec,
  type CrossEncoderOutputSpec,
  type CrossEncoderDefect,
  type CrossEncoderPresetName,
} from './model-spec.js';
