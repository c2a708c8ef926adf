/**
 * Fitting operating points for any scorer: the shipped model's points come back exactly when fitted
 * the way they were (`relevance-gate fit-points` on the five collections' validation + test queries),
 * the held-out rows are the points fitted without that collection, the written file gates as the
 * shipped points do, and a fit refuses inputs it cannot make sense of.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCollection } from '../../src/tooling/eval/collection.js';
import { runEvalCommand } from '../../src/tooling/eval/eval-command.js';
import { runFitPointsCommand } from '../../src/tooling/eval/fit-points-command.js';
import {
  fitScorerOperatingPoints,
  operatingPointsFileOf,
  type ScoredCollection,
  scoreCollectionForFit,
} from '../../src/tooling/eval/fit-scorer-points.js';
import {
  fitOperatingPoints,
  type JudgedGateList,
  operatingPointRows,
} from '../../src/tooling/eval/operating-points.js';
import { EvalScoringError } from '../../src/tooling/eval/run-eval.js';
import { parseScoredLists, serializeScoredLists } from '../../src/tooling/eval/scored-lists-file.js';
import {
  createGate,
  InvalidArgumentError,
  loadFastPathScorer,
  loadOperatingPoints,
  OPERATING_POINT_NAMES,
  type Passage,
  type Scorer,
} from '../../src/index.js';
import { parseOperatingPointsFile } from '../../src/operating-points/file.js';
import { mulberry32 as seededRandom } from '../../src/util/seeded-random.js';
import { packageRoot } from '../../src/util/package-root.js';
import { createCrossEncoder, createCrossEncoderScorer } from '../../src/index.js';
import { writeCrossEncoderModelDir } from '../../src/tooling/model-gen/index.js';

const DATA = join(packageRoot(), '..', 'shared', 'data');
const COLLECTIONS = ['cisi', 'cranfield', 'med', 'nfcorpus', 'scifact'];
const dir = mkdtempSync(join(tmpdir(), 'rg-fit-points-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const silent = () => {};

/** Runs a CLI work function without its tables on stdout. */
async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    return await fn();
  } finally {
    process.stdout.write = write;
  }
}

/** Seeded synthetic lists: relevance rises with the label, noisier in some collections than others. */
function syntheticCollection(
  name: string,
  seed: number,
  noise: number,
  model = 'model-a',
  gateK = 10,
): ScoredCollection {
  const random = seededRandom(seed);
  const lists: JudgedGateList[] = [];
  for (let q = 0; q < 40; q++) {
    const relevant = Array.from({ length: gateK }, () => random() < 0.3);
    const relevances = relevant.map((r) =>
      Math.min(0.999, Math.max(0.001, (r ? 0.6 : 0.3) + noise * (random() - 0.5))),
    );
    lists.push({
      relevances,
      relevant,
      docIds: relevances.map((_, i) => `${q}-${i}`),
      judgments: new Map(relevant.flatMap((r, i) => (r ? [[`${q}-${i}`, 1] as [string, number]] : []))),
    });
  }
  return { name, fingerprint: `fp-${name}`, model, gateK, lists };
}

