/**
 * Capacity of a scorer tier on this machine: a CLOSED loop of `concurrency` callers, each sending
 * the next workload request as soon as its previous one finished, straight to the tier (no cache,
 * no router), for `seconds`. Pairs per second over the window is the tier's sustainable throughput;
 * enough concurrency keeps every worker busy and the batcher's batches full.
 */
import type { Scorer } from '../../types.js';
import type { Workload } from './workload.js';

export interface CapacityResult {
  readonly pairsPerSec: number;
  readonly requestsPerSec: number;
  readonly requests: number;
  readonly pairs: number;
  readonly seconds: number;
  readonly concurrency: number;
  readonly errors: number;
}

export async function measureCapacity(
  scorer: Scorer,
  workload: Workload,
  seconds: number,
  concurrency: number,
): Promise<CapacityResult> {
  const start = performance.now();
  const stopAt = start + seconds * 1000;
  let requests = 0;
  let pairs = 0;
  let errors = 0;
  let lastEnd = start;
  const caller = async (): Promise<void> => {
    while (performance.now() < stopAt) {
      const q = workload.next();
      try {
        await scorer.score(q.text, q.passages);
        requests++;
        pairs += q.passages.length;
      } catch {
        errors++;
      }
      lastEnd = performance.now();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const elapsed = (lastEnd - start) / 1000;
  return {
    pairsPerSec: pairs / elapsed,
    requestsPerSec: requests / elapsed,
    requests,
    pairs,
    seconds: elapsed,
    concurrency,
    errors,
  };
}
