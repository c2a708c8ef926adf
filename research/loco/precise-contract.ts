/**
 * Can `precise` be chosen for its per-collection line too (precision ≥ min(0.6, 95 % of the most
 * precise grid point at recall ≥ 0.3, labels known) with recall ≥ 0.3), over the grid that reads the
 * list's confidence (gamma, emptyBelow)? For each held-out collection the point is picked on the other
 * four (most collections meeting the line, then the highest mean precision among points with
 * recall ≥ 0.3 everywhere) and measured held out, relevance head.
 *
 *   npx tsx research/loco/precise-contract.ts /tmp/fit2/ce-scores.json
 */
import { readFileSync } from 'node:fs';
import { FIT_BETAS, FIT_SHIFTS } from '../../src/tooling/eval/operating-points.js';
import { contractGrid, FIT_EMPTY_BELOW, gridCells, gridPoint } from '../../src/tooling/eval/list-confidence-fit.js';
import { parseScoredLists } from '../../src/tooling/eval/scored-lists-file.js';

const RECALL = 0.3;
const collections = parseScoredLists(readFileSync(process.argv[2] as string, 'utf8'));
const names = collections.map((c) => c.name);
const cells = gridCells(FIT_BETAS, FIT_SHIFTS);
const grids = collections.map((c) =>
  contractGrid(
    c.lists.map((l) => ({ relevances: l.relevances, relevant: l.relevant })),
    c.junk ?? [],
    cells,
  ),
);
const e = FIT_EMPTY_BELOW.length;
const fig = (i: number, c: number, j: number) => grids[i]!.figures(c, j);
// The line per collection: 95 % of the most precise gamma-0, no-empty-rule point at recall >= 0.3.
const line = names.map((_, i) => {
  let best = 0;
  for (let c = 0; c < cells.length; c++) {
    if (cells[c]!.gamma !== 0) continue;
    const f = fig(i, c, 0);
    if ((f.recall ?? 0) >= RECALL) best = Math.max(best, f.precision ?? 0);
  }
  return { bound: best, line: Math.min(0.6, 0.95 * best) };
});
const meets = (i: number, c: number, j: number) => {
  const f = fig(i, c, j);
  return (f.recall ?? 0) >= RECALL && (f.precision ?? 0) >= line[i]!.line;
};
for (const [label, withGrid] of [
  ['gamma 0, no empty rule', false],
  ['the whole grid', true],
] as const) {
  console.log(`\n== ${label}`);
  let held = 0;
  for (let h = 0; h < names.length; h++) {
    const train = names.map((_, i) => i).filter((i) => i !== h);
    let best: [number, number, number, number] = [-1, -1, 0, 0];
    for (let c = 0; c < cells.length; c++) {
      if (!withGrid && cells[c]!.gamma !== 0) continue;
      for (let j = 0; j < e; j++) {
        if (!withGrid && j > 0) continue;
        const count = train.filter((i) => meets(i, c, j)).length;
        const recallOk = train.every((i) => (fig(i, c, j).recall ?? 0) >= RECALL);
        const mean = recallOk ? train.reduce((s, i) => s + (fig(i, c, j).precision ?? 0), 0) / train.length : -1;
        if (count > best[0] || (count === best[0] && mean > best[1])) best = [count, mean, c, j];
      }
    }
    const f = fig(h, best[2], best[3]);
    const ok = meets(h, best[2], best[3]);
    if (ok) held++;
    console.log(
      `${names[h]!.padEnd(10)} ${JSON.stringify(gridPoint(cells[best[2]]!, best[3]))} train ${best[0]}/4: held-out P ${f.precision?.toFixed(3)} R ${f.recall?.toFixed(3)} (line ${line[h]!.line.toFixed(3)}, bound ${line[h]!.bound.toFixed(3)}) ${ok ? 'meets' : 'short'}`,
    );
  }
  console.log(`held-out collections meeting the line: ${held} / ${names.length}`);
}
