/**
 * Time the hypervisor ran something else while this VM's vCPUs wanted to run ("steal", the
 * eighth value of the `cpu` line of /proc/stat), sampled once a second. A late answer in a second
 * with steal is the host's pause, not the engine's: the whole process (every thread) stops, which
 * shows up as generator schedule lag far above the event-loop delay. Linux only; elsewhere, or when
 * /proc/stat cannot be read, the sampler reports nothing.
 */
import { readFileSync } from 'node:fs';

/** /proc/stat counts in USER_HZ ticks, 100 per second on every Linux architecture Node supports. */
const MS_PER_TICK = 10;

/** Steal ticks summed over all CPUs so far, or undefined when unavailable. */
export function readStealTicks(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0];
    const fields = line.trim().split(/\s+/);
    if (fields[0] !== 'cpu' || fields.length < 9) return undefined;
    const steal = Number(fields[8]);
    return Number.isFinite(steal) ? steal : undefined;
  } catch {
    return undefined;
  }
}

export interface StealSampler {
  /** Steal per bucket (ms summed over CPUs), by bucket index from `start`; undefined when unavailable. */
  stop(): number[] | undefined;
}

/** Samples steal every `bucketMs`, kept by bucket of time since `start` (performance.now() clock), until stopped. */
export function sampleSteal(start: number, bucketMs: number): StealSampler {
  const first = readStealTicks();
  if (first === undefined) return { stop: () => undefined };
  const perBucket: number[] = [];
  let last = first;
  const sample = (): void => {
    const now = readStealTicks();
    if (now === undefined) return;
    // The steal since the last sample belongs to the bucket holding that interval's midpoint;
    // before `start` (the warm-up) it is not kept.
    const k = Math.floor((performance.now() - bucketMs / 2 - start) / bucketMs);
    if (k >= 0) perBucket[k] = (perBucket[k] ?? 0) + (now - last) * MS_PER_TICK;
    last = now;
  };
  const timer = setInterval(sample, bucketMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return Array.from({ length: perBucket.length }, (_, i) => perBucket[i] ?? 0);
    },
  };
}
