/**
 * `relevance-gate score`: gates one request (a query and its retrieved passages) with the shipped
 * fast-path model (or a cross-encoder folder, `--cross-encoder`) and prints what reaches the LLM and why. With no arguments it runs the embedded
 * example (examples/request.json, a real query with its BM25 top 20), so a fresh install has a
 * one-command demonstration of the main job. It decides as `createGate({ scorer })` does: the
 * model's default operating point (`balanced` for the shipped model), or `--mode`, or an absolute
 * `--threshold`.
 */
import type { Command } from 'commander';
import { isNonNegative, isPositive, optionalNumberOption } from '../../util/number-option.js';
import { InvalidArgumentError } from '../../errors.js';
import { OPERATING_POINT_NAMES, type OperatingPointName } from '../../gate/policies/operating-points.js';
import { RANKING } from '../../signals.js';
import type { Passage, Scorer } from '../../types.js';

interface ScoreCommandOptions {
  model?: string;
  crossEncoder?: string;
  request?: string;
  query?: string;
  stats?: string;
  threshold?: string;
  mode?: string;
  minKept?: string;
  maxKept?: string;
  operatingPoints?: string;
  json?: boolean;
}

interface RequestFile {
  readonly query: string;
  readonly passages: readonly Passage[];
  readonly source?: string;
}

function parseRequest(raw: unknown, where: string): RequestFile {
  if (typeof raw !== 'object' || raw === null)
    throw new InvalidArgumentError(`${where}: expected a JSON object { query, passages }`);
  const r = raw as Record<string, unknown>;
  if (typeof r.query !== 'string') throw new InvalidArgumentError(`${where}: "query" must be a string`);
  if (!Array.isArray(r.passages))
    throw new InvalidArgumentError(`${where}: "passages" must be an array of { id, text, title? }`);
  // Shape errors inside passages are reported by the gate's own validation, with the index.
  return {
    query: r.query,
    passages: r.passages as Passage[],
    source: typeof r.source === 'string' ? r.source : undefined,
  };
}

type ScoreMode = OperatingPointName | 'threshold';
const MODES: readonly ScoreMode[] = [...OPERATING_POINT_NAMES, 'threshold'];

/** --mode, or 'threshold' when only --threshold is given; undefined: the gate's default for the scorer. */
function parseMode(raw: string | undefined, threshold: number | undefined): ScoreMode | undefined {
  if (raw === undefined) return threshold === undefined ? undefined : 'threshold';
  if (!(MODES as readonly string[]).includes(raw))
    throw new InvalidArgumentError(`--mode must be one of ${MODES.join(', ')}, got ${JSON.stringify(raw)}`);
  if (threshold !== undefined && raw !== 'threshold')
    throw new InvalidArgumentError(`--threshold sets an absolute threshold; it cannot be combined with --mode ${raw}`);
  return raw as ScoreMode;
}

