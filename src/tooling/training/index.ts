/**
 * relevance-gate/training: training tree models with ml-xgboost, the fast-path pipeline
 * (LambdaMART, model directory, model card), corpus statistics and model conversion.
 * Tooling: the runtime never imports it.
 */
export { trainFastPath, type TrainFastPathOptions, type TrainFastPathResult } from './train-fast-path.js';
export {
  runFastPathPipeline,
  ReproducibilityError,
  type FastPathPipelineOptions,
  type FastPathPipelineResult,
} from './fast-path-pipeline.js';
export {
  chooseRankingBlend,
  rankingScores,
  RANKING_BLEND_LAMBDAS,
  RANKING_BLEND_RULE,
  type RankingBlendCandidate,
  type RankingBlendSelection,
} from './ranking-blend-selection.js';
export { trainLambdaMart, type LambdaMartParams, type LambdaMartResult } from './lambdamart.js';
export {
  trainXGBoost,
  TrainingError,
  TRAIN_OBJECTIVES,
  type TrainObjective,
  type XGBoostTrainParams,
  type XGBoostTrainData,
  type XGBoostTrainOptions,
  type TrainedXGBoostModel,
} from './trees/train-xgboost.js';
export {
  buildCorpusStats,
  saveCorpusStats,
  CorpusStatsBuilder,
  type StatsDocument,
  type BuildCorpusStatsOptions,
} from '../../features/corpus-stats.js';
export { FEATURE_NAMES, FEATURE_SCHEMA_VERSION, NUM_FEATURES } from '../../features/schema.js';
export { LexicalFeaturizer, type LexicalFeaturizerOptions } from '../../features/featurizer.js';
export { writeXGBoostJson } from '../../tiers/fast-path/xgboost-json-writer.js';
export { readTreeModelIR, type ParsedTreeModel } from '../../tiers/fast-path/load-tree-model.js';
