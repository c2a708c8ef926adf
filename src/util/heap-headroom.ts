/**
 * Fewer major garbage collections for a process that answers by deadlines. V8 sizes the old
 * generation's next collection point from the live heap and a growth factor it picks itself; with
 * a small live heap and a steady stream of short-lived request data (the server reading 20
 * passages at 700 requests/s, the load generator beside it) that point comes every 1–4 s, and each
 * major collection holds the main thread for 5–35 ms: a request that meets one, or meets one on
 * each side of a loopback connection, answers late. Keeping a fixed headroom of garbage between
 * collections (V8's growth factor set from the live heap after each major collection) measured
 * 13 → 1 major collections a minute on the server and 58 → 2 on the generator (docs/router.md).
 *
 * Process-wide (a V8 flag): the largest headroom any holder asks for applies; releasing the last
 * holder gives V8 back its own choice.
 */
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString, getHeapStatistics } from 'node:v8';
import { InvalidArgumentError } from '../errors.js';

/** Default headroom of `serve` and `bench`, MiB. */
export const DEFAULT_HEAP_HEADROOM_MB = 192;

/** Never below V8's usual growth on a large heap (×1.5): a big live heap keeps V8's pace. */
const MIN_GROWTH_PERCENT = 50;
/** A tiny live heap never gets more than ×11 (the headroom is a bound, not a target). */
const MAX_GROWTH_PERCENT = 1000;
const MIB = 1024 * 1024;

const holders = new Map<symbol, number>();
let observer: PerformanceObserver | undefined;

/**
 * Keeps about `headroomMb` MiB of garbage between major collections while held; returns the
 * release. 0 asks for nothing (V8's own sizing). Throws InvalidArgumentError for a negative or
 * non-finite value.
 */
export function keepHeapHeadroom(headroomMb: number): () => void {
  if (typeof headroomMb !== 'number' || !Number.isFinite(headroomMb) || headroomMb < 0)
    throw new InvalidArgumentError(`heap headroom must be a number of MiB >= 0, got ${String(headroomMb)}`);
  if (headroomMb === 0) return () => undefined;
  const id = Symbol('heap-headroom');
  holders.set(id, headroomMb);
  apply();
  return () => {
    if (holders.delete(id)) apply();
  };
}

/** The headroom this process keeps now, MiB (the largest any holder asked for; 0: V8's own sizing). */
export function heldHeapHeadroomMb(): number {
  return holders.size === 0 ? 0 : Math.max(...holders.values());
}

/** The growth (percent over the live heap) a headroom gives at a live heap size, clamped. */
export function growthPercentFor(headroomBytes: number, liveBytes: number): number {
  const percent = (headroomBytes / Math.max(liveBytes, MIB)) * 100;
  return Math.round(Math.min(MAX_GROWTH_PERCENT, Math.max(MIN_GROWTH_PERCENT, percent)));
}

function apply(): void {
  if (holders.size === 0) {
    observer?.disconnect();
    observer = undefined;
    setFlagsFromString('--heap-growing-percent=0'); // 0: V8 picks the factor again
    return;
  }
  if (observer === undefined) {
    // After each major collection the heap in use is about the live heap: size the next one from it.
    observer = new PerformanceObserver((list) => {
      if (list.getEntries().some(isMajorCollection)) setGrowth();
    });
    observer.observe({ entryTypes: ['gc'] });
  }
  setGrowth();
}

function isMajorCollection(entry: PerformanceEntry): boolean {
  const { detail } = entry as PerformanceEntry & { readonly detail?: { readonly kind?: number } | null };
  return detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
}

function setGrowth(): void {
  if (holders.size === 0) return;
  const headroom = heldHeapHeadroomMb() * MIB;
  setFlagsFromString(`--heap-growing-percent=${growthPercentFor(headroom, getHeapStatistics().used_heap_size)}`);
}
