/** Markdown for the operating-point tables of scripts/loco-gate.ts and scripts/in-domain-gate.ts. */
import type { OperatingPointMetrics } from '../../src/tooling/eval/operating-points.js';

export function fmt(v: number | null, digits = 3): string {
  return v === null || Number.isNaN(v) ? 'n/a' : v.toFixed(digits);
}

/** The header of an operating-point table whose first column is `first`. */
export function operatingPointHeader(first: string): string {
  return `| ${first} | precision kept | recall kept | F1 kept | F1 keep-all 20 | F1 ratio | nothing kept (of queries with a relevant in top 20) | kept / query |\n|---|---|---|---|---|---|---|---|`;
}

/** One collection's row of an operating-point table. */
export function operatingPointRow(name: string, m: OperatingPointMetrics): string {
  return `| ${name} | ${fmt(m.precision)} | ${fmt(m.recall)} | ${fmt(m.f1)} | ${fmt(m.f1KeepAll)} | ${fmt(m.f1 / m.f1KeepAll, 2)}× | ${m.nothingKept} / ${m.queriesWithRelevant} (${fmt((100 * m.nothingKept) / Math.max(1, m.queriesWithRelevant), 1)} %) | ${fmt(m.keptPerQuery, 2)} |`;
}
