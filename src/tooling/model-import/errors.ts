/**
 * Errors of the model importer (`importModel`, `relevance-gate import-model`). Each class has its
 * own stable code; all extend ModelImportError, so a caller can catch the importer's refusals as
 * one family and still branch on `code`.
 */
import { RelevanceGateError } from '../../errors.js';

/** Where a refusal names the way out: export the checkpoint to ONNX yourself (docs/models.md). */
export const EXPORT_ROUTE =
  'export it to ONNX instead (`optimum-cli export onnx --model <folder> --task feature-extraction|text-classification <out>`, ' +
  'or torch.onnx.export with inputs input_ids, attention_mask, token_type_ids and output embeddings or logits; docs/models.md, "Bring your own model")';

/** Root of the importer's errors. */
export class ModelImportError extends RelevanceGateError {}

/** The folder lacks a file the import needs: config.json, a tokenizer, or weights. */
export class MissingModelFileError extends ModelImportError {
  /** What is missing: 'config', 'tokenizer' or 'weights'. */
  readonly missing: 'config' | 'tokenizer' | 'weights';
  constructor(missing: 'config' | 'tokenizer' | 'weights', message: string) {
    super('RG_ERR_IMPORT_MISSING_FILE', message);
    this.missing = missing;
  }
}

/**
 * The weights are a pickle (`pytorch_model.bin`) or another format the importer does not read
 * (TensorFlow, Flax): unpickling runs code, so it is refused; the message names the export route.
 */
export class UnsupportedWeightsFormatError extends ModelImportError {
  /** The weight files found, relative to the folder. */
  readonly files: readonly string[];
  constructor(files: readonly string[], message: string) {
    super('RG_ERR_IMPORT_WEIGHTS_FORMAT', message);
    this.files = files;
  }
}

/** A safetensors file is malformed: header length, header JSON, offsets or sizes. */
export class SafetensorsFormatError extends ModelImportError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_SAFETENSORS_FORMAT', message, options);
  }
}

/** config.json is missing fields the graph needs, or holds values that are not sizes. */
export class ModelConfigError extends ModelImportError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_IMPORT_CONFIG', message, options);
  }
}

/** The checkpoint's architecture (model_type, activation, positions, pooling, modules) is not one the importer builds. */
export class UnsupportedArchitectureError extends ModelImportError {
  constructor(message: string) {
    super('RG_ERR_IMPORT_UNSUPPORTED_ARCHITECTURE', message);
  }
}

/** A tensor the graph needs has an element type other than F32, F16 or BF16. */
export class UnsupportedDtypeError extends ModelImportError {
  readonly tensor: string;
  readonly dtype: string;
  constructor(tensor: string, dtype: string, file: string) {
    super(
      'RG_ERR_IMPORT_UNSUPPORTED_DTYPE',
      `${file}: tensor ${tensor} has dtype ${dtype}; the importer reads F32, F16 and BF16 weights (converted to float32)`,
    );
    this.tensor = tensor;
    this.dtype = dtype;
  }
}

/** Tensors the graph needs are not in the weights (names as the checkpoint would spell them). */
export class MissingTensorsError extends ModelImportError {
  readonly tensors: readonly string[];
  constructor(tensors: readonly string[], where: string) {
    super(
      'RG_ERR_IMPORT_MISSING_TENSORS',
      `${where} lacks ${tensors.length} tensor(s) the graph needs: ${listNames(tensors)}`,
    );
    this.tensors = tensors;
  }
}

/** The weights hold tensors the graph does not use and that are not a known unused head or buffer. */
export class UnknownTensorsError extends ModelImportError {
  readonly tensors: readonly string[];
  constructor(tensors: readonly string[], where: string) {
    super(
      'RG_ERR_IMPORT_UNKNOWN_TENSORS',
      `${where} holds ${tensors.length} tensor(s) the graph does not use (a different architecture or extra modules?): ${listNames(tensors)}`,
    );
    this.tensors = tensors;
  }
}

/** A tensor's shape is not the one config.json implies. */
export class TensorShapeError extends ModelImportError {
  readonly tensor: string;
  constructor(tensor: string, found: readonly number[], expected: readonly number[], where: string) {
    super(
      'RG_ERR_IMPORT_TENSOR_SHAPE',
      `${where}: tensor ${tensor} has shape [${found.join(', ')}], config.json implies [${expected.join(', ')}]`,
    );
    this.tensor = tensor;
  }
}

function listNames(names: readonly string[]): string {
  const shown = names.slice(0, 20).join(', ');
  return names.length > 20 ? `${shown}, … (${names.length - 20} more)` : shown;
}
