/**
 * The work behind `relevance-gate fit-points` (the CLI file only parses options): for each judged
 * collection, load the tier (the fast path with that collection's own corpus statistics), score the
 * chosen queries' first-stage top gateK, release the tier; then fit the operating points on all
 * collections, measure them held out, print the tables and write the operating-points file.
 */
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { InvalidArgumentError } from '../../errors.js';
import { type OperatingPointsFile, serializeOperatingPointsFile } from '../../operating-points/file.js';
import { createProgress } from '../../util/progress.js';
import { type Collection, loadCollection } from './collection.js';
import { writeOut } from './eval-command.js';
import {
  fitScorerOperatingPoints,
  operatingPointsFileOf,
  type ScoredCollection,
  type ScorerPointsFit,
  scoreCollectionForFit,
} from './fit-scorer-points.js';
import type { OperatingPoint, OperatingPointName } from '../../gate/policies/operating-points.js';
import { type OperatingPointRow, PRECISE_BOUND_RECALL } from './operating-points.js';
import { parseScoredLists, serializeScoredLists } from './scored-lists-file.js';
import { QUERY_SET_NAMES, type QuerySetName, resolveQuerySet } from './query-set.js';
import type { EmbeddingCalibrationFit } from './embedding-tier.js';
import { loadEvalTier } from './tiers.js';

export interface FitPointsCommandOptions {
  readonly collectionDirs: readonly string[];
  /** Decision logs whose judged requests are fit data too (log-lists.ts), each one collection. */
  readonly logs?: readonly string[];
  /** Judgments of the logged requests (required with `logs`). */
  readonly logQrels?: string;
  /** Only the logs' decisions of this served model. */
  readonly logModel?: string;
  readonly tier: string;
  readonly model: string;
  /** Query set per collection (QUERY_SET_NAMES); 'heldout' = the queries the model did not train on. */
  readonly queries: string;
  readonly gateK: number;
  readonly preciseRecallFloor?: number | undefined;
  /** Per point, the most real lists its sufficiency verdict may leave empty on a training collection (FitOptions.verdictRealEmpty). */
  readonly verdictRealEmpty?: Readonly<Partial<Record<OperatingPointName, number>>>;
  /** Fit `balanced` for the contract over the list-confidence grid when junk lists exist (FitOptions.listConfidence; default true). */
  readonly listConfidence?: boolean;
  /** Where to write the operating-points file. */
  readonly out?: string | undefined;
  /** Embedding tier: where to write the fitted calibration file (the model folder's calibration.json is read by the scorer). */
  readonly calibrationOut?: string | undefined;
  /** Where to write the whole fit (every row, bounds) as JSON. */
  readonly jsonOut?: string | undefined;
  /** Where to write every scored list (scored-lists-file.ts), to fit again without scoring. */
  readonly scoresOut?: string | undefined;
  /** Fit on these files' scored lists instead of scoring collections (no `collectionDirs` then). */
  readonly scoresIn?: readonly string[];
  readonly progress: boolean;
  readonly retrievalRank?: boolean;
  /** Fast-path tier: a bi-encoder folder whose cosines the passages carry as `embedding_similarity`. */
  readonly embeddingModel?: string;
  /**
   * Score each corpus with the other collections' queries too (lists that hold nothing relevant),
   * so every point gets a sufficiency verdict and a floor. Default true (with two collections or more).
   */
  readonly junk?: boolean;
  readonly log?: (line: string) => void;
}

export interface FitPointsCommandResult {
  readonly fit: ScorerPointsFit;
  readonly file: OperatingPointsFile;
  /** Embedding tier: the calibration fitted before the points (which were scored with it). */
  readonly calibration?: EmbeddingCalibrationFit;
}

function num(v: number | null, digits = 3): string {
  return v === null ? 'n/a' : v.toFixed(digits);
}

function percent(v: number | null): string {
  return v === null ? 'n/a' : `${(100 * v).toFixed(1)} %`;
}

function rowCells(r: OperatingPointRow): string {
  const junk =
    r.junkLists === 0 ? 'n/a' : `${percent(r.junkNothingKeptShare)} (${(r.junkKeptPerList ?? 0).toFixed(2)} kept)`;
  return `${num(r.precision)} | ${num(r.recall)} | ${num(r.f1)} | ${num(r.f1KeepAll)} | ${r.f1Ratio.toFixed(2)}× | ${r.nothingKept} / ${r.queriesWithRelevant} (${percent(r.nothingKeptShare)}) | ${r.keptPerQuery.toFixed(2)} | ${junk}`;
}

const ROW_HEADER =
  'precision | recall | F1 kept | F1 keep-all | F1 ratio | nothing kept (of queries with a relevant candidate) | kept / query | junk lists left empty (kept per junk list)';

