/** Errors of this module. */
import { RelevanceGateError } from '../../errors.js';

/** The tokenizer files to copy into a model folder are missing or unusable. */
/** The tokenizer files a generated model needs are missing or unreadable. */
export class TokenizerSourceError extends RelevanceGateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RG_ERR_TOKENIZER_SOURCE', message, options);
  }
}
