/**
 * `relevance-gate fit-points`: fit the gate's operating points (precise / balanced / related) for a
 * model on judged collections, measure each point on each collection held out (fitted on the
 * others), and write the operating-points file a gate or the server loads.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';
import type { OperatingPointName } from '../../gate/policies/operating-points.js';
import { tierModel } from '../tier-model.js';
import { isPositiveInt, numberOption, optionalNumberOption } from '../../util/number-option.js';

interface FitPointsCliOptions {
  collection?: string[];
  log?: string[];
  logQrels?: string;
  logModel?: string;
  tier: string;
  model?: string;
  queries: string;
  gateK: string;
  preciseRecallFloor?: string;
  verdictRealEmpty?: string[];
  out?: string;
  calibrationOut?: string;
  json?: string;
  scoresOut?: string;
  scoresIn?: string[];
  progress: boolean;
  retrievalRank: boolean;
  junk: boolean;
  listConfidence: boolean;
  embeddingModel?: string;
}

/** Repeated --collection values, in the order given. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** `--verdict-real-empty balanced=0.1` values as a map; the fit validates the names and shares. */
function verdictTargets(values: readonly string[]): Partial<Record<OperatingPointName, number>> {
  const out: Partial<Record<OperatingPointName, number>> = {};
  for (const value of values) {
    const match = /^([a-z]+)=(.+)$/.exec(value);
    if (match === null)
      throw new InvalidArgumentError(`--verdict-real-empty takes point=share, got ${JSON.stringify(value)}`);
    out[match[1] as OperatingPointName] = numberOption(
      'verdict-real-empty',
      match[2]!,
      (n) => n >= 0 && n <= 1,
      'a share in [0, 1]',
    );
  }
  return out;
}

export function register(program: Command): void {
  program
    .command('fit-points')
    .description(
      'Fit the operating points (precise, balanced, related) of a model on judged collections (docs.jsonl, queries.jsonl, ' +
        'qrels.tsv), measure each on every collection with points fitted on the others, and write the operating-points file.',
    )
    .option(
      '--collection <dir>',
      'a judged collection folder; repeat for each (two or more measure the points held out)',
      collect,
    )
    .option(
      '--log <dir>',
      'a decision log (serve --decision-log) whose judged requests are fit data beside the collections, as one more collection named log:<folder>; repeat for each',
      collect,
    )
    .option(
      '--log-qrels <file>',
      'judgments of the logged requests: request-id (or query sha256) <TAB> passage-id <TAB> grade (required with --log)',
    )
    .option('--log-model <name>', "only the log's decisions of this served model (needed when the log holds several)")
    .option('--tier <name>', 'scorer tier: fast-path | cross-encoder | embedding', 'fast-path')
    .option(
      '--model <path>',
      "model folder, or shipped (the package's model of the tier: fast-path, cross-encoder); default for fast-path: shipped",
    )
    .option(
      '--queries <set>',
      'heldout | all | test | validation | train | default (heldout: the validation + test splits of collections the model trained on, else all judged queries)',
      'heldout',
    )
    .option('--gate-k <n>', 'first-stage candidates the gate sees per query', '20')
    .option('--precise-recall-floor <r>', 'recall `precise` must keep on every collection (default 0.35)')
    .option(
      '--verdict-real-empty <point=share>',
      "the most real lists (with a relevant candidate) the point's sufficiency verdict may leave empty on any training collection, e.g. balanced=0.1 (defaults: precise 0.1, balanced 0.05, related 0.02); repeat for each point",
      collect,
    )
    .option('--out <file>', 'write the operating-points file here (load it with loadOperatingPoints or a server model)')
    .option(
      '--calibration-out <file>',
      "embedding tier: write the fitted calibration (Platt over the cosine) here; the model folder's calibration.json is what createEmbeddingScorer reads",
    )
    .option('--json <file>', 'write the whole fit (every row and bound) as JSON here')
    .option(
      '--scores-out <file>',
      "write every scored list (the collections' and the junk lists, with the model's scores) here, to fit again with --scores-in without scoring",
    )
    .option(
      '--scores-in <file>',
      'fit on the scored lists of this file (written by --scores-out) instead of scoring --collection folders; repeat for each',
      collect,
    )
    .option('--no-progress', 'no progress display')
    .option(
      '--embedding-model <dir>',
      'fast-path tier: a bi-encoder folder; each passage carries its cosine with the query as features.embedding_similarity (a model trained with train-fast-path --embedding-model)',
    )
    .option(
      '--no-junk',
      "do not score each corpus with the other collections' queries (no sufficiency verdict, no floor)",
    )
    .option(
      '--no-list-confidence',
      "fit balanced like the other points (F1 against keeping all, then the sufficiency verdict), not for the per-collection contract over the grid that reads the list's confidence (gamma, emptyBelow)",
    )
    .option(
      '--no-retrieval-rank',
      "do not pass the first-stage rank as the passages' retrieval_rank feature (text-only scoring)",
    )
    .action(async (opts: FitPointsCliOptions) => {
      const { runFitPointsCommand } = await import('../../tooling/eval/fit-points-command.js');
      const model = await tierModel(opts.tier, opts.model);
      await runFitPointsCommand({
        collectionDirs: opts.collection ?? [],
        logs: opts.log ?? [],
        ...(opts.logQrels === undefined ? {} : { logQrels: opts.logQrels }),
        ...(opts.logModel === undefined ? {} : { logModel: opts.logModel }),
        tier: opts.tier,
        model,
        queries: opts.queries,
        gateK: numberOption('gate-k', opts.gateK, isPositiveInt, 'a positive integer'),
        preciseRecallFloor: optionalNumberOption(
          'precise-recall-floor',
          opts.preciseRecallFloor,
          (n) => n >= 0 && n <= 1,
          'a number in [0, 1]',
        ),
        ...(opts.verdictRealEmpty === undefined ? {} : { verdictRealEmpty: verdictTargets(opts.verdictRealEmpty) }),
        out: opts.out,
        jsonOut: opts.json,
        scoresOut: opts.scoresOut,
        scoresIn: opts.scoresIn ?? [],
        calibrationOut: opts.calibrationOut,
        progress: opts.progress,
        retrievalRank: opts.retrievalRank,
        junk: opts.junk,
        listConfidence: opts.listConfidence,
        ...(opts.embeddingModel === undefined ? {} : { embeddingModel: opts.embeddingModel }),
      });
    });
}
