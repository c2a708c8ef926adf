/** Typed errors of the load generator. */
import { RelevanceGateError } from '../../errors.js';

/** A non-2xx answer. `refused` for 429 (the server shed the request): not an error of the run. */
export class HttpStatusError extends RelevanceGateError {
  readonly status: number;
  readonly refused: boolean;
  constructor(status: number, text: string) {
    super('RG_ERR_HTTP_STATUS', `HTTP ${status}: ${text.slice(0, 200)}`);
    this.status = status;
    this.refused = status === 429;
  }
}