function snippet(p: Passage, width: number): string {
  const text = `${p.title ?? ''} ${p.text}`.replace(/\s+/g, ' ').trim();
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

async function runScore(options: ScoreCommandOptions): Promise<void> {
  const { readFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { packageRoot } = await import('../../util/package-root.js');

  const root = packageRoot();
  const requestPath = options.request ?? join(root, 'examples', 'request.json');
  let request: RequestFile;
  try {
    request = parseRequest(JSON.parse(await readFile(requestPath, 'utf8')) as unknown, requestPath);
  } catch (cause) {
    if (cause instanceof InvalidArgumentError) throw cause;
    throw new InvalidArgumentError(`cannot read request ${requestPath}: ${(cause as Error).message}`, { cause });
  }
  const query = options.query ?? request.query;
  const loaded = await loadScorer(options, join(root, 'models', 'fast-path-lexical'));
  try {
    await scoreWith(loaded, options, query, request);
  } finally {
    await loaded.close();
  }
}

/** The scorer `score` gates with: the fast path (default) or a cross-encoder (--cross-encoder). */
interface LoadedScorer {
  readonly scorer: Scorer;
  /** What the `model:` line says. */
  readonly description: string;
  readonly recommendedThreshold: number | undefined;
  close(): Promise<void>;
}

async function loadScorer(options: ScoreCommandOptions, shippedFastPath: string): Promise<LoadedScorer> {
  if (options.crossEncoder !== undefined) {
    if (options.model !== undefined || options.stats !== undefined)
      throw new InvalidArgumentError(
        '--cross-encoder scores with a cross-encoder: --model and --stats are fast-path options',
      );
    const { createCrossEncoder } = await import('../../tiers/cross-encoder/cross-encoder.js');
    const { createCrossEncoderScorer } = await import('../../tiers/cross-encoder/scorer.js');
    const { resolveCrossEncoderDir } = await import('../../tiers/cross-encoder/shipped-model.js');
    const encoder = await createCrossEncoder({ modelDir: resolveCrossEncoderDir(options.crossEncoder) });
    return {
      scorer: createCrossEncoderScorer(encoder),
      description: `${encoder.info.id} (${options.crossEncoder})`,
      recommendedThreshold: undefined,
      close: () => encoder.close(),
    };
  }
  const { loadFastPathScorer } = await import('../../tiers/fast-path/fast-path-scorer.js');
  const scorer = await loadFastPathScorer(options.model ?? shippedFastPath, { statsPath: options.stats });
  return {
    scorer,
    description: `${scorer.modelId}; stats: ${scorer.statsId} (${scorer.statsSource === 'model' ? "the model's own" : 'yours'})`,
    recommendedThreshold: scorer.recommendedThreshold,
    close: async () => scorer.model.dispose(),
  };
}

async function scoreWith(
  loaded: LoadedScorer,
  options: ScoreCommandOptions,
  query: string,
  request: RequestFile,
): Promise<void> {
  const { createGate, loadOperatingPoints } = await import('../../gate/index.js');
  const { scorer, recommendedThreshold } = loaded;
  const threshold = optionalNumberOption(
    'threshold',
    options.threshold,
    (n) => n >= 0 && n <= 1,
    'a probability in [0, 1]',
  );
  const mode = parseMode(options.mode, threshold);
  const minKept = optionalNumberOption('min-kept', options.minKept, isNonNegative, 'a number ≥ 0');
  const maxKept = optionalNumberOption('max-kept', options.maxKept, isPositive, 'a positive number');
  // Threshold mode without --threshold: the model's recommended threshold, as before operating points.
  const absolute = mode === 'threshold' ? (threshold ?? recommendedThreshold ?? 0.5) : undefined;
  // Points fitted for this model (relevance-gate fit-points), checked against it.
  const operatingPoints =
    options.operatingPoints === undefined ? undefined : await loadOperatingPoints(options.operatingPoints, scorer);
  const gate = createGate({
    scorer,
    policy: {
      ...(operatingPoints !== undefined ? { operatingPoints } : {}),
      ...(mode !== undefined ? { mode } : {}),
      ...(absolute !== undefined ? { threshold: absolute } : {}),
      ...(minKept !== undefined ? { minKept } : {}),
      ...(maxKept !== undefined ? { maxKept } : {}),
    },
  });
  const effectiveMode = gate.mode;
  const decision = gate.operatingPoint;
  const result = await gate.filter(query, request.passages);

  if (options.json) {
    const strip = (items: typeof result.included) => items.map(({ passage: _passage, ...rest }) => rest);
    const out = {
      query,
      mode: effectiveMode,
      threshold: result.stats.threshold,
      included: strip(result.included),
      conflicting: strip(result.conflicting),
      excluded: strip(result.excluded),
      stats: result.stats,
      tier: result.tier,
      timings: result.timings,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }

  const lines: string[] = [];
  lines.push(`query: ${query}`);
  if (request.source && options.request === undefined) lines.push(`example: ${request.source}`);
  lines.push(`model: ${loaded.description}`);
  lines.push(
    decision === undefined
      ? `decision: threshold ${result.stats.threshold}${recommendedThreshold === result.stats.threshold ? ' (recommended)' : ''}`
      : `decision: operating point ${effectiveMode} (beta ${decision.beta}, shift ${decision.shift}): relevance cut ${result.stats.threshold.toFixed(3)}` +
          (result.stats.rankingCut === null
            ? ''
            : `, kept from the head of the ranking order (ranked cut ${result.stats.rankingCut.toFixed(3)})`),
  );
  lines.push('');
  // The embedded example carries qrels judgments in metadata.judged; show them so the demo can be checked.
  const all = [...result.included, ...result.conflicting, ...result.excluded];
  const showJudged = all.some((item) => typeof item.passage.metadata?.judged === 'number');
  // Included rows come in the gate's returned order: by `ranking` when the model emits it (shown then).
  const showRanking = all.some((item) => typeof item.signals?.[RANKING] === 'number');
  lines.push(
    `route      relevance  ${showRanking ? 'ranking  ' : ''}${showJudged ? 'judged  ' : ''}id          passage`,
  );
  for (const item of all) {
    const rel = item.relevance !== null && Number.isFinite(item.relevance) ? item.relevance.toFixed(3) : '   -  ';
    const ranking = item.signals?.[RANKING];
    const rank = showRanking ? `${(typeof ranking === 'number' ? ranking.toFixed(3) : '-').padStart(7)}  ` : '';
    const judged = showJudged ? `${String(item.passage.metadata?.judged ?? '-').padStart(6)}  ` : '';
    lines.push(
      `${item.route.padEnd(10)} ${rel.padStart(9)}  ${rank}${judged}${item.id.padEnd(10).slice(0, 10)}  ${snippet(item.passage, 64)}`,
    );
  }
  const s = result.stats;
  lines.push('');
  lines.push(
    `kept ${s.returned} of ${s.retrieved} (passed ${s.passed}, unscored ${s.unscored})` +
      `${s.fallbackTriggered ? ', fallback triggered' : ''}${s.insufficientContext ? ', INSUFFICIENT CONTEXT' : ''}; ` +
      `scoring ${result.timings.scoringMs.toFixed(2)} ms, total ${result.timings.totalMs.toFixed(2)} ms`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

export function register(program: Command): void {
  program
    .command('score')
    .description('Gate one request with the fast-path model (default: the embedded example) and print the decisions')
    .option('--model <dir>', 'fast-path model directory (default: the shipped model)')
    .option(
      '--cross-encoder <dir>',
      "gate with this cross-encoder model folder (or shipped: the package's) instead of the fast path (its operating-points.json decides when it has one)",
    )
    .option('--request <file>', 'JSON { query, passages: [{ id, title?, text }] } (default: examples/request.json)')
    .option('--query <text>', "override the request's query")
    .option('--stats <file>', "corpus statistics of your collection (relevance-gate stats); default: the model's own")
    .option(
      '--mode <mode>',
      "precise | balanced | related | threshold (default: the model's default operating point, balanced for the shipped model)",
    )
    .option(
      '--threshold <p>',
      "absolute relevance threshold (implies --mode threshold; that mode's default: the model's recommended threshold)",
    )
    .option(
      '--operating-points <file>',
      "operating points fitted for this model (relevance-gate fit-points --out); default: the model's own",
    )
    .option('--min-kept <n>', 'minimum passages to keep (fallback: top)')
    .option('--max-kept <n>', 'maximum passages to keep')
    .option('--json', 'print the full result as JSON')
    .action(runScore);
}
