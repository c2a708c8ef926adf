/**
 * Measurement, not a shipped path: rules for choosing the ranking blend's λ (src/tooling/training/ranking-blend-
 * selection.ts), compared leave-one-collection-out on fold files of scripts/loco-base.ts, one folder per
 * split seed. Each rule sees only the training collections' VALIDATION queries of a fold (as the
 * pipeline does); the cell is the held-out collection's relative nDCG@10 gain over BM25 (BM25 top 100
 * ordered by (margin + λ·e) / (1 + λ), e = bm25_all / (2.2 · query_idf_sum), ties by BM25 rank).
 *
 * Usage: npx tsx scripts/loco-blend-rules.ts --folds /tmp/rg-loco/loco,/tmp/rg-loco/loco-s7
 */
import { blendGainCurve, type FoldFile, foldBlendGrid, type RankedQuery } from './loco-fold-data.js';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  pickRankingBlend,
  RANKING_BLEND_LAMBDAS,
  type RankingBlendCandidate,
} from '../../src/tooling/training/ranking-blend-selection.js';

const { values } = parseArgs({ options: { folds: { type: 'string' } } });
if (!values.folds) throw new Error('--folds DIR[,DIR…] is required');
const L = RANKING_BLEND_LAMBDAS;

function mean(a: readonly number[]): number {
  return a.reduce((x, y) => x + y, 0) / a.length;
}

/** Rules: each maps a fold's validation grid (foldBlendGrid) to an index into the λ grid. */
const RULES: ReadonlyArray<{ name: string; pick: (grid: readonly RankingBlendCandidate[]) => number }> = [
  {
    name: 'best worst-collection gain, ties: the smaller λ (the rule before)',
    pick: (grid) => grid.indexOf(pickRankingBlend(grid).best),
  },
  {
    name: 'best mean gain',
    pick: (grid) => {
      let best = 0;
      for (let j = 1; j < grid.length; j++) if (grid[j]!.meanGain > grid[best]!.meanGain) best = j;
      return best;
    },
  },
  {
    name: 'largest λ with every collection within 1 SE of its gain at the best (shipped)',
    pick: (grid) => grid.indexOf(pickRankingBlend(grid).chosen),
  },
  {
    name: 'largest λ with the worst collection within 1 SE of the best worst',
    pick: (grid) => {
      const best = pickRankingBlend(grid).best;
      const worstName = Object.keys(best.relativeGain).find((n) => best.relativeGain[n] === best.worstGain)!;
      let chosen = grid.indexOf(best);
      for (let j = chosen + 1; j < grid.length; j++)
        if (grid[j]!.worstGain >= best.worstGain - best.standardError[worstName]!) chosen = j;
      return chosen;
    },
  },
  { name: 'fixed λ = 1000 (the extractor BM25, the margin breaks ties)', pick: (grid) => grid.length - 1 },
];

const pct = (v: number) => `${v >= 0 ? '+' : ''}${(100 * v).toFixed(2)} %`;
for (const dir of values.folds.split(',')) {
  const files = readdirSync(dir)
    .filter((f) => /^fold-.+\.json$/.test(f))
    .sort();
  const folds = files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as FoldFile);
  const held = folds.map((f) => blendGainCurve(f.scores[f.heldOut]!.all as RankedQuery[]));
  const training = folds.map(foldBlendGrid);
  console.log(`\n### ${basename(dir)}\n`);
  console.log(`| rule | ${folds.map((f) => f.heldOut).join(' | ')} | mean | folds above BM25 |`);
  console.log(`|---|${folds.map(() => '---|').join('')}---|---|`);
  for (const rule of RULES) {
    const gains = folds.map((_, k) => {
      const j = rule.pick(training[k]!);
      return { lambda: L[j]!, gain: held[k]![j]!.gain };
    });
    const cells = gains.map((g) => `λ ${g.lambda}: ${pct(g.gain)}`);
    const above = gains.filter((g) => g.gain > 0).length;
    console.log(
      `| ${rule.name} | ${cells.join(' | ')} | ${pct(mean(gains.map((g) => g.gain)))} | ${above} / ${gains.length} |`,
    );
  }
}