describe('fitScorerOperatingPoints', () => {
  const scored = [syntheticCollection('a', 1, 0.4), syntheticCollection('b', 2, 0.8), syntheticCollection('c', 3, 1.2)];

  it('fits on every collection, and measures each collection with points fitted on the others', () => {
    const fit = fitScorerOperatingPoints(scored);
    const all = fitOperatingPoints(Object.fromEntries(scored.map((c) => [c.name, c.lists])));
    for (const name of OPERATING_POINT_NAMES) expect(fit.points[name]).toEqual(all[name].point);
    expect(fit.model).toBe('model-a');
    expect(fit.gateK).toBe(10);
    for (const c of fit.collections) {
      const own = scored.find((s) => s.name === c.collection)!;
      const others = fitOperatingPoints(
        Object.fromEntries(scored.filter((s) => s !== own).map((s) => [s.name, s.lists])),
      );
      const heldOutPoints = Object.fromEntries(OPERATING_POINT_NAMES.map((n) => [n, others[n].point]));
      expect(c.heldOut?.points).toEqual(heldOutPoints);
      expect(c.heldOut?.rows).toEqual(operatingPointRows(own.lists, c.heldOut!.points));
      expect(c.fitted).toEqual(operatingPointRows(own.lists, fit.points));
      expect(c.queries).toBe(40);
      expect(c.bounds?.perQueryCut.f1).toBeGreaterThanOrEqual(c.bounds!.gridBest.f1);
    }
    // The file carries the points, what they were fitted on, and every held-out row.
    const file = operatingPointsFileOf(fit);
    expect(parseOperatingPointsFile(JSON.parse(JSON.stringify(file)))).toEqual(file);
    expect(file.fittedOn.map((f) => f.collection)).toEqual(['a', 'b', 'c']);
    expect(file.heldOut).toHaveLength(3 * 3);
  });

  it('with one collection there is nothing to hold out', () => {
    const fit = fitScorerOperatingPoints([scored[0]!]);
    expect(fit.collections[0]!.heldOut).toBeNull();
    expect(operatingPointsFileOf(fit).heldOut).toBeUndefined();
  });

  it('refuses no collections, a collection twice, two models and two list lengths', () => {
    expect(() => fitScorerOperatingPoints([])).toThrow(InvalidArgumentError);
    expect(() => fitScorerOperatingPoints([scored[0]!, scored[0]!])).toThrow(/given twice/);
    expect(() => fitScorerOperatingPoints([scored[0]!, syntheticCollection('d', 4, 0.5, 'model-b')])).toThrow(
      /operating points belong to one model/,
    );
    expect(() => fitScorerOperatingPoints([scored[0]!, syntheticCollection('d', 4, 0.5, 'model-a', 5)])).toThrow(
      /gateK 5/,
    );
  });
});

describe('scoreCollectionForFit', () => {
  const med = loadCollection(join(DATA, 'med'));
  const queryIds = ['1', '2', '3'];

  it("scores each query's first-stage top gateK with its qrels labels", async () => {
    const seen: number[] = [];
    const scorer: Scorer = {
      id: 'length@stats/x',
      async score(_query: string, passages: readonly Passage[]) {
        seen.push(passages.length);
        return passages.map((p) => ({ relevant: Math.min(1, p.text.length / 2000) }));
      },
    };
    const scoredMed = await scoreCollectionForFit({ collection: med, scorer, queryIds, gateK: 7 });
    expect(scoredMed.model).toBe('length');
    expect(scoredMed.lists).toHaveLength(3);
    expect(seen).toEqual([7, 7, 7]);
    for (const [q, list] of scoredMed.lists.entries()) {
      expect(list.relevances).toHaveLength(7);
      const judged = med.qrels.get(queryIds[q]!)!;
      expect(list.relevant).toEqual(list.docIds.map((id) => (judged.get(id) ?? 0) > 0));
    }
  });

  it('refuses a scorer that leaves a pair unscored, and an empty query set', async () => {
    const partial: Scorer = {
      id: 'partial',
      async score(_query: string, passages: readonly Passage[]) {
        return passages.map((_, i) => (i === 2 ? null : { relevant: 0.5 }));
      },
    };
    await expect(scoreCollectionForFit({ collection: med, scorer: partial, queryIds })).rejects.toThrow(
      EvalScoringError,
    );
    await expect(scoreCollectionForFit({ collection: med, scorer: partial, queryIds: [] })).rejects.toThrow(
      /no queries/,
    );
  });
});

