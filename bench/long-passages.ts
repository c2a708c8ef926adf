/**
 * How the native feature extractor's cost grows with passage length: best-of-7 interleaved runs of
 * one 1 MB and one 4 MB passage (query terms frequent, the worst case for the proximity and span
 * features). Linear growth gives a ratio near 4; quadratic would give 16.
 *
 * Usage: npx tsx bench/long-passages.ts [--runs 7]
 */
import { parseArgs } from 'node:util';
import { buildCorpusStats } from '../src/features/corpus-stats.js';
import { extractFeatures } from '../src/features/extract.js';
import { text } from '../test/features/long-text.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const runs = Number(values.runs);
const stats = await buildCorpusStats([{ text: text(10_000, 1) }]);
const query = 'supersonic flow over a plate boundary layer with shock wave heat';
const sizes = [1 << 20, 4 << 20];
const passages = sizes.map((bytes) => text(bytes, 7));
const best = sizes.map(() => Number.POSITIVE_INFINITY);
for (let r = 0; r < runs; r++) {
  passages.forEach((p, i) => {
    const t0 = performance.now();
    extractFeatures(stats, query, [{ text: p }]);
    best[i] = Math.min(best[i]!, performance.now() - t0);
  });
}
console.log(
  `1 MB: ${best[0]!.toFixed(1)} ms, 4 MB: ${best[1]!.toFixed(1)} ms, ratio ${(best[1]! / best[0]!).toFixed(2)} ` +
    `(linear ≈ 4, quadratic ≈ 16; best of ${runs})`,
);
