/**
 * A process that promotes garbage at a steady rate (a ring of short-lived objects that outlive a
 * scavenge or two, like request data in flight) and prints how many major collections it took.
 * argv[2]: the heap headroom, MiB (0 = V8's own sizing).
 */
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { keepHeapHeadroom } from '../../src/util/heap-headroom.js';

const headroomMb = Number(process.argv[2]);
const release = keepHeapHeadroom(headroomMb);
let majors = 0;
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
      majors++;
});
observer.observe({ entryTypes: ['gc'] });
const ring: unknown[] = new Array(40_000);
let i = 0;
function step(): void {
  for (let j = 0; j < 4000; j++) ring[i++ % ring.length] = { text: `passage ${i} `.repeat(8), ids: [i, i + 1] };
  if (i < 3_000_000) setImmediate(step);
  // GC entries are delivered after the collection: let the last ones arrive.
  else
    setTimeout(() => {
      release();
      observer.disconnect();
      process.stdout.write(`${JSON.stringify({ headroomMb, majors })}\n`);
    }, 50);
}
step();
