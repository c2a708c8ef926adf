/**
 * Scorer tiers `relevance-gate eval` can evaluate. Each entry loads a model into a `Scorer` plus
 * what the evaluation needs from it (recommended threshold, target precision, the splits it was
 * trained with). Add a tier by adding a loader to TIER_LOADERS; nothing else changes.
 *
 * - fast-path: the fast-path lexical model (loadFastPathScorer). Corpus statistics: --stats FILE, else
 *   built from the collection's docs.jsonl (what training did per collection), never the model's own
 *   statistics file, so IDF matches the evaluated corpus.
 * - cross-encoder: an ONNX cross-encoder folder (createCrossEncoder). No splits or recommended
 *   threshold: all judged queries, threshold tuned on them (reported as such). A folder whose
 *   config.json marks it a speed/shape model (random weights) is labelled so everywhere.
 * - embedding: a bi-encoder folder (createEmbeddingScorer). The corpus is embedded once and kept in a
 *   file (embedding-tier.ts); with `dense`, the tier's own exact cosine retrieval replaces BM25.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from '../../errors.js';
import type { FastPathScorer } from '../../tiers/fast-path/fast-path-scorer.js';
import type { PlattParameters } from '../../calibration/platt.js';
import type { Scorer } from '../../types.js';
import type { Collection } from './collection.js';
import type { EmbeddingSimilarities } from './embedding-similarity.js';
import type { FirstStage } from './first-stage.js';
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
  /** The tier's own first stage (the embedding tier's dense retrieval); absent: BM25. */
  readonly firstStage?: FirstStage;
  /** Readies other collections' queries for `firstStage` (junk lists); absent when it needs nothing. */
  prepareQueries?(texts: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export interface LoadEvalTierOptions {
  readonly tier: string;
  readonly model: string;
  readonly collection: Collection;
  readonly statsFile?: string | undefined;
  /** Embedding tier: retrieve with the bi-encoder over the whole corpus instead of reranking BM25. */
  readonly dense?: boolean;
  /** Cross-encoder and embedding tiers: the folder's ONNX variant (e.g. 'int8'); default the fp32 file. */
  readonly variant?: string;
  /**
   * Fast-path tier: a bi-encoder folder whose query–passage cosines the passages carry as
   * `features.embedding_similarity` (a model trained with `train-fast-path --embedding-model`).
   */
  readonly embeddingModel?: string;
  /** Embedding tier: Platt parameters over the cosine instead of the folder's calibration. */
  readonly calibration?: PlattParameters;
  readonly log?: (line: string) => void;
}

type TierLoader = (options: LoadEvalTierOptions) => Promise<EvalTier>;

const loadFastPathTier: TierLoader = async (options) => {
  const { loadFastPathScorer } = await import('../../tiers/fast-path/fast-path-scorer.js');
  const { buildCorpusStats } = await import('../../features/corpus-stats.js');
  let statsNote: string;
  let scorer: FastPathScorer;
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
  let similarities: EmbeddingSimilarities | null = null;
  let withSimilarity: Scorer = scorer;
  if (options.embeddingModel !== undefined) {
    const { createEmbeddingSimilarities, withEmbeddingSimilarity } = await import('./embedding-similarity.js');
    const created = await createEmbeddingSimilarities(options.embeddingModel, {
      ...(options.log === undefined ? {} : { log: options.log }),
    });
    similarities = created;
    try {
      withSimilarity = withEmbeddingSimilarity(scorer, await created.forCollection(options.collection), (text) =>
        created.prepareQuery(text),
      );
    } catch (err) {
      await created.close();
      throw err;
    }
  }
  return {
    name: 'fast-path',
    scorer: withSimilarity,
    description:
      `fast-path lexical trees ${options.model} (${meta.objective}, ${scorer.model.numTrees} trees, id ${scorer.id}); ${statsNote}` +
      (similarities === null
        ? ''
        : `; embedding_similarity from ${options.embeddingModel} (${similarities.source.modelId})`),
    relevanceModel: true,
    ...(scorer.recommendedThreshold !== undefined ? { recommendedThreshold: scorer.recommendedThreshold } : {}),
    ...(typeof meta.targetPrecision === 'number' ? { targetPrecision: meta.targetPrecision } : {}),
    splits: readSplitsFile(join(options.model, SPLITS_FILE)),
    async close() {
      await similarities?.close();
      scorer.model.dispose();
    },
  };
};

/** True unless the model folder says it is a speed/shape model (config.json relevance_gate.kind). */
export function isRelevanceCrossEncoder(modelDir: string): boolean {
  try {
    const config = JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8')) as {
      relevance_gate?: { kind?: unknown };
    };
    const kind = config.relevance_gate?.kind;
    return !(typeof kind === 'string' && /speed\/shape|not a relevance model/i.test(kind));
  } catch {
    return true;
  }
}