describe('relevance-gate fit-points', () => {
  it("reproduces the shipped model's points from its five collections' validation + test queries", async () => {
    const out = join(dir, 'shipped.json');
    const scoresOut = join(dir, 'shipped-scores.json');
    const { fit, file } = await quietly(() =>
      runFitPointsCommand({
        collectionDirs: COLLECTIONS.map((c) => join(DATA, c)),
        tier: 'fast-path',
        model: join(packageRoot(), 'models', 'fast-path-lexical'),
        queries: 'heldout',
        gateK: 20,
        out,
        scoresOut,
        progress: false,
        log: silent,
      }),
    );
    // Fitted again from the written scores, without scoring: the same fit, the same file.
    const refit = await quietly(() =>
      runFitPointsCommand({
        collectionDirs: [],
        scoresIn: [scoresOut],
        tier: 'fast-path',
        model: 'unused',
        queries: 'heldout',
        gateK: 20,
        progress: false,
        log: silent,
      }),
    );
    expect(refit.fit).toEqual(fit);
    expect(refit.file).toEqual(file);
    const scorer = await loadFastPathScorer();
    const shipped = scorer.decisions?.operatingPoints;
    expect(shipped).toBeDefined();
    expect(fit.points).toEqual(shipped);
    // Every point has a verdict and a floor, fitted with the other collections' queries as junk lists.
    for (const name of ['precise', 'balanced', 'related'] as const) {
      expect(fit.points[name].sufficiency).toBeDefined();
      expect(fit.points[name].floor).toBeGreaterThan(0);
    }
    expect(fit.scoreCalibration).toEqual(scorer.decisions?.scoreCalibration);
    // The file shipped beside the model is what fit-points writes, held-out figures included.
    const shippedFile = join(packageRoot(), 'models', 'fast-path-lexical', 'operating-points.json');
    expect(JSON.parse(readFileSync(shippedFile, 'utf8'))).toEqual(JSON.parse(JSON.stringify(file)));
    // Held out, the default point leaves at most 10 % of the real lists empty on every collection.
    for (const c of fit.collections) {
      const balanced = c.heldOut?.rows.find((r) => r.name === 'balanced');
      expect(balanced?.nothingKeptShare).toBeLessThanOrEqual(0.1);
      expect(balanced?.junkLists).toBeGreaterThan(0);
      expect(c.verdict?.curve.length).toBeGreaterThan(0);
      // By the collection the junk queries came from: every other collection, adding up to the whole.
      const bySource = Object.entries(balanced!.junkBySource);
      expect(bySource.map(([s]) => s).sort()).toEqual(COLLECTIONS.filter((n) => n !== c.collection).sort());
      expect(bySource.reduce((n, [, v]) => n + v.lists, 0)).toBe(balanced!.junkLists);
      const emptied = bySource.reduce((n, [, v]) => n + v.nothingKeptShare * v.lists, 0);
      expect(emptied).toBeCloseTo(balanced!.junkNothingKeptShare! * balanced!.junkLists, 6);
      // What the held-out point kept on junk lists: exactly the lists it did not leave empty.
      expect(c.junkKeptHeldOut).toHaveLength(Math.round(balanced!.junkLists - emptied));
      for (const j of c.junkKeptHeldOut) {
        expect(j.source).not.toBe(c.collection);
        expect(j.kept.length).toBeGreaterThan(0);
      }
    }
    // validation + test of each collection (splits.json): the queries the model did not train on
    expect(file.fittedOn.map((f) => f.queries)).toEqual([30, 90, 12, 130, 462]);
    expect(file.heldOut).toHaveLength(COLLECTIONS.length * 3);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(JSON.parse(JSON.stringify(file)));

    // The file gates as the shipped points do.
    const points = await loadOperatingPoints(out, scorer);
    const passages = med().slice(0, 20);
    const query = 'the crystalline lens in vertebrates, including humans.';
    const byFile = await createGate({ scorer, policy: { operatingPoints: points } }).filter(query, passages);
    const byDefault = await createGate({ scorer }).filter(query, passages);
    expect(byFile.included.map((i) => i.id)).toEqual(byDefault.included.map((i) => i.id));
    scorer.model.dispose();

    // eval measures a file's points: the same rows as the model's own points, which they equal.
    const evalArgs = {
      collectionDir: join(DATA, 'med'),
      tier: 'fast-path',
      model: join(packageRoot(), 'models', 'fast-path-lexical'),
      queries: 'all',
      k: 20,
      gateK: 20,
      progress: false,
      log: silent,
    };
    const own = await quietly(() => runEvalCommand(evalArgs));
    const fromFile = await quietly(() => runEvalCommand({ ...evalArgs, operatingPointsFile: out }));
    expect(fromFile.operatingPoints).toEqual(own.operatingPoints);
    await expect(
      quietly(() => runEvalCommand({ ...evalArgs, operatingPointsFile: join(DATA, 'med', 'qrels.tsv') })),
    ).rejects.toThrow(/invalid JSON/);
  }, 120_000);

  it('fits a cross-encoder, whose folder then gates by its own balanced point', async () => {
    // A speed/shape model (random weights): the figures mean nothing, the workflow is what is checked.
    const modelDir = (await writeCrossEncoderModelDir(join(dir, 'tiny-ce'), 'tiny', { seed: 7 })).dir;
    const out = join(dir, 'ce-points.json');
    const logs: string[] = [];
    const { fit, file } = await quietly(() =>
      runFitPointsCommand({
        collectionDirs: [join(DATA, 'med'), join(DATA, 'cisi')],
        tier: 'cross-encoder',
        model: modelDir,
        queries: 'heldout',
        gateK: 10,
        out,
        progress: false,
        log: (line) => logs.push(line),
      }),
    );
    expect(logs.some((l) => /speed\/shape model/.test(l))).toBe(true);
    // no splits.json: every judged query of each collection
    expect(file.fittedOn).toEqual([
      expect.objectContaining({ collection: 'med', queries: 30 }),
      expect.objectContaining({ collection: 'cisi', queries: 76 }),
    ]);
    expect(fit.collections.every((c) => c.heldOut !== null)).toBe(true);
    const encoder = await createCrossEncoder({ modelDir, workers: 1 });
    try {
      const scorer = createCrossEncoderScorer(encoder);
      expect(fit.model).toBe(scorer.id);
      const gate = createGate({ scorer, policy: { operatingPoints: await loadOperatingPoints(out, scorer) } });
      expect(gate.mode).toBe('balanced');
      expect(gate.operatingPoint).toEqual(file.points.balanced);
      const result = await gate.filter('lens proteins', med().slice(0, 10));
      expect(result.included.length).toBeGreaterThan(0);
      expect(result.stats.threshold).toBeGreaterThan(0);
      // Another length window is another model: its scores differ, so the points are refused.
      const other = await createCrossEncoder({ modelDir, workers: 1, maxLength: 64 });
      try {
        await expect(loadOperatingPoints(out, createCrossEncoderScorer(other))).rejects.toThrow(/fitted for model/);
      } finally {
        await other.close();
      }
    } finally {
      await encoder.close();
    }
  }, 120_000);

  it('refuses scored lists given beside collections, and a scores file it cannot trust', async () => {
    const base = { tier: 'fast-path', model: 'x', gateK: 20, queries: 'heldout', progress: false, log: silent };
    const good = join(dir, 'synthetic-scores.json');
    writeFileSync(good, serializeScoredLists([syntheticCollection('a', 1, 0.4), syntheticCollection('b', 2, 0.6)]));
    await expect(
      runFitPointsCommand({ ...base, collectionDirs: [join(DATA, 'med')], scoresIn: [good] }),
    ).rejects.toThrow(/not both/);
    await expect(
      runFitPointsCommand({ ...base, collectionDirs: [], scoresIn: [join(dir, 'no-such-scores.json')] }),
    ).rejects.toThrow(/cannot read it \(ENOENT\)/);
    const { fit } = await quietly(() => runFitPointsCommand({ ...base, collectionDirs: [], scoresIn: [good] }));
    expect(fit.collections.map((c) => c.collection)).toEqual(['a', 'b']);
    expect(fit.model).toBe('model-a');
  });
});

