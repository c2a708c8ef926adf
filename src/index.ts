/** Public API of relevance-gate. Each module adds its exports here. */
export * from './errors.js';
export type {
  Passage,
  ScoreOptions,
  SignalProbabilities,
  DetailedPairScore,
  ScorerPairResult,
  Scorer,
  TierName,
} from './types.js';
export { isDetailedPairScore } from './types.js';
export {
  writeCrossEncoderModelDir,
  buildCrossEncoderOnnx,
  CROSS_ENCODER_PRESETS,
  TokenizerSourceError,
  type CrossEncoderModelSpec,
  type CrossEncoderPresetName,
  type CrossEncoderModelDirInfo,
  type WriteCrossEncoderModelDirOptions,
} from './tiers/cross-encoder/model-gen/index.js';
export * from './gate/index.js';
export { createScoreCache } from './cache/score-cache.js';
export type {
  ScoreCache,
  ScoreCacheOptions,
  ScoreCacheStats,
  WarmStartReport,
  SnapshotReport,
} from './cache/score-cache.js';
export type { QueryNormalization, QueryNormalizationOptions, CustomQueryNormalizer } from './cache/normalize-query.js';
export type { RedisL2Options } from './cache/redis-l2.js';
export { SnapshotError, ScoreMissesContractError } from './cache/errors.js';
export type { CacheRequest, CacheResolution, PairScoreCache, ScoreMisses } from './cache/cache-port.js';
export {
  loadTreeModel,
  readTreeModelIR,
  DEFAULT_MAX_MODEL_BYTES,
  type LoadTreeModelOptions,
  type TreeModelFormat,
  type ParsedTreeModel,
} from './tiers/trees/load-tree-model.js';
export { parseTreeModelBytes } from './tiers/trees/loaders/parse-model.js';
export { writeXGBoostJson } from './tiers/trees/xgboost-json-writer.js';
export {
  trainXGBoost,
  TrainingError,
  TRAIN_OBJECTIVES,
  type TrainObjective,
  type XGBoostTrainParams,
  type XGBoostTrainData,
  type XGBoostTrainOptions,
  type TrainedXGBoostModel,
} from './tiers/trees/training/train-xgboost.js';
export * from './features/index.js';
export type { CacheableResult, CacheEntry } from './cache/entry.js';
export * from './router/index.js';
export {
  createCrossEncoder,
  DEFAULT_WORKERS as CROSS_ENCODER_DEFAULT_WORKERS,
} from './tiers/cross-encoder/cross-encoder.js';
export type {
  CrossEncoder,
  CrossEncoderOptions,
  CrossEncoderScores,
  CrossEncoderScoreOptions,
  CrossEncoderSignals,
  CrossEncoderInfo,
} from './tiers/cross-encoder/cross-encoder.js';
export type { BatcherStats as CrossEncoderStats } from './tiers/cross-encoder/batcher.js';
export type { TruncationMode } from './tiers/cross-encoder/tokenize-pairs.js';
export type { ModelContract as CrossEncoderModelContract } from './tiers/cross-encoder/model-contract.js';
export {
  ModelContractError,
  ExecutionProviderUnavailableError,
  TokenizationError,
  InferenceError,
} from './tiers/cross-encoder/errors.js';
export { createCrossEncoderScorer, passageText as crossEncoderPassageText } from './tiers/cross-encoder/scorer.js';
export {
  loadFastPathScorer,
  parseFastPathMeta,
  FASTPATH_MODEL_FORMAT,
  FASTPATH_MODEL_FORMAT_VERSION,
  type FastPathScorer,
  type FastPathModelMeta,
  type LoadFastPathScorerOptions,
} from './tiers/trees/fast-path-scorer.js';
export {
  createTreeModel,
  treeModelFromShared,
  treeKernelName,
  type TreeModel,
  type TreeModelOptions,
  type TreePredictOptions,
  type TreeOutputKind,
  type SharedTreeModel,
} from './tiers/trees/tree-model.js';
export type { TreeEnsembleIR, TreeIR, TreeObjective } from './tiers/trees/model-ir.js';
export {
  loadCollection,
  docPassage,
  judgmentsOf,
  judgedQueryIds,
  CollectionFormatError,
  type Collection,
  type CollectionDoc,
  type CollectionQuery,
  type Qrels,
} from './eval/collection.js';
export {
  createBm25FirstStage,
  DEFAULT_BM25,
  type FirstStage,
  type Candidate as FirstStageCandidate,
  type Bm25Params,
} from './eval/first-stage.js';
export {
  ndcgAt,
  dcgAt,
  averagePrecision,
  thresholdSweep,
  thresholdGrid,
  thresholdForPrecision as thresholdForTargetPrecision,
  gateStats as evalGateStats,
  type ThresholdRow,
  type LabelledScore,
  type GateStats as EvalGateStats,
} from './eval/metrics.js';
export { splitQueries, type QuerySplit, type SplitOptions } from './eval/splits.js';
export { runEval, EvalScoringError, type EvalOptions, type EvalReport } from './eval/run-eval.js';
export { runEvalCommand, type EvalCommandOptions, type EvalJsonReport } from './eval/eval-command.js';
export { trainFastPath, type TrainFastPathOptions, type TrainFastPathResult } from './training/train-fastpath.js';
export {
  runTrainCommand,
  ReproducibilityError,
  type TrainCommandOptions,
  type TrainCommandResult,
} from './training/train-command.js';
export { trainLambdaMart, ensembleBytes, type LambdaMartParams, type LambdaMartResult } from './training/lambdamart.js';
export { computeLambdas, type LambdaQuery, type LambdaOptions } from './training/lambdas.js';
