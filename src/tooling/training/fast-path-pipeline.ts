/**
 * `relevance-gate train-fast-path` / `scripts/train-fast-path.ts`: trains the fast-path model on the
 * collections under a data folder, writes the model directory, evaluates the TEST queries of every
 * collection with the written files (the same code path as `relevance-gate eval`), and writes the
 * model card. `check: true` reruns the same command in a fresh process and fails unless every file
 * it writes is byte-identical.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { createProgress } from '../../util/progress.js';
import { InvalidArgumentError, RelevanceGateError } from '../../errors.js';
import { loadCollection } from '../eval/collection.js';
import type { EvalReport } from '../eval/run-eval.js';
import { buildCorpusStats } from '../../features/corpus-stats.js';
import { LexicalFeaturizer } from '../../features/featurizer.js';
import { type GridPoint, type LambdaMartSettings, modelObjectiveOf } from './grid-search.js';
import { renderModelCard, type TestResult } from './model-card.js';
import { buildMeta, modelBytesToXGBoostJson, stageModelDir } from './model-dir.js';
import {
  DEFAULT_EMBEDDING_DROPOUT,
  type TrainFastPathOptions,
  type TrainFastPathResult,
  trainFastPath,
} from './train-fast-path.js';
import { createXGBoostBackend } from './xgboost-backend.js';
import { ReproducibilityError } from './errors.js';

export { ReproducibilityError } from './errors.js';

export type GridName = 'full' | 'loco' | 'quick' | 'tiny';

/**
 * LambdaMART settings of the grids: RankNet σ 1, every pair of differently graded candidates,
 * early stopping after 80 rounds without a better validation selection score.
 */
export const LAMBDAMART_SETTINGS: LambdaMartSettings = {
  sigma: 1,
  truncation: Number.POSITIVE_INFINITY,
  patience: 80,
  epsilon: 1e-3,
  queryWeighting: 'query',
};

/** LambdaMART warm-started from the best pointwise point of the grid (its leaves × 5): the shipped model's last step. */
const LAMBDAMART_FROM_POINTWISE: GridPoint = {
  objective: 'lambdamart',
  maxDepth: 4,
  eta: 0.1,
  rounds: 200,
  minChildWeight: 100,
  lambdaMart: { ...LAMBDAMART_SETTINGS, warmStart: { scale: 5 } },
};

/** Hyperparameter grids. `full` is what the shipped model was selected from. */
export const GRIDS: Readonly<Record<GridName, readonly GridPoint[]>> = {
  full: [
    { objective: 'binary:logistic', maxDepth: 4, eta: 0.1, rounds: 150, minChildWeight: 1 },
    { objective: 'reg:logistic', maxDepth: 4, eta: 0.1, rounds: 150, minChildWeight: 1 },
    { objective: 'reg:squarederror', maxDepth: 3, eta: 0.1, rounds: 150, minChildWeight: 1 },
    { objective: 'reg:squarederror', maxDepth: 5, eta: 0.1, rounds: 150, minChildWeight: 1 },
    { objective: 'reg:squarederror', maxDepth: 4, eta: 0.05, rounds: 300, minChildWeight: 1 },
    { objective: 'reg:squarederror', maxDepth: 3, eta: 0.05, rounds: 300, minChildWeight: 1 },
    { objective: 'reg:squarederror', maxDepth: 4, eta: 0.1, rounds: 150, minChildWeight: 1 },
    {
      objective: 'lambdamart',
      maxDepth: 4,
      eta: 0.1,
      rounds: 250,
      minChildWeight: 100,
      lambdaMart: LAMBDAMART_SETTINGS,
    },
    LAMBDAMART_FROM_POINTWISE,
  ],
  /**
   * The shipped model's recipe (its best pointwise point, then LambdaMART boosting from it) without
   * the rest of the full grid: for leave-one-collection-out base models (research/loco/loco-base.ts).
   */
  loco: [
    { objective: 'reg:squarederror', maxDepth: 4, eta: 0.05, rounds: 300, minChildWeight: 1 },
    LAMBDAMART_FROM_POINTWISE,
  ],
  quick: [{ objective: 'binary:logistic', maxDepth: 4, eta: 0.1, rounds: 100, minChildWeight: 1 }],
  tiny: [{ objective: 'binary:logistic', maxDepth: 2, eta: 0.3, rounds: 8, minChildWeight: 1 }],
};