describe('scored lists file', () => {
  const collections = [syntheticCollection('a', 1, 0.4), syntheticCollection('b', 2, 0.6)];
  const withJunk: ScoredCollection = {
    ...collections[0]!,
    junk: [
      {
        relevances: [0.2, 0.1],
        relevant: [false, false],
        order: [0.3, 0.1],
        source: 'b',
        queryId: 'q7',
        docIds: ['x', 'y'],
      },
    ],
  };

  it('reads back what it wrote, junk lists and orders included', () => {
    const back = parseScoredLists(serializeScoredLists([withJunk, collections[1]!]));
    expect(back[0]).toEqual(withJunk);
    expect(back[1]).toEqual({ ...collections[1], junk: [] });
  });

  it('refuses a file it cannot trust, saying where', () => {
    const json = JSON.parse(serializeScoredLists([withJunk]));
    const broken = (edit: (j: typeof json) => void): string => {
      const copy = JSON.parse(JSON.stringify(json));
      edit(copy);
      return JSON.stringify(copy);
    };
    expect(() => parseScoredLists('{"format":', 'f.json')).toThrow(/f\.json: not JSON/);
    expect(() => parseScoredLists(broken((j) => (j.format = 'other')))).toThrow(/format "other"/);
    expect(() => parseScoredLists(broken((j) => (j.collections[0].lists[3].relevances[2] = 1.5)))).toThrow(
      /collections\[0\]\.lists\[3\]\.relevances\[2\]: not a probability/,
    );
    expect(() => parseScoredLists(broken((j) => j.collections[0].lists[0].relevant.pop()))).toThrow(
      /relevant: 9 entries, expected 10/,
    );
    expect(() => parseScoredLists(broken((j) => (j.collections[0].gateK = 5)))).toThrow(/10 candidates, gateK is 5/);
    // A query the first stage found nothing for is an empty list, not an error.
    expect(
      parseScoredLists(
        broken(
          (j) =>
            (j.collections[0].junk[0] = {
              ...j.collections[0].junk[0],
              docIds: [],
              relevances: [],
              relevant: [],
              order: [],
            }),
        ),
      )[0]!.junk,
    ).toHaveLength(1);
    expect(() => parseScoredLists(broken((j) => (j.collections[0].junk[0].relevant[0] = true)))).toThrow(
      /holds nothing relevant/,
    );
    expect(() => parseScoredLists(broken((j) => (j.collections[0].lists[0].judgments[0] = ['d', 'high'])))).toThrow(
      /grade not a number/,
    );
    expect(() => parseScoredLists(broken((j) => delete j.collections[0].model))).toThrow(
      /model: not a non-empty string/,
    );
    expect(() => parseScoredLists(broken((j) => (j.collections[0].lists[1].order = [1, null])))).toThrow(/order/);
  });
});

describe('relevance-gate fit-points input', () => {
  it('refuses an unknown query set and no collection', async () => {
    const base = { tier: 'fast-path', model: 'x', gateK: 20, progress: false, log: silent };
    await expect(
      runFitPointsCommand({ ...base, collectionDirs: [join(DATA, 'med')], queries: 'everything' }),
    ).rejects.toThrow(/--queries/);
    await expect(runFitPointsCommand({ ...base, collectionDirs: [], queries: 'heldout' })).rejects.toThrow(
      /--collection/,
    );
  });
});

/** MED passages as the gate receives them (title + text), in file order. */
function med(): Passage[] {
  return loadCollection(join(DATA, 'med')).docs.map((d) => ({ id: d.id, text: `${d.title} ${d.text}`.trim() }));
}
