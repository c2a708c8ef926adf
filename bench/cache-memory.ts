/**
 * Checks the L1 size model against memory: fills a cache with N entries through resolve(), then
 * compares the memory the process gained per entry (V8 heap plus array buffers, where the L1's
 * shards keep their entries) with the cache's own bytes per entry. The estimate should be ≥ the
 * measured figure (maxBytes is then a true upper bound) and close. The bound is 256 MB, as `serve`
 * runs it, and N fills most of it (array buffers count a shard's arena at its full share once it
 * outgrows 64 KiB, though its pages are committed only as entries reach them; RSS is printed too).
 *
 * Run: npx tsx bench/cache-memory.ts
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createScoreCache } from '../src/index.js';
import type { Passage, ScorerPairResult } from '../src/types.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const N = Number(process.env.ENTRIES ?? 100_000);
const BATCH = 50;
const shapes: Array<[string, (i: number) => ScorerPairResult]> = [
  ['plain {relevance}', (i) => ({ relevant: (i % 997) / 997 })],
  [
    'detailed {probabilities, raw, tier}',
    (i) => ({ probabilities: { relevant: (i % 997) / 997 }, raw: { relevant: i / 7 }, tier: 'cross-encoder' }),
  ],
  [
    'detailed, 3 signals',
    (i) => ({
      probabilities: { relevant: (i % 997) / 997, answer: 0.25 + i / 1e9, conflict: 0.125 + i / 1e9 },
      raw: { relevant: i / 7, answer: i / 9, conflict: i / 11 },
      tier: 'fast-path',
    }),
  ],
];

// One shape per process (SHAPE=index) keeps earlier caches' garbage out of the measurement.
const only = process.env.SHAPE;
if (only === undefined) {
  const { spawnSync } = await import('node:child_process');
  for (let i = 0; i < shapes.length; i++) {
    const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      env: { ...process.env, SHAPE: String(i) },
      stdio: 'inherit',
    });
    if (child.status !== 0) process.exit(child.status ?? 1);
  }
  process.exit(0);
}
for (const [name, makeResult] of [shapes[Number(only)]]) {
  gc();
  const cache = createScoreCache({ maxBytes: 256 * 1024 * 1024 });
  const start = process.memoryUsage();
  const before = start.heapUsed + start.arrayBuffers;
  for (let start = 0; start < N; start += BATCH) {
    const passages: Passage[] = [];
    for (let i = start; i < start + BATCH; i++) passages.push({ id: `doc-${i}`, text: `text ${i}` });
    await cache.resolve({ scorerId: 'model@v1', query: `query ${start % 1000}`, passages }, async (missing) =>
      missing.map((j) => makeResult(start + j)),
    );
  }
  gc();
  gc();
  const end = process.memoryUsage();
  const stats = cache.stats();
  const measured = (end.heapUsed + end.arrayBuffers - before) / stats.entries;
  const rss = (end.rss - start.rss) / stats.entries;
  const heap = (end.heapUsed - start.heapUsed) / stats.entries;
  const estimated = stats.bytes / stats.entries;
  console.log(
    `${name.padEnd(38)} entries=${stats.entries} evictions=${stats.evictions} measured ${measured.toFixed(0)} B/entry (heap ${heap.toFixed(0)} + array buffers; RSS ${rss.toFixed(0)}), estimated ${estimated.toFixed(0)} B/entry (estimate/measured ${(estimated / measured).toFixed(2)})`,
  );
  await cache.close();
}
