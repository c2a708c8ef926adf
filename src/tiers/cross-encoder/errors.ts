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
    super('ERR_MODEL_CONTRACT', message, options);
  }
}

/** The requested execution provider (e.g. CUDA) is not available in this onnxruntime build/host. */
export class ExecutionProviderUnavailableError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_EXECUTION_PROVIDER_UNAVAILABLE', message, options);
  }
}

/** Tokenization of a (query, passage) pair failed (e.g. `only_second` with a query longer than max length). */
export class TokenizationError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_TOKENIZATION', message, options);
  }
}

/** Inference failed inside a worker (onnxruntime error, worker crash). */
export class InferenceError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_INFERENCE', message, options);
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
