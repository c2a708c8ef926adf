/**
 * Errors specific to the cross-encoder tier. Worker threads cannot throw class instances across
 * the thread boundary (structured clone keeps only name/message), so workers send a
 * `SerializedError` and the main thread rebuilds the typed error with `reviveError`.
 */
import {
  AbortedError,
  DeadlineExceededError,
  DisposedError,
  InvalidArgumentError,
  ModelFormatError,
  OverloadedError,
  RelevanceGateError,
  UnsupportedModelError,
} from '../../errors.js';

/** The ONNX model does not fit the cross-encoder contract (inputs/outputs); says expected vs found. */
export class ModelContractError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_MODEL_CONTRACT', message, options);
  }
}

/** The requested execution provider (e.g. CUDA) is not available in this onnxruntime build/host. */
export class ExecutionProviderUnavailableError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_EXECUTION_PROVIDER_UNAVAILABLE', message, options);
  }
}

/** Tokenization of a (query, passage) pair failed (e.g. `only_second` with a query longer than max length). */
export class TokenizationError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_TOKENIZATION', message, options);
  }
}

/** Inference failed inside a worker (onnxruntime error, worker crash). */
export class InferenceError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_INFERENCE', message, options);
  }
}

/**
 * An input is larger than the encoder's documented limits (characters per query, per passage, per
 * request; passages per request). Extends InvalidArgumentError (it is the caller's input) with its
 * own code, so an HTTP layer can answer 413 instead of 400.
 */
export class InputLimitError extends InvalidArgumentError {
  /** The option that sets the limit (e.g. `maxPassageChars`). */
  readonly limit: string;
  readonly max: number;
  readonly actual: number;
  constructor(limit: string, max: number, actual: number, what: string) {
    super(
      `${what} is ${actual.toLocaleString('en-US')}, above ${limit} = ${max.toLocaleString('en-US')}`,
      undefined,
      'RG_ERR_INPUT_LIMIT',
    );
    this.limit = limit;
    this.max = max;
    this.actual = actual;
  }
}

/**
 * `variant` names an ONNX file the model folder does not have. Extends InvalidArgumentError (the
 * caller chose the name) with its own code; `available` lists the folder's ONNX files.
 */
export class ModelVariantNotFoundError extends InvalidArgumentError {
  readonly variant: string;
  /** ONNX files of the folder, relative to it (`onnx/…` first). */
  readonly available: readonly string[];
  constructor(dir: string, variant: string, tried: readonly string[], available: readonly string[]) {
    super(
      `no ONNX file for variant "${variant}" in ${dir} (looked for ${tried.join(', ')}); ` +
        `the folder has ${available.length === 0 ? 'no .onnx files' : available.join(', ')}`,
      undefined,
      'RG_ERR_MODEL_VARIANT_NOT_FOUND',
    );
    this.variant = variant;
    this.available = available;
  }
}

export interface SerializedError {
  readonly name: string;
  readonly message: string;
}

export function serializeError(err: unknown): SerializedError {
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { name: 'Error', message: String(err) };
}

/** Rebuilds a typed error sent by a worker; unknown names become InferenceError. */
export function reviveError(err: SerializedError): RelevanceGateError {
  switch (err.name) {
    case 'ModelContractError':
      return new ModelContractError(err.message);
    case 'ExecutionProviderUnavailableError':
      return new ExecutionProviderUnavailableError(err.message);
    case 'TokenizationError':
      return new TokenizationError(err.message);
    case 'InvalidArgumentError':
      return new InvalidArgumentError(err.message);
    case 'ModelFormatError':
      return new ModelFormatError(err.message);
    case 'UnsupportedModelError':
      return new UnsupportedModelError(err.message);
    case 'AbortedError':
      return new AbortedError(err.message);
    case 'DeadlineExceededError':
      return new DeadlineExceededError(err.message);
    case 'OverloadedError':
      return new OverloadedError(err.message);
    case 'DisposedError':
      return new DisposedError(err.message);
    default:
      return new InferenceError(`${err.name}: ${err.message}`);
  }
}
