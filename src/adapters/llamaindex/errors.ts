/** Errors of the LlamaIndex adapter. Both refine InvalidArgumentError, so callers may branch on either. */
import { InvalidArgumentError } from '../../errors.js';

/** postprocessNodes got no query, or a multi-modal query without a text part: the gate scores text pairs. */
export class MissingQueryError extends InvalidArgumentError {
  constructor(message: string) {
    super(message, undefined, 'RG_ERR_MISSING_QUERY');
  }
}

/** An entry of the nodes is not a NodeWithScore whose node has LlamaIndex's getContent and clone. */
export class InvalidNodeError extends InvalidArgumentError {
  /** Position of the entry in the caller's nodes. */
  readonly index: number;
  constructor(index: number, message: string) {
    super(`nodes[${index}] ${message}`, undefined, 'RG_ERR_INVALID_NODE');
    this.index = index;
  }
}
