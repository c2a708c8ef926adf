/**
 * Splitting one call's passages into requests no larger than the backend accepts, and merging the
 * answers back in input order. The cap starts at maxBatch and is learned down: a 413 or 422 answer
 * to a batch of several passages lowers the cap to the limit the refusal names, else halves it
 * (kept for later calls, so the refusal is paid once), and the batch is sent again as smaller ones. At most `concurrency` requests are in flight;
 * the first failure cancels the others and is the call's error.
 */
import { RemoteBatchRefusedError } from './errors.js';
import type { RemoteProtocol } from './types.js';

/** What one batch request came back with. */
export type BatchOutcome =
  | { readonly kind: 'ok'; readonly scores: Float64Array }
  | { readonly kind: 'too-large'; readonly status: number; readonly message: string };

/** Sends passages [start, end) under `signal`; throws a typed error for anything but ok / too-large. */
export type SendBatch = (start: number, end: number, signal: AbortSignal) => Promise<BatchOutcome>;

/** The learned per-request cap, shared by the calls of one scorer. */
export interface BatchCap {
  current: number;
  /** Times a refusal halved it. */
  shrinks: number;
}

export async function scoreInBatches(
  count: number,
  cap: BatchCap,
  concurrency: number,
  protocol: RemoteProtocol,
  callerSignal: AbortSignal | undefined,
  send: SendBatch,
): Promise<Float64Array> {
  const out = new Float64Array(count);
  const queue: Array<[number, number]> = [];
  const enqueue = (start: number, end: number): void => {
    for (let s = start; s < end; s += cap.current) queue.push([s, Math.min(end, s + cap.current)]);
  };
  enqueue(0, count);
  // One controller for the call's requests: the caller's abort and a sibling's failure stop them all.
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', onAbort, { once: true });
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined) {
      const next = queue.shift();
      if (next === undefined) return;
      const [start, end] = next;
      // The cap may have shrunk since this range was queued.
      if (end - start > cap.current) {
        enqueue(start, end);
        continue;
      }
      let outcome: BatchOutcome;
      try {
        outcome = await send(start, end, controller.signal);
      } catch (error) {
        failure ??= { error };
        controller.abort();
        return;
      }
      if (outcome.kind === 'ok') {
        out.set(outcome.scores, start);
        continue;
      }
      const size = end - start;
      if (size === 1) {
        failure ??= {
          error: new RemoteBatchRefusedError(
            `${protocol} backend refused a single passage (${outcome.status}): ${outcome.message}`,
            protocol,
            outcome.status,
          ),
        };
        controller.abort();
        return;
      }
      // The backend's own limit when its message names one, else half the batch.
      const hinted = batchLimitIn(outcome.message);
      const smaller = hinted !== undefined && hinted < size ? hinted : Math.max(1, Math.floor(size / 2));
      if (smaller < cap.current) {
        cap.current = smaller;
        cap.shrinks++;
      }
      enqueue(start, end);
    }
  };
  try {
    // Workers start as work appears: a re-split batch may need more of them than the first plan.
    const running = new Set<Promise<void>>();
    while (failure === undefined && (queue.length > 0 || running.size > 0)) {
      while (queue.length > 0 && running.size < concurrency) {
        const w: Promise<void> = worker().finally(() => running.delete(w));
        running.add(w);
      }
      await Promise.race(running);
    }
    await Promise.all(running);
  } finally {
    callerSignal?.removeEventListener('abort', onAbort);
  }
  if (failure !== undefined) throw failure.error;
  return out;
}

/**
 * The per-request limit a refusal names: TEI's "batch size 40 > maximum allowed batch size 32",
 * `relevance-gate serve`'s "too many texts: 40 > the limit of 32 per request", Triton's "inference
 * request batch-size must be <= 8 for 'model'". Undefined otherwise.
 */
export function batchLimitIn(message: string): number | undefined {
  const m = /maximum allowed batch size (\d+)|the limit of (\d+) per request|batch-size must be <= (\d+)/.exec(message);
  if (m === null) return undefined;
  const n = Number(m[1] ?? m[2] ?? m[3]);
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}
