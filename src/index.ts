/**
 * relevance-gate: the runtime. Gate, tiers, cache, router, typed errors and the types they share.
 * Tooling lives behind subpath exports (relevance-gate/eval, /training, /models) and the surfaces
 * behind theirs (/server, /langchain, /ai-sdk), so importing this entry loads none of them; heavy
 * dependencies of a tier (onnxruntime-node, tokenizers, ioredis, msgpackr) load at first use.
 */

// Errors
export {
  RelevanceGateError,
  InvalidArgumentError,
  NativeAddonError,
  ModelFormatError,
  UnsupportedModelError,
  DisposedError,
  AbortedError,
  DeadlineExceededError,
  OverloadedError,
  MissingDependencyError,
} from './errors.js';

// The seams
export type {
  Passage,
  ScoreOptions,
  SignalProbabilities,
  DetailedPairScore,
  ScorerPairResult,
  Scorer,
  TierName,
} from './types.js';
export { RELEVANT, RANKING, EVIDENCE, CONTRADICTS_PREMISE, INJECTION, STANDARD_SIGNALS } from './signals.js';

// Gate
export {
  createGate,
  rerouteResult,
  DEFAULT_ROUTING_RULES,
  createDefaultRoutingRules,
  parseCalibratedThreshold,
  calibratedThresholdOf,
  DuplicatePassageIdError,
  InvalidPolicyError,
  CalibrationModelMismatchError,
  CalibrationFormatError,
  OPERATING_POINT_NAMES,
  OperatingPointsFormatError,
  OperatingPointsModelMismatchError,
  loadOperatingPoints,
  type OperatingPointsFile,
  type OperatingPointsFittedOn,
  type OperatingPointsHeldOut,
  type GateMode,
  type OperatingPoint,
  type OperatingPointName,
  type OperatingPoints,
  type ListFeatureWeights,
  type ScoreCalibration,
  type Sufficiency,
  type ModelDecisions,
  type DefaultRoutingLimits,
  type SelfCalibratedScorer,
  type MissingSignalBehaviour,
  type PlattParameters,
  type CalibratedThreshold,
  type CalibrationFitInfo,
  type Route,
  type UnscoredReason,
  type Comparison,
  type SignalCondition,
  type RuleContext,
  type RulePredicate,
  type RoutingRule,
  type EarlyStopPolicy,
  type QueryLengthThreshold,
  type ThresholdContext,
  type ThresholdFunction,
  type GatePolicy,
  type GateConfig,
  type FilterOptions,
  type GateItem,
  type GateStats,
  type GateTier,
  type GateTimings,
  type GateResult,
  type GateStream,
  type RerouteOptions,
  type Gate,
} from './gate/index.js';

// Cache
export { createScoreCache, DEFAULT_APPROXIMATE_THRESHOLD } from './cache/score-cache.js';
export type {
  ApproximateCacheOptions,
  EmbedQuery,
  QueryIndexOptions,
  ScoreCache,
  ScoreCacheOptions,
  ScoreCacheStats,
  WarmStartReport,
  SnapshotReport,
} from './cache/score-cache.js';
export type { QueryNormalization, QueryNormalizationOptions, CustomQueryNormalizer } from './cache/normalize-query.js';
export type { RedisClusterNode, RedisL2Options } from './cache/redis-l2.js';
export type {
  CacheApproximateUse,
  CachedMark,
  CacheL2Use,
  CacheRequest,
  CacheResolution,
  PairScoreCache,
  PrefetchOptions,
  ScoreMisses,
} from './cache/cache-port.js';
export { SnapshotError, ScoreMissesContractError } from './cache/errors.js';

// Composite tier: several models as one scorer (signals merged per pair, cached per member)
export {
  createCompositeScorer,
  crossEncoderMember,
  CompositeConfigError,
  CompositeMemberResultError,
  type CompositeScorer,
  type CompositeScorerOptions,
  type CompositeMember,
  type CompositeMemberInfo,
  type CompositeStats,
  type CompositeMemberStats,
} from './composite/index.js';

