/**
 * Errors of the embedding tier. Precomputed embeddings a caller passes are checked before anything
 * is scored: a vector of the wrong length, a value that is not a finite number, or a vector from
 * another model is refused with one of the classes below (each extends InvalidArgumentError: it is
 * the caller's input, an HTTP 400). A model folder the tier cannot use is an EmbeddingModelError.
 * Worker-side failures reuse the cross-encoder's classes (ModelFormatError, ModelContractError,
 * InferenceError, TokenizationError): the tier runs on the same worker pool.
 */
import { InvalidArgumentError, RelevanceGateError } from '../../errors.js';

/** A precomputed embedding (a passage's `embedding`, the call's `queryEmbedding`) has the wrong number of values. */
export class EmbeddingDimensionError extends InvalidArgumentError {
  /** Where the vector was: `queryEmbedding` or `passages[i].embedding`. */
  readonly field: string;
  readonly expected: number;
  readonly actual: number;
  constructor(field: string, expected: number, actual: number) {
    super(
      `${field} has ${actual} values but the model's embeddings have ${expected} dimensions`,
      undefined,
      'RG_ERR_EMBEDDING_DIMENSION',
    );
    this.field = field;
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * A precomputed embedding is not a vector the tier can use: not a Float32Array / number array, a
 * value that is not a finite number (NaN, ±Infinity, a string), or the zero vector (no direction).
 */
export class EmbeddingValueError extends InvalidArgumentError {
  readonly field: string;
  constructor(field: string, why: string) {
    super(`${field} ${why}`, undefined, 'RG_ERR_EMBEDDING_VALUE');
    this.field = field;
  }
}

/**
 * Precomputed embeddings name another model than the scorer's (`embeddingModel` of the call or of
 * a passage), or name none: vectors of two models are not comparable, so nothing is scored.
 */
export class EmbeddingModelMismatchError extends InvalidArgumentError {
  /** The scorer's model id (`scorer.modelId`). */
  readonly expected: string;
  /** The id the caller gave; undefined when none was given. */
  readonly actual: string | undefined;
  constructor(field: string, expected: string, actual: string | undefined) {
    super(
      actual === undefined
        ? `${field} is given without the id of the model it came from: pass embeddingModel (the scorer's modelId, "${expected}")`
        : `${field} came from model "${actual}" but this scorer's model is "${expected}": embeddings of different models are not comparable`,
      undefined,
      'RG_ERR_EMBEDDING_MODEL_MISMATCH',
    );
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * The model folder is not a bi-encoder the tier can load: no `relevance-gate-model.json` (the
 * folder `relevance-gate import-model --as bi-encoder` writes), one that does not parse, another
 * `kind`, bad `dimensions` / `maxLength`, a missing ONNX or tokenizer file, or a calibration file
 * that does not parse.
 */
export class EmbeddingModelError extends RelevanceGateError {
  /** The model folder. */
  readonly modelDir: string;
  constructor(modelDir: string, message: string, options?: { cause?: unknown }) {
    super('RG_ERR_EMBEDDING_MODEL', `${modelDir}: ${message}`, options);
    this.modelDir = modelDir;
  }
}
