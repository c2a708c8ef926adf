/**
 * `fit-points --log --log-qrels`: a decision log with judgments is fit data. Real SciFact queries
 * go through a gate over the shipped fast path exactly as the fit scores a collection (BM25 top 20,
 * retrieval rank passed), are logged under their query ids, and SciFact's qrels judge them: the fit
 * over [MED, the log] equals the fit over [MED, SciFact's same queries], list for list.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDecisionLog, readDecisionLog, parseJudgments } from '../../src/decision-log/index.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { createGate } from '../../src/gate/gate.js';
import { buildCandidateLists, toPassage } from '../../src/tooling/eval/candidates.js';
import { type Collection, judgedQueryIds, loadCollection } from '../../src/tooling/eval/collection.js';
import { runFitPointsCommand } from '../../src/tooling/eval/fit-points-command.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import { fitScorerOperatingPoints, scoreCollectionForFit } from '../../src/tooling/eval/fit-scorer-points.js';
import { logLists } from '../../src/tooling/eval/log-lists.js';
import {
  type FastPathScorer,
  loadFastPathScorer,
  SHIPPED_FAST_PATH_MODEL_DIR,
} from '../../src/tiers/fast-path/fast-path-scorer.js';
import { loadEvalTier } from '../../src/tooling/eval/tiers.js';
import { signalScorer, tempDir } from './helpers.js';

const DATA = join(import.meta.dirname, '..', '..', '..', 'shared', 'data');
const GATE_K = 20;
let scifact: Collection;
let scorer: FastPathScorer;
let queryIds: string[];
const t = tempDir('rg-fit-log-');

beforeAll(async () => {
  scifact = loadCollection(join(DATA, 'scifact'));
  scorer = await loadFastPathScorer();
  queryIds = judgedQueryIds(scifact.qrels).slice(0, 40);
  const log = createDecisionLog({ dir: t.dir });
  const gate = createGate({ scorer });
  const model = { name: 'fast-path', scorer, policy: {} };
  for (const list of buildCandidateLists(scifact, createBm25FirstStage(scifact), queryIds, GATE_K)) {
    const passages = list.candidates.map((c) => ({
      ...toPassage(scifact.docById.get(c.docId)!),
      features: { retrieval_rank: c.rank },
    }));
    log.record({ requestId: list.queryId, model, result: await gate.filter(list.queryText, passages) });
  }
  // Another model's decision in the same log, and a shadow's: neither is fit data for this one.
  const other = signalScorer('other-model');
  const first = await createGate({ scorer: other }).filter('q', [{ id: 'x', text: 'y' }]);
  log.record({ requestId: queryIds[0]!, model: { name: 'other', scorer: other, policy: {} }, result: first });
  log.record({
    requestId: 'shadow-1',
    shadowOf: queryIds[0]!,
    model: { name: 'fast-path', scorer: other, policy: {} },
    result: first,
  });
  await log.close();
}, 120_000);

afterAll(() => {
  scorer.model.dispose();
  t.remove();
});

describe('a decision log with judgments as fit data', () => {
  it("gives the same lists as the collection's own queries scored for a fit", async () => {
    const contents = await readDecisionLog(t.dir);
    const judgments = parseJudgments(
      [...scifact.qrels].flatMap(([q, docs]) => [...docs].map(([d, g]) => `${q}\t${d}\t${g}`)).join('\n'),
    );
    expect(() => logLists(contents, judgments, { name: 'log', gateK: GATE_K })).toThrow(InvalidArgumentError);
    const fromLog = logLists(contents, judgments, { name: 'log', gateK: GATE_K, model: 'fast-path' });
    expect(fromLog.judged).toBe(queryIds.length);
    expect(fromLog.withUnscored).toBe(0);
    const direct = await scoreCollectionForFit({ collection: scifact, scorer, queryIds, gateK: GATE_K });
    expect(fromLog.collection.model).toBe(direct.model);
    expect(fromLog.collection.lists).toHaveLength(direct.lists.length);
    for (const [i, list] of fromLog.collection.lists.entries()) {
      const want = direct.lists[i]!;
      expect(list.docIds).toEqual(want.docIds);
      expect(list.relevant).toEqual(want.relevant);
      expect(list.relevances).toEqual(want.relevances);
      expect(list.order).toEqual(want.order);
    }
  });

  it('fit-points over [MED, the log] fits the points fit-points over [MED, SciFact] fits', async () => {
    // MED as the command scores it: the fast path with MED's own corpus statistics.
    const med = loadCollection(join(DATA, 'med'));
    const medTier = await loadEvalTier({ tier: 'fast-path', model: SHIPPED_FAST_PATH_MODEL_DIR, collection: med });
    const medScored = await scoreCollectionForFit({
      collection: med,
      scorer: medTier.scorer,
      queryIds: judgedQueryIds(med.qrels),
      gateK: GATE_K,
    }).finally(() => medTier.close());
    const scifactScored = await scoreCollectionForFit({ collection: scifact, scorer, queryIds, gateK: GATE_K });
    const expected = fitScorerOperatingPoints([
      medScored,
      { ...scifactScored, name: `log:${t.dir.split('/').at(-1)}` },
    ]);
    const { fit } = await runFitPointsCommand({
      collectionDirs: [join(DATA, 'med')],
      logs: [t.dir],
      logQrels: join(DATA, 'scifact', 'qrels.tsv'),
      logModel: 'fast-path',
      tier: 'fast-path',
      model: SHIPPED_FAST_PATH_MODEL_DIR,
      queries: 'all',
      gateK: GATE_K,
      junk: false,
      progress: false,
      log: () => undefined,
    });
    expect(fit.collections.map((c) => c.collection)).toEqual(expected.collections.map((c) => c.collection));
    expect(fit.points).toEqual(expected.points);
    expect(fit.collections[1]!.queries).toBe(queryIds.length);
    expect(fit.collections[1]!.heldOut?.rows).toEqual(expected.collections[1]!.heldOut?.rows);
  });

  it('refuses --log without judgments and a log with no judged request', async () => {
    const base = {
      collectionDirs: [],
      tier: 'fast-path',
      model: 'unused',
      queries: 'all',
      gateK: GATE_K,
      progress: false,
      log: () => undefined,
    };
    await expect(runFitPointsCommand({ ...base, logs: [t.dir] })).rejects.toThrow(/--log-qrels/);
    const contents = await readDecisionLog(t.dir);
    expect(() => logLists(contents, parseJudgments('q\td\t1'), { name: 'x', gateK: 20, model: 'fast-path' })).toThrow(
      /no live decision of model fast-path with judgments/,
    );
  });
});