// Runtime: fewer major-GC pauses for a deadline-bound process (`serve` and `bench` do this by default)
export { keepHeapHeadroom, DEFAULT_HEAP_HEADROOM_MB } from './util/heap-headroom.js';

// Router
export {
  createRouter,
  crossEncoderTier,
  fastPathTier,
  type RoutingMode,
  type RoutingOptions,
  type TierSpec,
  type RouterCache,
  type RouterConfig,
  type RouterScoreOptions,
  type DegradeReason,
  type RoutedPairScore,
  type TierLoadStats,
  type RouterStats,
  type RouterWarmUp,
  type AnswerLagOptions,
  type Router,
} from './router/index.js';

// Fast-path tier: the fast-path scorer and XGBoost tree models
export {
  loadFastPathScorer,
  SHIPPED_FAST_PATH_MODEL_DIR,
  type FastPathScorer,
  type FastPathModelMeta,
  type LoadFastPathScorerOptions,
} from './tiers/fast-path/fast-path-scorer.js';
export { loadTreeModel, type LoadTreeModelOptions, type TreeModelFormat } from './tiers/fast-path/load-tree-model.js';
export type { RankingBlend } from './tiers/fast-path/ranking-blend.js';
export {
  createTreeModel,
  type TreeModel,
  type TreeModelOptions,
  type TreePredictOptions,
  type TreeOutputKind,
} from './tiers/fast-path/tree-model.js';
export type { TreeEnsembleIR, TreeIR, TreeObjective } from './tiers/fast-path/model-ir.js';
export { CorpusStats, loadCorpusStats } from './features/corpus-stats.js';
export { FeatureSchemaMismatchError, CorpusStatsFormatError } from './features/errors.js';

// Cross-encoder tier (onnxruntime-node and tokenizers load when the first one is created)
export {
  createCrossEncoder,
  createCrossEncoderScorer,
  SHIPPED_CROSS_ENCODER_MODEL_DIR,
  ModelContractError,
  ExecutionProviderUnavailableError,
  TokenizationError,
  InferenceError,
  InputLimitError,
  ModelVariantNotFoundError,
  type CrossEncoder,
  type CrossEncoderOptions,
  type CrossEncoderScores,
  type CrossEncoderScoreOptions,
  type CrossEncoderSignals,
  type CrossEncoderInfo,
  type CrossEncoderStats,
  type CrossEncoderWorkerStats,
  type TruncationMode,
  type PairInput,
  type PairChunking,
  type LongPassages,
} from './tiers/cross-encoder/index.js';

// Embedding tier: a bi-encoder on the same worker pool and batcher (loads like the cross-encoder)
export {
  createEmbeddingScorer,
  type EmbeddingScorer,
  type EmbeddingScorerOptions,
} from './tiers/embedding/index.js';

// Gated context: a gate result as the prompt the LLM sees
export * from './context/index.js';

// LLM-judge tier: yes/no questions to any OpenAI-compatible chat-completions endpoint
export {
  createLlmJudge,
  llmJudgeTier,
  DEFAULT_QUESTIONS,
  LlmEndpointError,
  LlmResponseFormatError,
  type LlmJudge,
  type LlmJudgeStats,
  type LlmJudgeOptions,
  type JudgeQuestion,
  type LlmJudgeTierOptions,
  type LlmJudgeTierSpec,
} from './tiers/llm-judge/index.js';

// Remote tier: a reranker behind an HTTP API (Cohere-compatible /v2/rerank, TEI /rerank)
export {
  createRemoteScorer,
  REMOTE_DEFAULT_MAX_BATCH,
  REMOTE_TIER,
  RemoteBatchRefusedError,
  RemoteConfigError,
  RemoteEndpointError,
  RemoteResponseError,
  type RemoteProtocol,
  type RemoteScorer,
  type RemoteScorerOptions,
  type RemoteScorerStats,
} from './tiers/remote/index.js';
