import type { Passage, Scorer, ScoreOptions, ScorerPairResult } from '../../src/index.js';

export interface RecordingScorer extends Scorer {
  readonly calls: Array<{ query: string; ids: string[]; options: ScoreOptions | undefined }>;
}

/** Passages p0..p(k-1) with text "text i". */
export function passages(k: number, prefix = 'p'): Passage[] {
  return Array.from({ length: k }, (_, i) => ({ id: `${prefix}${i}`, text: `text ${i}` }));
}

/** A scorer answering from a table keyed by passage id (missing id → null), recording every call. */
export function tableScorer(table: Record<string, ScorerPairResult>, id = 'table-model'): RecordingScorer {
  const calls: RecordingScorer['calls'] = [];
  return {
    id,
    calls,
    async score(query, ps, options) {
      calls.push({ query, ids: ps.map((p) => p.id), options });
      return ps.map((p) => (p.id in table ? table[p.id] : null));
    },
  };
}

/** Relevance from a list by passage index (ids p<i>). */
export function relevanceScorer(values: readonly number[], id = 'rel-model'): RecordingScorer {
  const table: Record<string, ScorerPairResult> = {};
  for (const [i, v] of values.entries()) table[`p${i}`] = { relevant: v };
  return tableScorer(table, id);
}

export function ids(items: ReadonlyArray<{ id: string }>): string[] {
  return items.map((i) => i.id);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A scorer that takes `ms` per call, ignores deadlines and signals, and finds every passage relevant (0.9). */
export function slowScorer(ms: number, id = 's'): Scorer {
  return {
    id,
    score: async (_q, ps) => {
      await sleep(ms);
      return ps.map(() => ({ relevant: 0.9 }));
    },
  };
}
