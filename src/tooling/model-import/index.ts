/**
 * The model importer: a Hugging Face folder with safetensors weights → the engine's ONNX model
 * folder (bi-encoder or cross-encoder), built by the model generator's own graph builder with the
 * checkpoint's tensors. Exported from the `relevance-gate/models` subpath. docs/models.md.
 */
export {
  importModel,
  IMPORTER_VERSION,
  IMPORTED_MODEL_FORMAT,
  IMPORTED_MODEL_FILE,
  IMPORTED_MODEL_INPUTS,
  IMPORTED_ONNX_FILES,
  HEAD_FILE,
  PROVENANCE_FILE,
  type ImportModelOptions,
  type ImportModelResult,
  type ImportedModelDescriptor,
  type ImportedHead,
  type FileDigest,
} from './import-model.js';
export { IMPORTED_MODEL_KINDS, EMBEDDINGS_OUTPUT, LOGITS_OUTPUT, type ImportedModelKind } from './graph.js';
export { POOLING_MODES, type PoolingMode } from './hf-folder.js';
export { IMPORTABLE_MODEL_TYPES } from './architecture.js';
export {
  readSafetensors,
  parseSafetensors,
  encodeSafetensors,
  tensorAsFloat32,
  type SafetensorsFile,
  type SafetensorsTensor,
  type Float32TensorEntry,
} from './safetensors.js';
export {
  ModelImportError,
  MissingModelFileError,
  UnsupportedWeightsFormatError,
  SafetensorsFormatError,
  ModelConfigError,
  UnsupportedArchitectureError,
  UnsupportedDtypeError,
  MissingTensorsError,
  UnknownTensorsError,
  TensorShapeError,
} from './errors.js';
