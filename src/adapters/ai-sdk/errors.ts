/** Errors of this module. */
import { RelevanceGateError } from '../../errors.js';

/** The provider has no such model (an unknown gate name, or a kind of model it does not offer). */
/** The provider has no gate under the model name the AI SDK asked for. */
export class NoSuchGateModelError extends RelevanceGateError {
  readonly modelId: string;
  readonly modelType: string;
  constructor(modelId: string, modelType: string, message: string) {
    super('RG_ERR_NO_SUCH_MODEL', message);
    this.modelId = modelId;
    this.modelType = modelType;
  }
}
