/**
 * Typed errors shared by every module. Each class carries its own stable `code` (`RG_ERR_*`, the
 * project's prefix, one per class, given to the constructor of its parent) so callers (and the HTTP
 * layer) can branch without parsing messages. Modules add their own subclasses in their
 * `errors.ts`, always extending RelevanceGateError.
 */
export class RelevanceGateError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A caller passed something malformed (wrong type, size, range, duplicate id, ...). */
export class InvalidArgumentError extends RelevanceGateError {
  /** `code`: a subclass's own code (a refinement of an invalid argument). */
  constructor(message: string, options?: { cause?: unknown }, code = 'RG_ERR_INVALID_ARGUMENT') {
    super(code, message, options);
  }
}

/** The native addon could not be loaded (not built, or built for another Node ABI). */
export class NativeAddonError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_NATIVE_ADDON', message, options);
  }
}

/** A model file is corrupt, truncated, or not in the format it claims to be. */
export class ModelFormatError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_MODEL_FORMAT', message, options);
  }
}

/** A model is well-formed but uses something this engine refuses (objective, booster, split type, schema). */
export class UnsupportedModelError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_UNSUPPORTED_MODEL', message, options);
  }
}

/** An object was used after dispose()/close(). */
export class DisposedError extends RelevanceGateError {
  constructor(what: string) {
    super('RG_ERR_DISPOSED', `${what} has been disposed`);
  }
}

/** The caller's AbortSignal fired before the work finished. */
export class AbortedError extends RelevanceGateError {
  constructor(message = 'the operation was aborted', options?: { cause?: unknown }) {
    super('RG_ERR_ABORTED', message, options);
  }
}

/** The request's deadline passed before the work finished. */
export class DeadlineExceededError extends RelevanceGateError {
  constructor(message = 'the deadline passed before the work finished') {
    super('RG_ERR_DEADLINE_EXCEEDED', message);
  }
}

/** A bounded queue is full; the work was refused instead of queued without bound. */
export class OverloadedError extends RelevanceGateError {
  constructor(message: string) {
    super('RG_ERR_OVERLOADED', message);
  }
}

/** A feature needs an optional package that is not installed; the message names the install command. */
export class MissingDependencyError extends RelevanceGateError {
  readonly packageName: string;
  constructor(packageName: string, feature: string, hint = '', options?: { cause?: unknown }) {
    super(
      'RG_ERR_MISSING_DEPENDENCY',
      `${feature} needs the package '${packageName}', which is not installed: run \`npm install ${packageName}\`${hint ? ` (${hint})` : ''}`,
      options,
    );
    this.packageName = packageName;
  }
}
