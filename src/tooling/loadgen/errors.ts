/** Typed errors of the load generator. */
import { RelevanceGateError } from '../../errors.js';

/** A non-2xx answer. `refused` for 429 (the server shed the request): not an error of the run. */
export class HttpStatusError extends RelevanceGateError {
  readonly status: number;
  readonly refused: boolean;
  /** The server's own time for the request (Server-Timing `total`), ms, when it sent one. */
  readonly serverMs: number | undefined;
  /** From the send to the request's last byte handed to the OS, ms. */
  readonly writeMs: number | undefined;
  constructor(status: number, text: string, timing: { serverMs?: number; writeMs?: number } = {}) {
    super('RG_ERR_HTTP_STATUS', `HTTP ${status}: ${text.slice(0, 200)}`);
    this.status = status;
    this.refused = status === 429;
    this.serverMs = timing.serverMs;
    this.writeMs = timing.writeMs;
  }
}