export interface FastPathPipelineOptions {
  /** Folder holding collection folders (../shared/data). */
  readonly dataDir: string;
  /** Collection folder names; default: every folder with a docs.jsonl, sorted. */
  readonly collections?: readonly string[];
  readonly outDir: string;
  readonly seed: number;
  readonly targetPrecision: number;
  readonly grid: GridName;
  readonly k?: number;
  readonly gateK?: number;
  readonly retrievalRankDropout?: number;
  /**
   * A bi-encoder model folder: its query–document cosines are given to the trees as
   * `embedding_similarity` (training, validation and the test evaluation), recorded in meta.json.
   */
  readonly embeddingModel?: string;
  readonly minQueriesPerCollection?: number;
  readonly maxQueriesPerSplit?: number;
  readonly check: boolean;
  readonly progress: boolean;
  readonly log?: (line: string) => void;
}

export interface FastPathPipelineResult {
  readonly outDir: string;
  readonly training: TrainFastPathResult;
  readonly tests: readonly TestResult[];
  readonly reproducible: boolean | null;
  readonly timingsMs: {
    readonly train: number;
    readonly write: number;
    readonly test: number;
    readonly check: number | null;
  };
}

/** Collection folders under dataDir (those with docs.jsonl), sorted by name. */
export function discoverCollections(dataDir: string): string[] {
  return readdirSync(dataDir)
    .filter((name) => {
      try {
        return statSync(join(dataDir, name, 'docs.jsonl')).isFile();
      } catch {
        return false;
      }
    })
    .sort();
}

/**
 * `relevance-gate eval` on the staged model, in a fresh process: the model card then reports exactly
 * what a user running the eval command gets (nothing left over from training in this process).
 */