const loadCrossEncoderTier: TierLoader = async (options) => {
  const { createCrossEncoder } = await import('../../tiers/cross-encoder/cross-encoder.js');
  const { createCrossEncoderScorer } = await import('../../tiers/cross-encoder/scorer.js');
  const encoder = await createCrossEncoder({
    modelDir: options.model,
    ...(options.variant === undefined ? {} : { variant: options.variant }),
  });
  const relevanceModel = isRelevanceCrossEncoder(options.model);
  return {
    name: 'cross-encoder',
    scorer: createCrossEncoderScorer(encoder),
    description:
      `cross-encoder ${options.model} (${encoder.info.workers} workers, max length ${encoder.info.maxLength}, id ${encoder.info.id})` +
      (relevanceModel ? '' : ' - SPEED/SHAPE MODEL (random weights): relevance numbers are meaningless'),
    relevanceModel,
    splits: null,
    async close() {
      await encoder.close();
    },
  };
};

const loadEmbeddingTier: TierLoader = async (options) => {
  const { loadEmbeddingEval } = await import('./embedding-tier.js');
  const loaded = await loadEmbeddingEval({
    model: options.model,
    collection: options.collection,
    dense: options.dense === true,
    ...(options.variant === undefined ? {} : { variant: options.variant }),
    ...(options.calibration === undefined ? {} : { calibration: options.calibration }),
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  const { embedder, corpus } = loaded;
  const c = embedder.info.calibration;
  return {
    name: 'embedding',
    scorer: loaded.scorer,
    description:
      `embedding ${options.model}${options.variant === undefined ? '' : ` (${options.variant})`} (${embedder.dimensions} dims, max length ${embedder.info.maxLength}, ${embedder.info.workers} workers, ` +
      `relevant = σ(${c.a}·cos ${c.b < 0 ? '−' : '+'} ${Math.abs(c.b)}) from ${embedder.info.calibrationSource}, id ${embedder.id}); ` +
      `corpus vectors ${corpus.fromCache ? 'from' : 'written to'} ${corpus.file ?? '(not cached)'}` +
      (loaded.firstStage === undefined ? '' : '; dense retrieval over the whole corpus instead of BM25'),
    relevanceModel: isRelevanceCrossEncoder(options.model),
    splits: null,
    ...(loaded.firstStage === undefined ? {} : { firstStage: loaded.firstStage }),
    prepareQueries: (texts) => loaded.prepareQueries(texts),
    async close() {
      await embedder.close();
    },
  };
};

const TIER_LOADERS: Readonly<Record<string, TierLoader>> = {
  'fast-path': loadFastPathTier,
  'cross-encoder': loadCrossEncoderTier,
  embedding: loadEmbeddingTier,
};

export const EVAL_TIERS: readonly string[] = Object.keys(TIER_LOADERS);

export async function loadEvalTier(options: LoadEvalTierOptions): Promise<EvalTier> {
  const loader = TIER_LOADERS[options.tier];
  if (!loader) throw new InvalidArgumentError(`--tier must be one of ${EVAL_TIERS.join(', ')}, got "${options.tier}"`);
  if (options.embeddingModel !== undefined && options.tier !== 'fast-path')
    throw new InvalidArgumentError(
      '--embedding-model gives the fast path its embedding_similarity feature; it applies to --tier fast-path',
    );
  return loader(options);
}