/** A point's parameters in a table cell: beta / shift, then gamma and emptyBelow when it has them. */
function pointCell(point: OperatingPoint): string {
  const extra = [
    ...(point.gamma === undefined ? [] : [`gamma ${point.gamma}`]),
    ...(point.emptyBelow === undefined ? [] : [`empty below ${point.emptyBelow}`]),
  ];
  return `${point.beta} / ${point.shift}${extra.length === 0 ? '' : ` (${extra.join(', ')})`}`;
}

/** The fit as Markdown tables: the points, their meaning held out and fitted, and the bounds. */
export function summarizeFit(fit: ScorerPointsFit): string {
  const lines: string[] = [];
  const w = (s: string) => lines.push(s);
  w(`operating points of model ${fit.model} (gate on the first-stage top ${fit.gateK})`);
  w('');
  w('| point | beta / shift | floor | verdict | fit objective |');
  w('|---|---|---|---|---|');
  for (const [name, f] of Object.entries(fit.fits))
    w(
      `| ${name} | ${pointCell(f.point)} | ${f.point.floor} | ${f.point.sufficiency === undefined ? 'none' : 'yes'} | ${f.objective} |`,
    );
  if (fit.collections.length > 1) {
    w('');
    w('Held out: each collection gated by points fitted on the OTHER collections (what a new collection gets).');
    w('');
    w(`| collection | point | beta / shift | ${ROW_HEADER} |`);
    w(`|---|---|---|${'---|'.repeat(8)}`);
    for (const c of fit.collections)
      for (const r of c.heldOut?.rows ?? [])
        w(`| ${c.collection} | ${r.name} | ${pointCell(r.point)} | ${rowCells(r)} |`);
    const sources = [
      ...new Set(fit.collections.flatMap((c) => (c.heldOut?.rows ?? []).flatMap((r) => Object.keys(r.junkBySource)))),
    ].sort();
    if (sources.length > 0) {
      w('');
      w(
        "Junk lists left empty held out, by the collection their queries came from (a corpus can hold passages on another collection's topics):",
      );
      w('');
      w(`| collection | point | ${sources.join(' | ')} |`);
      w(`|---|---|${'---|'.repeat(sources.length)}`);
      for (const c of fit.collections)
        for (const r of c.heldOut?.rows ?? []) {
          const cells = sources.map((s) => {
            const share = r.junkBySource[s];
            return share === undefined ? '' : `${percent(share.nothingKeptShare)} of ${share.lists}`;
          });
          w(`| ${c.collection} | ${r.name} | ${cells.join(' | ')} |`);
        }
    }
  }
  w('');
  w('Fitted: each collection gated by the points above (fitted on every collection, this one included).');
  w('');
  w(`| collection | queries | point | ${ROW_HEADER} |`);
  w(`|---|---|---|${'---|'.repeat(8)}`);
  for (const c of fit.collections)
    for (const r of c.fitted) w(`| ${c.collection} | ${c.queries} | ${r.name} | ${rowCells(r)} |`);
  w('');
  w("Bounds (the collection's own labels known): no single point, and no cut of the order, does better.");
  w('');
  w(
    `| collection | F1 keep-all | best point of the fit grid | best cut per query | most precise grid point at recall ≥ ${PRECISE_BOUND_RECALL} (precision / recall) |`,
  );
  w('|---|---|---|---|---|');
  for (const c of fit.collections) {
    const b = c.bounds;
    if (b === null) w(`| ${c.collection} | n/a (no relevant candidate) | | | |`);
    else {
      const p = b.preciseGridBest;
      const precise =
        p === null
          ? 'none reaches it'
          : `${num(p.precision)} / ${num(p.recall)} (beta ${p.point.beta}, shift ${p.point.shift})`;
      w(
        `| ${c.collection} | ${num(b.f1KeepAll)} | ${num(b.gridBest.f1)} (${b.gridBest.f1Ratio.toFixed(2)}×, beta ${b.gridBest.point.beta}, shift ${b.gridBest.point.shift}) | ${num(b.perQueryCut.f1)} (${b.perQueryCut.f1Ratio.toFixed(2)}×) | ${precise} |`,
      );
    }
  }
  const curves = fit.collections.filter((c) => c.verdict !== null);
  if (curves.length > 0) {
    w('');
    w(
      "Sufficiency verdict held out (balanced weights fitted on the other collections): real lists with a relevant candidate left empty / junk lists left empty, the bias set on the other collections to leave at most the target share of their real lists empty; bound: fitted on this collection's own lists at 10 %.",
    );
    w('');
    const targets = curves[0]!.verdict!.curve.map((p) => `${(100 * p.target).toFixed(0)} %`);
    w(`| collection | junk lists | ${targets.join(' | ')} | label-known bound |`);
    w(`|---|---|${'---|'.repeat(targets.length + 1)}`);
    for (const c of curves) {
      const v = c.verdict!;
      const cells = v.curve.map((p) => `${percent(p.realEmpty)} / ${percent(p.junkEmpty)}`);
      const bound = v.bound === null ? 'n/a' : `${percent(v.bound.realEmpty)} / ${percent(v.bound.junkEmpty)}`;
      w(`| ${c.collection} | ${c.junkLists} | ${cells.join(' | ')} | ${bound} |`);
    }
  }
  w('');
  w("Returned score: expected calibration error (10 bins) on each collection's real lists.");
  w('');
  w('| collection | fitted on all | held out (fitted on the others) | bound (fitted on its own labels) |');
  w('|---|---|---|---|');
  for (const c of fit.collections)
    w(
      `| ${c.collection} | ${num(c.calibration.fitted)} | ${num(c.calibration.heldOut)} | ${num(c.calibration.bound)} |`,
    );
  return lines.join('\n');
}

