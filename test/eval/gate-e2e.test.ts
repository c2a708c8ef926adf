/**
 * End to end on a small real collection (MED): the shipped fast-path model, the BM25 first stage and
 * the real gate (createGate). The gate must drop passages, and its decisions must agree with the
 * gate statistics `relevance-gate eval` reports for the same threshold.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGate } from '../../src/gate/index.js';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { type FastPathScorer, loadFastPathScorer } from '../../src/tiers/fast-path/fast-path-scorer.js';
import { loadCollection, type Collection } from '../../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import { buildCandidateLists, toPassage } from '../../src/tooling/eval/candidates.js';
import { runEval } from '../../src/tooling/eval/run-eval.js';
import { ndcgAt } from '../../src/tooling/eval/metrics.js';
import { runEvalCommand } from '../../src/tooling/eval/eval-command.js';
import { readSplitsFile, resolveQuerySet } from '../../src/tooling/eval/query-set.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { RANKING } from '../../src/signals.js';

const ROOT = join(import.meta.dirname, '..', '..');
const MODEL = join(ROOT, 'models', 'fast-path-lexical');
const MED = join(ROOT, '..', 'shared', 'data', 'med');

let collection: Collection;
let scorer: FastPathScorer;
const out = mkdtempSync(join(tmpdir(), 'rg-eval-e2e-'));

beforeAll(async () => {
  collection = loadCollection(MED);
  scorer = await loadFastPathScorer(MODEL, { stats: await buildCorpusStats(collection.docs) });
});
afterAll(() => {
  scorer?.model.dispose();
  rmSync(out, { recursive: true, force: true });
});

describe('gate end to end with the shipped fast-path model on MED', () => {
  it('drops passages, orders and counts them, and agrees with the eval gate statistics', async () => {
    const threshold = scorer.recommendedThreshold!;
    expect(threshold).toBeGreaterThan(0);
    expect(threshold).toBeLessThan(1);
    const gate = createGate({ scorer, policy: { threshold } });
    const ids = resolveQuerySet(collection, 'default', readSplitsFile(join(MODEL, 'splits.json'))).queryIds;
    expect(ids.length).toBeGreaterThan(0);
    const lists = buildCandidateLists(collection, createBm25FirstStage(collection), ids, 20);

    let kept = 0;
    let relevantKept = 0;
    let dropped = 0;
    for (const list of lists) {
      const passages = list.candidates.map((c) => ({
        ...toPassage(collection.docById.get(c.docId)!),
        features: { retrieval_rank: c.rank },
      }));
      const result = await gate.filter(list.queryText, passages);
      expect(result.stats.retrieved).toBe(20);
      expect(result.stats.scored).toBe(20);
      expect(result.stats.unscored).toBe(0);
      expect(result.stats.returned).toBe(result.included.length);
      expect(result.included.length + result.conflicting.length + result.excluded.length).toBe(20);
      expect(result.stats.threshold).toBe(threshold);
      for (const item of result.included) expect(item.relevance!).toBeGreaterThanOrEqual(threshold);
      for (const item of result.excluded) expect(item.relevance!).toBeLessThan(threshold);
      // Returned in the order of the ranking signal when the model emits one, else of relevance.
      const orderKey = (item: (typeof result.included)[number]): number =>
        scorer.signals.includes(RANKING) ? item.signals![RANKING]! : item.relevance!;
      for (let i = 1; i < result.included.length; i++) {
        expect(orderKey(result.included[i]!)).toBeLessThanOrEqual(orderKey(result.included[i - 1]!));
      }
      if (result.included.length > 0) {
        expect(result.stats.maxRelevance).toBe(Math.max(...result.included.map((it) => it.relevance!)));
      }
      kept += result.included.length;
      dropped += result.excluded.length;
      relevantKept += result.included.filter((it) => (list.judgments.get(it.id) ?? 0) > 0).length;
    }
    expect(dropped).toBeGreaterThan(0);
    expect(kept).toBeGreaterThan(0);

    const report = await runEval({ collection, scorer, queryIds: ids, k: 20, gateK: 20, gateThreshold: threshold });
    expect(report.gate.keptPerQuery).toBeCloseTo(kept / ids.length, 12);
    expect(report.gate.precisionKept).toBeCloseTo(relevantKept / kept, 12);
    // the gate keeps fewer passages at higher precision than keeping all 20 (MED test queries)
    expect(report.gate.keptPerQuery).toBeLessThan(20);
    expect(report.gate.precisionKept!).toBeGreaterThan(report.gate.precisionAll!);
  }, 60_000);

  it('the default gate of the shipped model is the balanced operating point, and eval reports what it keeps', async () => {
    const ids = resolveQuerySet(collection, 'default', readSplitsFile(join(MODEL, 'splits.json'))).queryIds;
    const lists = buildCandidateLists(collection, createBm25FirstStage(collection), ids, 20);
    const report = await runEval({ collection, scorer, queryIds: ids, k: 20, gateK: 20 });
    expect(report.operatingPoints?.map((r) => r.name)).toEqual(['precise', 'balanced', 'related']);
    const gate = createGate({ scorer });
    for (const mode of ['precise', 'balanced', 'related'] as const) {
      let kept = 0;
      let relevantKept = 0;
      let nothing = 0;
      for (const list of lists) {
        const passages = list.candidates.map((c) => ({
          ...toPassage(collection.docById.get(c.docId)!),
          features: { retrieval_rank: c.rank },
        }));
        const result =
          mode === 'balanced'
            ? await gate.filter(list.queryText, passages)
            : await gate.filter(list.queryText, passages, { policy: { mode } });
        kept += result.included.length;
        relevantKept += result.included.filter((it) => (list.judgments.get(it.id) ?? 0) > 0).length;
        if (result.included.length === 0) nothing++;
        // the same decision re-made from the stored signals
        expect(gate.reroute(result, { mode }).included.map((i) => i.id)).toEqual(result.included.map((i) => i.id));
      }
      const row = report.operatingPoints!.find((r) => r.name === mode)!;
      expect(row.keptPerQuery).toBeCloseTo(kept / ids.length, 12);
      expect(row.precision!).toBeCloseTo(relevantKept / kept, 12);
      expect(row.nothingKeptAll).toBe(nothing);
    }
    // the bounds: no operating point beats the best grid point on these queries (the shipped points are grid points)
    const bounds = report.operatingPointBounds!;
    for (const row of report.operatingPoints!) expect(row.f1).toBeLessThanOrEqual(bounds.gridBest.f1);
    expect(bounds.gridBest.f1Ratio).toBeCloseTo(bounds.gridBest.f1 / report.operatingPoints![0]!.f1KeepAll, 12);
    const [precise, balanced, related] = report.operatingPoints!;
    expect(precise!.keptPerQuery).toBeLessThanOrEqual(balanced!.keptPerQuery);
    expect(balanced!.keptPerQuery).toBeLessThanOrEqual(related!.keptPerQuery);
    expect(related!.recall!).toBeGreaterThanOrEqual(precise!.recall!);
  }, 60_000);

  it("eval's reranked nDCG@10 is that of the order the gate returns (top 100, everything kept)", async () => {
    const ids = resolveQuerySet(collection, 'default', readSplitsFile(join(MODEL, 'splits.json'))).queryIds;
    const lists = buildCandidateLists(collection, createBm25FirstStage(collection), ids, 100);
    const report = await runEval({ collection, scorer, queryIds: ids, k: 100, gateK: 20 });
    expect(report.orderedBy).toBe(scorer.signals.includes(RANKING) ? RANKING : 'relevant');
    const gate = createGate({ scorer, policy: { threshold: 0 } });
    let sum = 0;
    for (const [q, list] of lists.entries()) {
      const passages = list.candidates.map((c) => ({
        ...toPassage(collection.docById.get(c.docId)!),
        features: { retrieval_rank: c.rank },
      }));
      const result = await gate.filter(list.queryText, passages);
      expect(result.included).toHaveLength(list.candidates.length);
      const ndcg = ndcgAt(
        result.included.map((i) => i.id),
        list.judgments,
        10,
      )!;
      expect(ndcg).toBeCloseTo(report.perQuery[q]!.ndcg10Reranked!, 12);
      sum += ndcg;
    }
    expect(report.ndcg10.reranked).toBeCloseTo(sum / lists.length, 12);
  }, 60_000);

  it('relevance-gate eval writes the JSON report and the SVG plot', async () => {
    const json = join(out, 'med.json');
    const plot = join(out, 'med.svg');
    const lines: string[] = [];
    const report = await runEvalCommand({
      collectionDir: MED,
      tier: 'fast-path',
      model: MODEL,
      queries: 'default',
      k: 100,
      gateK: 20,
      jsonOut: json,
      plotOut: plot,
      progress: false,
      log: (l) => lines.push(l),
    });
    expect(report.querySet.name).toBe('test');
    const parsed = JSON.parse(readFileSync(json, 'utf8'));
    expect(typeof parsed.ndcg10.firstStage).toBe('number');
    expect(typeof parsed.ndcg10.reranked).toBe('number');
    expect(parsed.gate).toMatchObject({ threshold: scorer.recommendedThreshold, thresholdSource: 'given' });
    for (const key of ['precisionAll', 'precisionKept', 'recallKept', 'keptPerQuery'])
      expect(parsed.gate).toHaveProperty(key);
    expect(parsed.thresholds).toHaveLength(101);
    expect(parsed.thresholds[0]).toMatchObject({ threshold: 0, recall: 1 });
    expect(existsSync(plot)).toBe(true);
    const svg = readFileSync(plot, 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('precision');
    expect(parsed.operatingPoints.map((r: { name: string }) => r.name)).toEqual(['precise', 'balanced', 'related']);
    const pointsSvg = readFileSync(join(out, 'med.operating-points.svg'), 'utf8');
    expect(pointsSvg).toContain('balanced');
    expect(lines.some((l) => l.includes('med.operating-points.svg'))).toBe(true);
    expect(lines.some((l) => l.includes('test split'))).toBe(true);
  }, 60_000);

  it('refuses unknown tiers and splits the model does not have', async () => {
    const base = { collectionDir: MED, model: MODEL, k: 100, gateK: 20, progress: false, log: () => {} };
    await expect(runEvalCommand({ ...base, tier: 'nope', queries: 'default' })).rejects.toThrow(InvalidArgumentError);
    await expect(runEvalCommand({ ...base, tier: 'fast-path', queries: 'bogus' })).rejects.toThrow(
      /--queries must be one of/,
    );
    const other = { ...collection, fingerprint: 'f'.repeat(64) };
    expect(() => resolveQuerySet(other, 'test', readSplitsFile(join(MODEL, 'splits.json')))).toThrow(
      /no split for this collection/,
    );
    expect(resolveQuerySet(other, 'default', readSplitsFile(join(MODEL, 'splits.json'))).name).toBe('all');
  });
});
