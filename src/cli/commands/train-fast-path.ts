/**
 * `relevance-gate train-fast-path`: trains and writes the fast-path lexical model directory (see
 * src/tooling/training/fast-path-pipeline.ts and models/fast-path-lexical/MODEL_CARD.md).
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';
import type { GridName } from '../../tooling/training/fast-path-pipeline.js';

interface TrainCliOptions {
  data: string;
  out: string;
  collections?: string;
  seed: string;
  targetPrecision: string;
  grid: string;
  maxQueries?: string;
  embeddingModel?: string;
  check: boolean;
  progress: boolean;
}

export function register(program: Command): void {
  program
    .command('train-fast-path')
    .description(
      'Train the fast-path lexical model on judged collections (BM25 candidates, native features, ml-xgboost) and write the model directory with its model card.',
    )
    .option(
      '--data <dir>',
      'folder of judged collections (each: docs.jsonl, queries.jsonl, qrels.tsv)',
      '../shared/data',
    )
    .option('--out <dir>', 'model directory to write', 'models/fast-path-lexical')
    .option('--collections <names>', 'comma-separated collection folder names (default: all under --data)')
    .option('--seed <n>', 'seed for splits, rank dropout and XGBoost', '42')
    .option('--target-precision <p>', 'precision the recommended threshold is chosen for (on validation)', '0.5')
    .option('--grid <name>', 'hyperparameter grid: full | loco | quick | tiny', 'full')
    .option('--max-queries <n>', 'at most this many train and validation queries per collection (quick runs)')
    .option(
      '--embedding-model <dir>',
      "a bi-encoder folder (relevance-gate import-model --as bi-encoder): its query-passage cosine becomes the embedding_similarity feature (30 % of training queries without it); callers then pass the cosine of this model's embeddings",
    )
    .option('--check', 'rerun the pipeline for the chosen point and fail unless the outputs are byte-identical', false)
    .option('--no-progress', 'no progress display')
    .action(async (opts: TrainCliOptions) => {
      const { runFastPathPipeline } = await import('../../tooling/training/fast-path-pipeline.js');
      const seed = Number(opts.seed);
      if (!Number.isInteger(seed) || seed < 0)
        throw new InvalidArgumentError(`--seed must be a non-negative integer, got "${opts.seed}"`);
      const targetPrecision = Number(opts.targetPrecision);
      if (!(targetPrecision > 0 && targetPrecision <= 1))
        throw new InvalidArgumentError(`--target-precision must be in (0, 1], got "${opts.targetPrecision}"`);
      if (!['full', 'loco', 'quick', 'tiny'].includes(opts.grid))
        throw new InvalidArgumentError(`--grid must be full, loco, quick or tiny, got "${opts.grid}"`);
      let maxQueriesPerSplit: number | undefined;
      if (opts.maxQueries !== undefined) {
        maxQueriesPerSplit = Number(opts.maxQueries);
        if (!Number.isInteger(maxQueriesPerSplit) || maxQueriesPerSplit < 1)
          throw new InvalidArgumentError(`--max-queries must be a positive integer`);
      }
      const t0 = performance.now();
      const result = await runFastPathPipeline({
        dataDir: opts.data,
        outDir: opts.out,
        ...(opts.collections
          ? {
              collections: opts.collections
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean),
            }
          : {}),
        seed,
        targetPrecision,
        grid: opts.grid as GridName,
        ...(maxQueriesPerSplit !== undefined ? { maxQueriesPerSplit } : {}),
        ...(opts.embeddingModel === undefined ? {} : { embeddingModel: opts.embeddingModel }),
        check: opts.check,
        progress: opts.progress,
      });
      const t = result.timingsMs;
      process.stdout.write(
        `train-fast-path: done in ${((performance.now() - t0) / 1000).toFixed(1)} s (train ${(t.train / 1000).toFixed(1)} s, test eval ${(t.test / 1000).toFixed(1)} s` +
          `${t.check !== null ? `, check ${(t.check / 1000).toFixed(1)} s` : ''}); reproducible: ${result.reproducible === null ? 'not checked' : result.reproducible}\n`,
      );
    });
}
