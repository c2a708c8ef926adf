/**
 * Helpers of the decision-log tests: a deterministic multi-signal scorer, requests from the shared
 * SciFact collection, a scorer that answers the signals a log stored (a "fresh gate run over the
 * stored signals"), and temporary directories.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DecisionRecord } from '../../src/decision-log/index.js';
import type { Passage, Scorer, ScorerPairResult } from '../../src/index.js';
import { scifactRequests } from '../server/helpers.js';

/** A small deterministic hash of a string in [0, 1). */
export function unit(text: string, salt = 0): number {
  let h = 2166136261 ^ salt;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return ((h >>> 0) % 10_000) / 10_000;
}

/** Signals relevant / ranking / evidence / contradiction from the passage text, raw logits beside them. */
export function signalScorer(id = 'signal-model', shift = 0): Scorer {
  return {
    id,
    signals: ['relevant', 'ranking', 'evidence', 'contradiction'],
    async score(query, passages) {
      return passages.map((p): ScorerPairResult => {
        const relevant = Math.min(1, Math.max(0, unit(query + p.text) + shift));
        const probabilities = {
          relevant,
          ranking: Math.min(1, (relevant + unit(p.text, 7)) / 2),
          evidence: unit(p.text, 3),
          contradiction: unit(p.text, 5) * 0.5,
        };
        const logit = (x: number) => Math.log(Math.max(1e-9, x) / Math.max(1e-9, 1 - x));
        return { probabilities, raw: { relevant: logit(relevant), ranking: logit(probabilities.ranking) }, tier: id };
      });
    },
  };
}

/** Answers exactly the signals a decision record stored for each passage id (null where none). */
export function storedSignalsScorer(
  record: DecisionRecord,
  base: Pick<Scorer, 'id' | 'signals' | 'decisions'>,
): Scorer {
  const byId = new Map(record.passages.map((p) => [p.id, p]));
  return {
    ...base,
    async score(_query, passages) {
      return passages.map((p): ScorerPairResult => {
        const stored = byId.get(p.id);
        if (stored === undefined || stored.signals === null) return null;
        return {
          probabilities: stored.signals,
          ...(stored.raw === null ? {} : { raw: stored.raw }),
          ...(stored.tier === null ? {} : { tier: stored.tier }),
        };
      });
    },
  };
}

/** SciFact requests as (query, passages) with ids d<i>. */
export function requests(count: number, docs = 10): Array<{ query: string; passages: Passage[] }> {
  return scifactRequests(count, docs).map((r) => ({
    query: r.query,
    passages: r.documents.map((text, i) => ({ id: `d${i}`, text })),
  }));
}

export function tempDir(prefix = 'rg-decision-log-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
