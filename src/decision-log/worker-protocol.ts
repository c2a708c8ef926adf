/** Messages between the decision log (log.ts) and its writer thread (log-worker.ts). */
import type { PackedBatch } from './packed.js';

export interface LogWorkerData {
  readonly dir: string;
  readonly maxFileBytes: number;
  readonly maxFiles: number;
  readonly retryMs: number;
  readonly includeQuery: boolean;
  /** Send each written line back (the log keeps a window for the inspector). */
  readonly window: boolean;
}

export type ToLogWorker =
  | { readonly t: 'batch'; readonly batch: PackedBatch }
  | { readonly t: 'flush'; readonly id: number }
  | { readonly t: 'close'; readonly id: number };

export type FromLogWorker =
  | {
      readonly t: 'written';
      /** Records of the batch this answers; written + writeErrors + buildErrors of them. */
      readonly records: number;
      readonly written: number;
      readonly bytes: number;
      readonly writeErrors: number;
      readonly buildErrors: number;
      readonly files: number;
      readonly lastError: string | null;
      /** The batch's lines when the log keeps a window, else empty. */
      readonly lines: ReadonlyArray<{ readonly policyHash: string; readonly line: string }>;
    }
  | { readonly t: 'flushed'; readonly id: number }
  | { readonly t: 'closed'; readonly id: number };
