/**
 * `relevance-gate eval`: BM25 first stage on a judged collection, rerank/gate with a scorer tier,
 * report nDCG@10, precision/recall/F1 against threshold, the threshold for a target precision and
 * the gate at the model's recommended threshold; optional JSON report and SVG plot.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';
import { tierModel } from '../tier-model.js';
import { isPositiveInt, numberOption } from '../../util/number-option.js';

interface EvalCliOptions {
  collection: string;
  tier: string;
  model?: string;
  stats?: string;
  queries: string;
  k: string;
  gateK: string;
  targetPrecision?: string;
  json?: string;
  plot?: string;
  progress: boolean;
  retrievalRank: boolean;
  dense?: boolean;
  variant?: string;
  embeddingModel?: string;
  operatingPoints?: string;
  junkCollection?: string[];
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function register(program: Command): void {
  program
    .command('eval')
    .description(
      'Evaluate a scorer tier on a judged collection (docs.jsonl, queries.jsonl, qrels.tsv): BM25 first stage, ' +
        'nDCG@10 before/after reranking, precision/recall/F1 against threshold, the gate at the recommended threshold.',
    )
    .requiredOption('--collection <dir>', 'collection folder: docs.jsonl, queries.jsonl, qrels.tsv')
    .option('--tier <name>', 'scorer tier: fast-path | cross-encoder | embedding', 'fast-path')
    .option(
      '--model <path>',
      "model folder, or shipped (the package's model of the tier: fast-path, cross-encoder); default for fast-path: shipped",
    )
    .option(
      '--dense',
      'embedding tier: exact retrieval by cosine over the whole corpus instead of reranking BM25 (corpus vectors cached under models/.cache/embeddings)',
    )
    .option(
      '--variant <name>',
      'cross-encoder and embedding tiers: the ONNX variant of the model folder, e.g. int8 (default: the fp32 onnx/model.onnx)',
    )
    .option(
      '--embedding-model <dir>',
      'fast-path tier: a bi-encoder folder; each passage carries its cosine with the query as features.embedding_similarity (a model trained with train-fast-path --embedding-model)',
    )
    .option(
      '--stats <file>',
      'corpus statistics file (fast-path tier); built from the collection docs.jsonl when omitted',
    )
    .option(
      '--queries <set>',
      "default | test | validation | train | all (default: the model's test split when it was trained on this collection, else all judged queries)",
      'default',
    )
    .option('--k <n>', 'first-stage candidates reranked per query', '100')
    .option('--gate-k <n>', 'first-stage candidates the gate sees per query', '20')
    .option(
      '--target-precision <p>',
      "target precision for the threshold search (default: the model's stated target, else 0.5)",
    )
    .option(
      '--operating-points <file>',
      "measure the operating points of this file (relevance-gate fit-points --out) instead of the model's own",
    )
    .option('--json <file>', 'write the JSON report here')
    .option('--plot <file>', 'write the precision/recall/F1-vs-threshold plot (SVG) here')
    .option(
      '--no-retrieval-rank',
      "do not pass the first-stage rank as the passages' retrieval_rank feature (text-only scoring)",
    )
    .option(
      '--junk-collection <dir>',
      'another judged collection whose queries are retrieved from this corpus (lists that hold nothing relevant), reported beside the real lists; repeat for each',
      collect,
    )
    .option('--no-progress', 'no progress display')
    .action(async (opts: EvalCliOptions) => {
      const { runEvalCommand } = await import('../../tooling/eval/eval-command.js');
      const model = await tierModel(opts.tier, opts.model);
      const k = numberOption('k', opts.k, isPositiveInt, 'a positive integer');
      const gateK = numberOption('gate-k', opts.gateK, isPositiveInt, 'a positive integer');
      let targetPrecision: number | undefined;
      if (opts.targetPrecision !== undefined) {
        targetPrecision = Number(opts.targetPrecision);
        if (!(targetPrecision >= 0 && targetPrecision <= 1)) {
          throw new InvalidArgumentError(`--target-precision must be in [0, 1], got "${opts.targetPrecision}"`);
        }
      }
      if (opts.dense === true && opts.tier !== 'embedding')
        throw new InvalidArgumentError("--dense needs --tier embedding (dense retrieval is the bi-encoder's)");
      if (opts.variant !== undefined && opts.tier === 'fast-path')
        throw new InvalidArgumentError('--variant applies to the cross-encoder and embedding tiers (ONNX variants)');
      await runEvalCommand({
        collectionDir: opts.collection,
        tier: opts.tier,
        dense: opts.dense === true,
        ...(opts.variant === undefined ? {} : { variant: opts.variant }),
        ...(opts.embeddingModel === undefined ? {} : { embeddingModel: opts.embeddingModel }),
        model,
        statsFile: opts.stats,
        queries: opts.queries,
        k,
        gateK,
        targetPrecision,
        jsonOut: opts.json,
        plotOut: opts.plot,
        progress: opts.progress,
        retrievalRank: opts.retrievalRank,
        operatingPointsFile: opts.operatingPoints,
        junkCollectionDirs: opts.junkCollection,
      });
    });
}
