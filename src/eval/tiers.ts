/**
 * Scorer tiers `relevance-gate eval` can evaluate. Each entry loads a model into a `Scorer` plus
 * what the evaluation needs from it (recommended threshold, target precision, the splits it was
 * trained with). Add a tier by adding a loader to TIER_LOADERS; nothing else changes.
 *
 * - trees: the fast-path lexical model (loadFastPathScorer). Corpus statistics: --stats FILE, else
 *   built from the collection's docs.jsonl (what training did per collection), never the model's own
 *   statistics file, so IDF matches the evaluated corpus.
 * - cross-encoder: not wired yet (no createCrossEncoder API in this build); refused with a clear error.
 */
import { join } from 'node:path';
import { InvalidArgumentError } from '../errors.js';
import type { Scorer } from '../types.js';
import type { Collection } from './collection.js';
import { SPLITS_FILE, type SplitsFile, readSplitsFile } from './query-set.js';

export interface EvalTier {
  readonly name: string;
  readonly scorer: Scorer;
  /** One line: model, statistics, anything that qualifies the numbers. */
  readonly description: string;
  /** False for speed/shape models (random weights): their relevance numbers mean nothing. */
  readonly relevanceModel: boolean;
  readonly recommendedThreshold?: number;
  readonly targetPrecision?: number;
  readonly splits: SplitsFile | null;
  close(): Promise<void>;
}

export interface LoadEvalTierOptions {
  readonly tier: string;
  readonly model: string;
  readonly collection: Collection;
  readonly statsFile?: string | undefined;
  readonly log?: (line: string) => void;
}

type TierLoader = (options: LoadEvalTierOptions) => Promise<EvalTier>;

const loadTreesTier: TierLoader = async (options) => {
  const { loadFastPathScorer } = await import('../tiers/trees/fast-path-scorer.js');
  const { buildCorpusStats } = await import('../features/corpus-stats.js');
  let statsNote: string;
  let scorer;
  if (options.statsFile !== undefined) {
    scorer = await loadFastPathScorer(options.model, { statsPath: options.statsFile });
    statsNote = `corpus statistics from ${options.statsFile}`;
  } else {
    const t0 = performance.now();
    const stats = await buildCorpusStats(options.collection.docs);
    statsNote = `corpus statistics built from ${options.collection.name}/docs.jsonl (${stats.docCount} docs, ${Math.round(performance.now() - t0)} ms)`;
    scorer = await loadFastPathScorer(options.model, { stats });
  }
  const meta = scorer.meta;
  return {
    name: 'trees',
    scorer,
    description: `fast-path lexical trees ${options.model} (${meta.objective}, ${scorer.model.numTrees} trees, id ${scorer.id}); ${statsNote}`,
    relevanceModel: true,
    ...(scorer.recommendedThreshold !== undefined ? { recommendedThreshold: scorer.recommendedThreshold } : {}),
    ...(typeof meta.targetPrecision === 'number' ? { targetPrecision: meta.targetPrecision } : {}),
    splits: readSplitsFile(join(options.model, SPLITS_FILE)),
    async close() {
      scorer.model.dispose();
    },
  };
};

const loadCrossEncoderTier: TierLoader = async () => {
  throw new InvalidArgumentError(
    '--tier cross-encoder is not available in this build of eval yet (no createCrossEncoder API); use --tier trees',
  );
};

const TIER_LOADERS: Readonly<Record<string, TierLoader>> = {
  trees: loadTreesTier,
  'cross-encoder': loadCrossEncoderTier,
};

export const EVAL_TIERS: readonly string[] = Object.keys(TIER_LOADERS);

export async function loadEvalTier(options: LoadEvalTierOptions): Promise<EvalTier> {
  const loader = TIER_LOADERS[options.tier];
  if (!loader) throw new InvalidArgumentError(`--tier must be one of ${EVAL_TIERS.join(', ')}, got "${options.tier}"`);
  return loader(options);
}
