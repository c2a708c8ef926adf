/**
 * The `relevance-gate/models` entry point.
 *
 * Generator of ONNX cross-encoders / sequence classifiers with seeded random weights, in the
 * families people deploy (BERT, RoBERTa / XLM-RoBERTa, ModernBERT, DeBERTa-v2/v3), with their
 * real input/output contracts and file layouts: SPEED/SHAPE models for tests and benchmarks,
 * NOT relevance models (random weights, scores mean nothing).
 *
 * The model importer (`importModel`, src/tooling/model-import/): a Hugging Face folder with
 * safetensors weights → the engine's bi-encoder or cross-encoder folder, real weights, built by
 * the same graph builder.
 */
export {
  writeCrossEncoderModelDir,
  defaultTokenizerJsonPath,
  TokenizerSourceError,
  ONNX_VARIANT_FILES,
  ONNX_VARIANTS,
  TOKENIZER_FILES,
  isOnnxVariant,
  type OnnxVariant,
  type TokenizerLayout,
  type WriteCrossEncoderModelDirOptions,
  type CrossEncoderModelDirInfo,
} from './write-model-dir.js';
export {
  buildCrossEncoderOnnx,
  buildCrossEncoderModelProto,
  DEFAULT_MODEL_SEED,
  ONNX_OPSET,
  ONNX_IR_VERSION,
  type BuildOnnxOptions,
} from './bert-onnx.js';
export { quantizeDynamic, type QuantizedWeightType, type QuantizeReport, type QuantizeOptions } from './quantize.js';
export { encodeOnnxModel, decodeOnnxModel, type OnnxModel } from './onnx-proto.js';
export {
  CROSS_ENCODER_PRESETS,
  BENCHMARK_PRESETS,
  SPEED_SHAPE_NOTICE,
  MODEL_FAMILIES,
  POSITION_IDS,
  resolveCrossEncoderSpec,
  applyShapeOptions,
  isCrossEncoderPresetName,
  isFamilyPresetName,
  isModelPresetName,
  modelPresetNames,
  countParameters,
  inputNamesOf,
  inputDtypeOf,
  labelNamesOf,
  padTokenIdOf,
  type CrossEncoderModelSpec,
  type CrossEncoderOutputSpec,
  type CrossEncoderDefect,
  type CrossEncoderPresetName,
  type ModelPresetName,
  type ModelFamily,
  type ModelShapeOptions,
  type InputDtype,
  type ProblemType,
} from './model-spec.js';
export {
  FAMILY_PRESETS,
  HEADS,
  PAIRED_TOKENIZER_FOLDER,
  isHeadName,
  type FamilyPresetName,
  type HeadName,
  type HeadSpec,
} from './family-presets.js';
export { FAMILY_MODEL_TYPES } from './config-json.js';
export * from '../model-import/index.js';