export async function runFitPointsCommand(options: FitPointsCommandOptions): Promise<FitPointsCommandResult> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  if (!QUERY_SET_NAMES.includes(options.queries as QuerySetName))
    throw new InvalidArgumentError(`--queries must be one of ${QUERY_SET_NAMES.join(', ')}, got "${options.queries}"`);
  const logs = options.logs ?? [];
  const scoresIn = options.scoresIn ?? [];
  if (scoresIn.length > 0 && options.collectionDirs.length > 0)
    throw new InvalidArgumentError(
      '--scores-in replaces scoring: give the collections either as --collection or as --scores-in, not both',
    );
  if (options.collectionDirs.length === 0 && logs.length === 0 && scoresIn.length === 0)
    throw new InvalidArgumentError('give at least one --collection, --scores-in or --log');
  if (logs.length > 0 && options.logQrels === undefined)
    throw new InvalidArgumentError('--log needs --log-qrels: the judgments of the logged requests');
  const collections = options.collectionDirs.map((dir) => loadCollection(dir));
  // Every collection's query set is resolved once (against the first tier's splits) so that the
  // junk lists of one corpus are the other collections' same queries.
  const querySets = new Map<string, readonly string[]>();
  const scored: ScoredCollection[] = [];
  let shapeModel = false;
  const calibration =
    options.tier === 'embedding' && collections.length > 0
      ? await fitCalibrationStep(options, collections, log)
      : undefined;
  if (calibration === undefined && options.calibrationOut !== undefined)
    throw new InvalidArgumentError('--calibration-out is for --tier embedding with --collection folders');
  for (const collection of collections) {
    // One tier per collection: the fast path scores with the collection's own corpus statistics,
    // and a cross-encoder's workers are released before the next collection loads.
    const tier = await loadEvalTier({
      tier: options.tier,
      model: options.model,
      collection,
      ...(calibration === undefined ? {} : { calibration: calibration.calibration }),
      ...(options.embeddingModel === undefined ? {} : { embeddingModel: options.embeddingModel }),
      log,
    });
    try {
      shapeModel ||= !tier.relevanceModel;
      const setOf = (c: typeof collection): readonly string[] => {
        let ids = querySets.get(c.fingerprint);
        if (ids === undefined) {
          const set = resolveQuerySet(c, options.queries as QuerySetName, tier.splits);
          ids = set.queryIds;
          querySets.set(c.fingerprint, ids);
          if (c === collection) log(`fit-points: ${c.name}: ${ids.length} queries: ${set.reason}`);
        }
        return ids;
      };
      const queryIds = setOf(collection);
      const foreign =
        options.junk === false
          ? []
          : collections.filter((c) => c !== collection).map((c) => ({ collection: c, queryIds: setOf(c) }));
      const total = queryIds.length + foreign.reduce((n, f) => n + f.queryIds.length, 0);
      const progress = options.progress ? createProgress(`fit-points ${collection.name}`, total) : null;
      scored.push(
        await scoreCollectionForFit({
          collection,
          scorer: tier.scorer,
          queryIds,
          foreign,
          gateK: options.gateK,
          retrievalRank: options.retrievalRank ?? true,
          ...(progress ? { onProgress: (done: number) => progress.update(done) } : {}),
        }),
      );
      progress?.finish();
    } finally {
      await tier.close();
    }
  }
  for (const file of scoresIn) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new InvalidArgumentError(
        `--scores-in ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    const read = parseScoredLists(text, file);
    log(
      `fit-points: ${file}: ${read.map((c) => `${c.name} ${c.lists.length} lists + ${c.junk?.length ?? 0} junk`).join(', ')} scored by ${read[0]?.model ?? 'no model'}`,
    );
    scored.push(...read);
  }
  if (options.scoresOut !== undefined) {
    writeOut(options.scoresOut, serializeScoredLists(scored));
    log(`fit-points: wrote ${options.scoresOut}`);
  }
  if (logs.length > 0) scored.push(...(await logCollections(logs, options, log)));
  if (shapeModel)
    log('fit-points: WARNING: a speed/shape model with random weights: its operating points and figures mean nothing');
  const fit = fitScorerOperatingPoints(scored, {
    ...(options.preciseRecallFloor === undefined ? {} : { preciseRecallFloor: options.preciseRecallFloor }),
    ...(options.verdictRealEmpty === undefined ? {} : { verdictRealEmpty: options.verdictRealEmpty }),
    ...(options.listConfidence === undefined ? {} : { listConfidence: options.listConfidence }),
  });
  const file = operatingPointsFileOf(fit);
  process.stdout.write(`${summarizeFit(fit)}\n`);
  if (options.out !== undefined) {
    writeOut(options.out, serializeOperatingPointsFile(file));
    log(`fit-points: wrote ${options.out}`);
  }
  if (options.jsonOut !== undefined) {
    writeOut(options.jsonOut, `${JSON.stringify({ tool: 'relevance-gate fit-points', ...fit }, null, 2)}\n`);
    log(`fit-points: wrote ${options.jsonOut}`);
  }
  return { fit, file, ...(calibration === undefined ? {} : { calibration }) };
}

/** Each decision log's judged requests as one collection of the fit (log-lists.ts). */
async function logCollections(
  dirs: readonly string[],
  options: FitPointsCommandOptions,
  log: (line: string) => void,
): Promise<ScoredCollection[]> {
  const { readDecisionLog, readJudgments } = await import('../../decision-log/index.js');
  const { logLists } = await import('./log-lists.js');
  const judgments = await readJudgments(options.logQrels as string);
  const out: ScoredCollection[] = [];
  for (const dir of dirs) {
    const name = `log:${basename(resolve(dir))}`;
    const lists = logLists(await readDecisionLog(dir), judgments, {
      name,
      gateK: options.gateK,
      ...(options.logModel === undefined ? {} : { model: options.logModel }),
    });
    log(
      `fit-points: ${name}: ${lists.judged} judged requests of ${lists.decisions} live decisions (model ${lists.collection.model})` +
        (lists.withUnscored > 0 ? `; ${lists.withUnscored} skipped for an unscored passage` : ''),
    );
    out.push(lists.collection);
  }
  return out;
}

/**
 * The embedding tier's calibration step: σ(a·cos + b) fitted on every collection's judged BM25
 * top gateK (the lists the gate sees), written to `calibrationOut`; the points are then scored
 * with it, so the operating-points file matches a scorer that reads this calibration.
 */
async function fitCalibrationStep(
  options: FitPointsCommandOptions,
  collections: readonly Collection[],
  log: (line: string) => void,
): Promise<EmbeddingCalibrationFit> {
  const { calibrationPairs, fitEmbeddingCalibration } = await import('./embedding-tier.js');
  const { calibrationFileJson } = await import('../../tiers/embedding/calibration.js');
  const pairs: Array<Awaited<ReturnType<typeof calibrationPairs>>> = [];
  let modelId = '';
  for (const collection of collections) {
    const tier = await loadEvalTier({ tier: 'embedding', model: options.model, collection, log });
    try {
      modelId = tier.scorer.id.replace(/:platt[^:]*$/, '');
      const queryIds = resolveQuerySet(collection, options.queries as QuerySetName, tier.splits).queryIds;
      pairs.push(await calibrationPairs(collection, tier.scorer, queryIds, options.gateK));
    } finally {
      await tier.close();
    }
  }
  const fit = fitEmbeddingCalibration(pairs, options.gateK);
  const { a, b } = fit.calibration;
  log(
    `fit-points: calibration relevant = σ(${a.toFixed(4)}·cos ${b < 0 ? '−' : '+'} ${Math.abs(b).toFixed(4)}) from ${fit.pairs} pairs (${fit.positives} relevant) of ${fit.collections.map((c) => `${c.name} ${c.queries} queries`).join(', ')}`,
  );
  if (options.calibrationOut !== undefined) {
    writeOut(
      options.calibrationOut,
      calibrationFileJson(fit.calibration, modelId, {
        collections: fit.collections,
        pairs: fit.pairs,
        positives: fit.positives,
        gateK: fit.gateK,
        firstStage: fit.firstStage,
        queries: options.queries,
      }),
    );
    log(`fit-points: wrote ${options.calibrationOut}`);
  }
  return fit;
}
