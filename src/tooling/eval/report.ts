/**
 * Presentation of an evaluation: the precision/recall plot (SVG) and a plain-text summary.
 */
import { renderLineChart } from '../report/svg-line-chart.js';
import { type OperatingPointBounds, PRECISE_BOUND_RECALL } from './operating-points.js';
import type { EvalReport } from './run-eval.js';

function pct(v: number | null): string {
  return v === null ? 'n/a' : v.toFixed(3);
}

/** The most precise grid point at the acceptance recall, in words. */
function preciseBound(p: OperatingPointBounds['preciseGridBest']): string {
  return p === null
    ? `no grid point reaches recall ${PRECISE_BOUND_RECALL}`
    : `most precise point at recall ≥ ${PRECISE_BOUND_RECALL}: precision ${pct(p.precision)}, recall ${pct(p.recall)} (beta ${p.point.beta}, shift ${p.point.shift})`;
}

/** Precision, recall and F1 of the gate against threshold, with the target precision and keep-all precision as references. */
export function renderPrecisionRecallSvg(report: EvalReport, title: string): string {
  const pts = (key: 'precision' | 'recall' | 'f1'): Array<[number, number]> =>
    report.thresholds.filter((r) => r[key] !== null).map((r) => [r.threshold, r[key] as number]);
  const hLines = [{ y: report.targetPrecision, label: `target precision ${report.targetPrecision}` }];
  if (report.gate.precisionAll !== null)
    hLines.push({ y: report.gate.precisionAll, label: `keep all ${report.gateK}: precision` });
  return renderLineChart({
    title,
    xLabel: `threshold (keep score >= threshold), first-stage top ${report.gateK}`,
    yLabel: 'precision / recall / F1',
    xRange: [0, 1],
    yRange: [0, 1],
    series: [
      { name: 'precision', points: pts('precision') },
      { name: 'recall', points: pts('recall') },
      { name: 'F1', points: pts('f1') },
    ],
    hLines,
  });
}

/**
 * Precision against recall: the absolute-threshold sweep as a curve, keeping all as a point, and each
 * operating point as a point (its per-query cuts pooled over the queries). Null without operating points.
 */
export function renderOperatingPointsSvg(report: EvalReport, title: string): string | null {
  const rows = report.operatingPoints;
  if (rows === null) return null;
  const sweep: Array<[number, number]> = report.thresholds
    .filter((r) => r.precision !== null && r.recall !== null)
    .map((r) => [r.recall as number, r.precision as number]);
  sweep.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const series = [{ name: 'absolute threshold 0..1', points: sweep }];
  if (report.gate.precisionAll !== null)
    series.push({
      name: `keep all ${report.gateK} (F1 ${pct(rows[0]?.f1KeepAll ?? null)})`,
      points: [[1, report.gate.precisionAll]],
    });
  for (const r of rows) {
    if (r.precision === null || r.recall === null) continue;
    series.push({ name: `${r.name} (F1 ${pct(r.f1)})`, points: [[r.recall, r.precision]] });
  }
  return renderLineChart({
    title,
    xLabel: `recall of the kept set (relevant among the first-stage top ${report.gateK})`,
    yLabel: 'precision of the kept set',
    xRange: [0, 1],
    yRange: [0, 1],
    series,
  });
}

/** A few lines for the terminal. */
export function summarizeReport(report: EvalReport): string {
  const g = report.gate;
  const t = report.thresholdForTarget;
  return [
    `collection ${report.collection.name}: ${report.queries} queries, ${report.firstStage.kind === 'dense' ? `dense (cosine over all ${report.firstStage.documents} documents)` : 'BM25'} top ${report.k} reranked, gate on top ${report.gateK}` +
      (report.retrievalRank
        ? ` (${report.firstStage.kind === 'dense' ? 'dense' : 'BM25'} rank passed as retrieval_rank)`
        : ' (text only)'),
    `nDCG@10  first stage ${pct(report.ndcg10.firstStage)}  reranked ${pct(report.ndcg10.reranked)} (ordered by ${report.orderedBy})`,
    `MAP@${report.k}  first stage ${pct(report.map.firstStage)}  reranked ${pct(report.map.reranked)}`,
    t
      ? `threshold for precision >= ${report.targetPrecision} on these queries: ${t.threshold.toFixed(4)} (precision ${pct(t.precision)}, recall ${pct(t.recall)})`
      : `no threshold reaches precision >= ${report.targetPrecision} on these queries`,
    `gate @ ${Number.isFinite(g.threshold) ? g.threshold.toFixed(4) : 'none'} (${g.thresholdSource}): precision kept ${pct(g.precisionKept)} vs all ${pct(g.precisionAll)}, recall kept ${pct(g.recallKept)}, kept/query ${g.keptPerQuery.toFixed(2)} of ${g.candidatesPerQuery.toFixed(1)}`,
    ...(report.operatingPoints ?? []).map(
      (r) =>
        `operating point ${r.name.padEnd(8)}: precision ${pct(r.precision)}, recall ${pct(r.recall)}, F1 ${pct(r.f1)} (keep all ${pct(r.f1KeepAll)}, ${r.f1Ratio.toFixed(2)}×), ` +
        `kept/query ${r.keptPerQuery.toFixed(2)}, nothing kept ${r.nothingKept} of ${r.queriesWithRelevant} queries with a relevant candidate, nDCG@10 of the kept list ${pct(r.ndcg10Kept)}` +
        (r.junkLists === 0
          ? ''
          : `; junk lists: nothing kept for ${((r.junkNothingKeptShare ?? 0) * 100).toFixed(1)} % of ${r.junkLists}, ${(r.junkKeptPerList ?? 0).toFixed(2)} kept per list`),
    ),
    ...(report.scoreCalibrationError === null
      ? []
      : [`returned score: expected calibration error (10 bins) ${report.scoreCalibrationError.toFixed(3)}`]),
    ...(report.operatingPointBounds === null
      ? []
      : [
          `bounds on these queries (labels known): best operating point ${pct(report.operatingPointBounds.gridBest.f1)} F1 (${report.operatingPointBounds.gridBest.f1Ratio.toFixed(2)}× keep all, beta ${report.operatingPointBounds.gridBest.point.beta}, shift ${report.operatingPointBounds.gridBest.point.shift}), best cut per query ${pct(report.operatingPointBounds.perQueryCut.f1)} F1 (${report.operatingPointBounds.perQueryCut.f1Ratio.toFixed(2)}×), ${preciseBound(report.operatingPointBounds.preciseGridBest)}`,
        ]),
    `time: first stage ${(report.timingsMs.firstStage / 1000).toFixed(2)} s, scoring ${(report.timingsMs.scoring / 1000).toFixed(2)} s`,
  ].join('\n');
}
