/**
 * The work behind `relevance-gate eval` (the CLI file only parses options): load the collection,
 * load the tier, pick the query set, run the evaluation with a progress display, print a summary,
 * write the JSON report and the SVG plot.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createProgress } from '../../util/progress.js';
import { InvalidArgumentError } from '../../errors.js';
import { operatingPointsForScorer, readOperatingPointsFile } from '../../operating-points/file.js';
import { loadCollection } from './collection.js';
import { QUERY_SET_NAMES, type QuerySetName, resolveQuerySet } from './query-set.js';
import { renderOperatingPointsSvg, renderPrecisionRecallSvg, summarizeReport } from './report.js';
import { type EvalReport, runEval } from './run-eval.js';
import { loadEvalTier } from './tiers.js';

export interface EvalCommandOptions {
  readonly collectionDir: string;
  readonly tier: string;
  readonly model: string;
  readonly statsFile?: string | undefined;
  /** Embedding tier: exact dense retrieval over the corpus instead of reranking BM25's list. */
  readonly dense?: boolean;
  /** Cross-encoder and embedding tiers: the model folder's ONNX variant (e.g. 'int8'); default fp32. */
  readonly variant?: string;
  /** Fast-path tier: a bi-encoder folder whose cosines the passages carry as `embedding_similarity`. */
  readonly embeddingModel?: string;
  readonly queries: string;
  readonly k: number;
  readonly gateK: number;
  readonly targetPrecision?: number | undefined;
  readonly jsonOut?: string | undefined;
  readonly plotOut?: string | undefined;
  readonly progress: boolean;
  /** Pass first-stage ranks as the retrieval_rank feature (default true). */
  readonly retrievalRank?: boolean;
  /** An operating-points file (`relevance-gate fit-points --out`) to measure instead of the model's own points. */
  readonly operatingPointsFile?: string | undefined;
  /**
   * Other judged collections whose queries (the same query set) are retrieved from this corpus:
   * lists that hold nothing relevant, reported beside the real ones.
   */
  readonly junkCollectionDirs?: readonly string[] | undefined;
  readonly log?: (line: string) => void;
}

/** The JSON the CLI writes: the evaluation plus what was evaluated with what. */
export interface EvalJsonReport extends EvalReport {
  readonly tool: 'relevance-gate eval';
  readonly tier: {
    readonly name: string;
    readonly model: string;
    readonly description: string;
    readonly relevanceModel: boolean;
  };
  readonly querySet: { readonly name: string; readonly reason: string };
  readonly loadMs: number;
}

/** Where `--plot OUT.svg` puts the operating-point chart: OUT.operating-points.svg. */
export function operatingPointsPlotPath(plotOut: string): string {
  return plotOut.endsWith('.svg') ? `${plotOut.slice(0, -4)}.operating-points.svg` : `${plotOut}.operating-points.svg`;
}

/** Writes a report file, creating its folder. */
export function writeOut(path: string, content: string): void {
  const abs = resolve(path);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
}

export async function runEvalCommand(options: EvalCommandOptions): Promise<EvalJsonReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  if (!QUERY_SET_NAMES.includes(options.queries as QuerySetName)) {
    throw new InvalidArgumentError(`--queries must be one of ${QUERY_SET_NAMES.join(', ')}, got "${options.queries}"`);
  }
  const t0 = performance.now();
  const collection = loadCollection(options.collectionDir);
  const tier = await loadEvalTier({
    tier: options.tier,
    model: options.model,
    collection,
    statsFile: options.statsFile,
    ...(options.dense === true ? { dense: true } : {}),
    ...(options.variant === undefined ? {} : { variant: options.variant }),
    ...(options.embeddingModel === undefined ? {} : { embeddingModel: options.embeddingModel }),
    log,
  });
  try {
    const loadMs = Math.round(performance.now() - t0);
    const querySet = resolveQuerySet(collection, options.queries as QuerySetName, tier.splits);
    log(
      `eval: ${collection.name} (${collection.docs.length} docs), ${querySet.queryIds.length} queries: ${querySet.reason}`,
    );
    log(`eval: tier ${tier.name}: ${tier.description}`);
    if (!tier.relevanceModel)
      log(
        'eval: WARNING: this model is a speed/shape model with random weights; its relevance numbers are meaningless',
      );
    const pointsFile =
      options.operatingPointsFile === undefined
        ? undefined
        : await readOperatingPointsFile(options.operatingPointsFile);
    const operatingPoints = pointsFile === undefined ? undefined : operatingPointsForScorer(pointsFile, tier.scorer.id);
    const junkQueries = (options.junkCollectionDirs ?? []).map((dir) => {
      const other = loadCollection(dir);
      return {
        collection: other,
        queryIds: resolveQuerySet(other, options.queries as QuerySetName, tier.splits).queryIds,
      };
    });
    if (tier.prepareQueries !== undefined && junkQueries.length > 0)
      await tier.prepareQueries(
        junkQueries.flatMap((j) => j.queryIds.map((id) => j.collection.queryById.get(id)?.text ?? '')),
      );
    if (junkQueries.length > 0)
      log(
        `eval: junk lists: ${junkQueries.map((j) => `${j.queryIds.length} queries of ${j.collection.name}`).join(', ')} over ${collection.name}`,
      );
    if (operatingPoints !== undefined) log(`eval: operating points from ${options.operatingPointsFile}`);
    const targetPrecision = options.targetPrecision ?? tier.targetPrecision ?? 0.5;
    const progress = options.progress ? createProgress(`eval ${collection.name}`, querySet.queryIds.length) : null;
    const report = await runEval({
      collection,
      scorer: tier.scorer,
      queryIds: querySet.queryIds,
      k: options.k,
      gateK: options.gateK,
      targetPrecision,
      retrievalRank: options.retrievalRank ?? true,
      ...(tier.recommendedThreshold !== undefined ? { gateThreshold: tier.recommendedThreshold } : {}),
      ...(operatingPoints === undefined ? {} : { operatingPoints }),
      ...(pointsFile?.scoreCalibration === undefined ? {} : { scoreCalibration: pointsFile.scoreCalibration }),
      junkQueries,
      ...(tier.firstStage === undefined ? {} : { firstStage: tier.firstStage }),
      ...(progress ? { onProgress: (done: number) => progress.update(done) } : {}),
    });
    progress?.finish();
    const json: EvalJsonReport = {
      tool: 'relevance-gate eval',
      tier: {
        name: tier.name,
        model: options.model,
        description: tier.description,
        relevanceModel: tier.relevanceModel,
      },
      querySet: { name: querySet.name, reason: querySet.reason },
      loadMs,
      ...report,
    };
    process.stdout.write(`${summarizeReport(report)}\n`);
    if (options.jsonOut) {
      writeOut(options.jsonOut, `${JSON.stringify(json, null, 2)}\n`);
      log(`eval: wrote ${options.jsonOut}`);
    }
    if (options.plotOut) {
      const stage = report.firstStage.kind === 'dense' ? 'dense retrieval' : 'BM25';
      const title = `${collection.name}: ${tier.name} on ${stage} top ${report.gateK} (${report.queries} ${querySet.name} queries)`;
      writeOut(options.plotOut, renderPrecisionRecallSvg(report, title));
      log(`eval: wrote ${options.plotOut}`);
      const points = renderOperatingPointsSvg(report, `${title}: operating points`);
      if (points !== null) {
        const pointsOut = operatingPointsPlotPath(options.plotOut);
        writeOut(pointsOut, points);
        log(`eval: wrote ${pointsOut}`);
      }
    }
    return json;
  } finally {
    await tier.close();
  }
}