export function evalInFreshProcess(
  collectionDir: string,
  modelDir: string,
  k: number,
  gateK: number,
  targetPrecision: number,
  retrievalRank: boolean,
  embeddingModel?: string,
): EvalReport {
  const dir = mkdtempSync(join(tmpdir(), 'rg-train-eval-'));
  try {
    const jsonOut = join(dir, 'eval.json');
    const ext = extname(fileURLToPath(import.meta.url));
    const cli = fileURLToPath(new URL(`../../cli/main${ext}`, import.meta.url));
    const args = [
      'eval',
      '--collection',
      collectionDir,
      '--tier',
      'fast-path',
      '--model',
      modelDir,
      '--queries',
      'test',
    ];
    args.push(
      '--k',
      String(k),
      '--gate-k',
      String(gateK),
      '--target-precision',
      String(targetPrecision),
      '--json',
      jsonOut,
      '--no-progress',
    );
    if (!retrievalRank) args.push('--no-retrieval-rank');
    if (embeddingModel !== undefined) args.push('--embedding-model', embeddingModel);
    const run = spawnSync(process.execPath, [...process.execArgv, cli, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
    if (run.status !== 0) {
      throw new RelevanceGateError(
        'RG_ERR_EVAL_FAILED',
        `relevance-gate ${args.join(' ')} failed (exit ${run.status}): ${run.stderr.slice(-2000)}`,
      );
    }
    return JSON.parse(readFileSync(jsonOut, 'utf8')) as EvalReport;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs this same command again in a fresh process (same arguments without --check, writing to a
 * temporary folder) and compares every file byte for byte. A fresh process, because that is what
 * "the same command" means, and because it also catches state that leaks between runs in one process.
 */
function checkReproducible(outDir: string, log: (line: string) => void): boolean {
  const tmpOut = mkdtempSync(join(tmpdir(), 'rg-train-check-'));
  try {
    const args = process.argv.slice(2).filter((a) => a !== '--check');
    args.push('--out', tmpOut, '--no-progress');
    log(`train-fast-path: --check: rerunning in a fresh process: ${[process.argv[1], ...args].join(' ')}`);
    const run = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
    if (run.status !== 0) {
      log(`train-fast-path: --check: the second run failed (exit ${run.status}): ${run.stderr.slice(-2000)}`);
      return false;
    }
    const names = readdirSync(outDir).sort();
    const other = readdirSync(tmpOut).sort();
    let same = names.join('/') === other.join('/');
    if (!same) log(`train-fast-path: --check: different file lists: ${names.join(', ')} vs ${other.join(', ')}`);
    for (const name of names) {
      const a = readFileSync(join(outDir, name));
      const b = other.includes(name) ? readFileSync(join(tmpOut, name)) : Buffer.alloc(0);
      const equal = a.equals(b);
      log(
        `train-fast-path: --check: ${name}: ${equal ? 'identical' : 'DIFFERENT'} (${a.length} bytes, sha256 ${createHash('sha256').update(a).digest('hex').slice(0, 16)})`,
      );
      same &&= equal;
    }
    return same;
  } finally {
    rmSync(tmpOut, { recursive: true, force: true });
  }
}

export async function runFastPathPipeline(options: FastPathPipelineOptions): Promise<FastPathPipelineResult> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const dataDir = resolve(options.dataDir);
  const names = options.collections ?? discoverCollections(dataDir);
  if (names.length === 0) throw new InvalidArgumentError(`no collections (folders with docs.jsonl) under ${dataDir}`);
  const grid = GRIDS[options.grid];
  if (!grid) throw new InvalidArgumentError(`unknown grid "${options.grid}" (full, loco, quick, tiny)`);
  const k = options.k ?? 100;
  const gateK = options.gateK ?? 20;

  const bars = new Map<string, ReturnType<typeof createProgress>>();
  const embeddingModel = options.embeddingModel === undefined ? undefined : resolve(options.embeddingModel);
  const similarities =
    embeddingModel === undefined
      ? null
      : await (await import('../eval/embedding-similarity.js')).createEmbeddingSimilarities(embeddingModel, { log });
  try {
    return await trainAndWrite();
  } finally {
    await similarities?.close();
  }

  async function trainAndWrite(): Promise<FastPathPipelineResult> {
    const trainOptions = (gridPoints: readonly GridPoint[]): TrainFastPathOptions => ({
      collectionDirs: names.map((n) => join(dataDir, n)),
      seed: options.seed,
      k,
      gateK,
      targetPrecision: options.targetPrecision,
      grid: gridPoints,
      retrievalRankDropout: options.retrievalRankDropout ?? 0.5,
      ...(similarities === null ? {} : { embeddingSimilarity: (c) => similarities.forCollection(c) }),
      minQueriesPerCollection: options.minQueriesPerCollection ?? 100,
      ...(options.maxQueriesPerSplit !== undefined ? { maxQueriesPerSplit: options.maxQueriesPerSplit } : {}),
      log,
      ...(options.progress
        ? {
            onDatasetProgress: (phase: string, done: number, total: number) => {
              let bar = bars.get(phase);
              if (!bar) {
                bar = createProgress(`features ${phase}`, total);
                bars.set(phase, bar);
              }
              bar.update(done);
              if (done === total) bar.finish();
            },
          }
        : {}),
    });
    const deps = {
      featurizerFor: async (c: { docs: readonly { title: string; text: string }[] }) =>
        new LexicalFeaturizer(await buildCorpusStats(c.docs)),
      backend: createXGBoostBackend(),
    };

    const t0 = performance.now();
    const training = await trainFastPath(trainOptions(grid), deps);
    const t1 = performance.now();

    // Statistics of every training collection together: the fallback for callers without their own.
    const allDocs = names.flatMap((n) => loadCollection(join(dataDir, n)).docs);
    const stats = await buildCorpusStats(allDocs, { source: `training collections: ${names.join(', ')}` });
    const statsBytes = stats.encode();
    const modelJson = await modelBytesToXGBoostJson(training.modelBytes);
    const p = training.chosen.point;
    const lambdaMart = p.objective === 'lambdamart' ? p.lambdaMart : undefined;
    const meta = buildMeta({
      objective: modelObjectiveOf(p.objective),
      recommendedThreshold: training.threshold.threshold,
      targetPrecision: options.targetPrecision,
      trainedOn: names,
      ...(training.calibration ? { calibration: training.calibration } : {}),
      ...(training.rankingBlend ? { rankingBlend: training.rankingBlend.blend } : {}),
      provenance: {
        hyperparameters: {
          ...(lambdaMart
            ? {
                method: 'lambdamart',
                maxDepth: p.maxDepth,
                learningRate: p.eta,
                trees: training.chosen.trees,
                maxRounds: p.rounds,
                minChildWeight: p.minChildWeight,
                sigma: lambdaMart.sigma,
                truncation: Number.isFinite(lambdaMart.truncation) ? lambdaMart.truncation : 'all pairs',
                patience: lambdaMart.patience,
                epsilon: lambdaMart.epsilon,
                queryWeighting: lambdaMart.queryWeighting,
                ...(lambdaMart.warmStart
                  ? { warmStart: { from: 'best pointwise grid point', leafScale: lambdaMart.warmStart.scale } }
                  : {}),
              }
            : {
                method: p.objective,
                maxDepth: p.maxDepth,
                eta: p.eta,
                rounds: p.rounds,
                minChildWeight: p.minChildWeight,
              }),
          subsample: 1,
          colsampleBytree: 1,
        },
        seed: options.seed,
        trainer: lambdaMart
          ? 'LambdaMART (src/training/lambdamart.ts): tree structures fitted by ml-xgboost 1.1.2 (WASM XGBoost 0.8x), Newton leaf values, written as XGBoost JSON'
          : 'ml-xgboost 1.1.2 (WASM XGBoost 0.8x), converted to XGBoost JSON',
        firstStage: { kind: 'bm25', library: 'minisearch', k1: 1.2, b: 0.75, candidates: k },
        retrievalRank: 'optional: pass passage.features.retrieval_rank (1 = best) when the retriever order is known',
        ...(similarities === null
          ? {}
          : {
              embeddingSimilarity: {
                use: 'pass passage.features.embedding_similarity: the cosine of the query and passage embeddings of this model',
                modelId: similarities.source.modelId,
                model: modelNameOf(similarities.source.modelDir),
                dimensions: similarities.source.dimensions,
                trainingDropout: DEFAULT_EMBEDDING_DROPOUT,
              },
            }),
        modelCard: 'MODEL_CARD.md',
      },
    });
    const staged = stageModelDir(options.outDir, { modelJson, meta, splits: training.splits, statsBytes });
    const t2 = performance.now();

    const tests: TestResult[] = [];
    try {
      for (const name of names) {
        const ids = training.splits.collections[name]!.test;
        const withRank = evalInFreshProcess(
          join(dataDir, name),
          staged.path,
          k,
          gateK,
          options.targetPrecision,
          true,
          embeddingModel,
        );
        const textOnly = evalInFreshProcess(
          join(dataDir, name),
          staged.path,
          k,
          gateK,
          options.targetPrecision,
          false,
          embeddingModel,
        );
        if (withRank.queries !== ids.length || textOnly.gate.thresholdSource !== 'given') {
          throw new RelevanceGateError(
            'RG_ERR_EVAL_MISMATCH',
            `test evaluation of ${name} did not use the model's test split and threshold`,
          );
        }
        tests.push({ name, withRank, textOnly });
        log(
          `train-fast-path: test ${name} (${ids.length} q): nDCG@10 BM25 ${withRank.ndcg10.firstStage?.toFixed(4)} → reranked ${withRank.ndcg10.reranked?.toFixed(4)} ` +
            `(text only ${textOnly.ndcg10.reranked?.toFixed(4)}); gate precision ${withRank.gate.precisionAll?.toFixed(3)} → ${withRank.gate.precisionKept?.toFixed(3)}, recall kept ${withRank.gate.recallKept?.toFixed(3)}`,
        );
      }
      const t3 = performance.now();

      const report = {
        seed: options.seed,
        collections: training.collections,
        grid: training.grid.map((g) => ({
          point:
            g.point.lambdaMart && !Number.isFinite(g.point.lambdaMart.truncation)
              ? { ...g.point, lambdaMart: { ...g.point.lambdaMart, truncation: 'all pairs' } }
              : g.point,
          trees: g.trees,
          roundsTrained: g.roundsTrained,
          validationNdcg10: g.ndcg10ByCollection,
          macroNdcg10: g.macroNdcg10,
          selection: g.selection,
          modelBytes: g.modelBytes,
        })),
        chosen: {
          objective: training.chosen.point.objective,
          maxDepth: p.maxDepth,
          eta: p.eta,
          minChildWeight: p.minChildWeight,
          trees: training.chosen.trees,
        },
        threshold: training.threshold,
        ...(training.rankingBlend
          ? {
              rankingBlend: {
                lambda: training.rankingBlend.blend.lambda,
                rule: training.rankingBlend.rule,
                grid: training.rankingBlend.grid,
              },
            }
          : {}),
        trainRows: training.trainRows,
        validationRows: training.validationRows,
        test: tests.map((t) => ({
          name: t.name,
          queries: t.withRank.queries,
          ndcg10: {
            firstStage: t.withRank.ndcg10.firstStage,
            reranked: t.withRank.ndcg10.reranked,
            rerankedTextOnly: t.textOnly.ndcg10.reranked,
          },
          map: t.withRank.map,
          gate: t.withRank.gate,
          gateTextOnly: t.textOnly.gate,
        })),
      };
      staged.writeReports(
        report,
        renderModelCard({
          training,
          tests,
          meta,
          options: {
            seed: options.seed,
            targetPrecision: options.targetPrecision,
            k,
            gateK,
            grid: options.grid,
            names,
          },
          statsTerms: stats.termCount,
        }),
      );
      staged.commit();
      log(`train-fast-path: wrote ${resolve(options.outDir)}`);

      let reproducible: boolean | null = null;
      let checkMs: number | null = null;
      if (options.check) {
        const t4 = performance.now();
        reproducible = checkReproducible(resolve(options.outDir), log);
        checkMs = Math.round(performance.now() - t4);
        if (!reproducible)
          throw new ReproducibilityError(`a second run of the same command wrote different files (see the log above)`);
      }
      return {
        outDir: resolve(options.outDir),
        training,
        tests,
        reproducible,
        timingsMs: {
          train: Math.round(t1 - t0),
          write: Math.round(t2 - t1),
          test: Math.round(t3 - t2),
          check: checkMs,
        },
      };
    } catch (err) {
      staged.discard();
      throw err;
    }
  }
}

/** The name a bi-encoder folder gives its source model (relevance-gate-model.json), else the folder's name. */
function modelNameOf(dir: string): string {
  try {
    const meta = JSON.parse(readFileSync(join(dir, 'relevance-gate-model.json'), 'utf8')) as {
      source?: { name?: unknown };
    };
    if (typeof meta.source?.name === 'string') return meta.source.name;
  } catch {
    // no readable descriptor: the folder name says what it is
  }
  return dir.split(/[\\/]/).filter(Boolean).pop() ?? dir;
}
