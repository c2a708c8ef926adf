/**
 * relevance-gate/server: an HTTP reranking server that speaks Cohere v1/v2, TEI and the engine's
 * own gate protocol over the library's gates, routers and tiers. See docs/server.md.
 *
 *   const server = await startServer({ port: 8080 });   // the shipped fast path as `fast-path`
 *   await server.close();                                // graceful: drains in-flight requests
 *
 * Fastify and prom-client are imported on first use, so importing this module costs little.
 */
export {
  resolveServerConfig,
  readConfigFile,
  configFromEnvironment,
  mergeConfigInputs,
  defaultCrossEncoderThreads,
  MAX_DEFAULT_CROSS_ENCODER_WORKERS,
  ENVIRONMENT_VARIABLES,
  DEFAULT_MODEL_NAME,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_BODY_LIMIT_BYTES,
  DEFAULT_MAX_DOCUMENTS,
  DEFAULT_MAX_DOCUMENT_CHARS,
  DEFAULT_BUDGET_MS,
  DEFAULT_MAX_IN_FLIGHT_PAIRS,
  type ServerConfig,
  type ServerConfigInput,
  type ModelConfig,
  type FastPathModelConfig,
  type CrossEncoderModelConfig,
  type EmbeddingModelConfig,
  type RouterModelConfig,
  type ScorerModelConfig,
  type RemoteModelConfig,
  type CacheConfig,
  type LimitsConfig,
  type LogLevel,
  type DecisionLogConfig,
} from './config/index.js';
export { ApiError, ServerConfigError, type ApiErrorKind, type Protocol } from './errors.js';
export { BUDGET_HEADER, type Lifecycle } from './scoring.js';
export { METRIC_PREFIX, DURATION_BUCKETS_SECONDS, type ServerMetrics, type ModelMetricsSource } from './metrics.js';
export {
  RELEVANCE_SIGNALS,
  type ModelRegistry,
  type ServedModel,
  type ModelDescription,
  type RegistryState,
  type DegradeLabel,
} from './registry.js';
export { AdmissionController, MIN_RETRY_AFTER_SEC, MAX_RETRY_AFTER_SEC, type AdmissionTicket } from './admission.js';
export { createApiKeyCheck, type ApiKeyCheck } from './auth.js';
export type { LagTracker } from './lag.js';
export { runCluster, isClusterWorker, type ClusterOptions } from './cluster.js';
export { SERVING_NODE_FLAGS, missingServingFlags } from './node-flags.js';
export {
  createServer,
  startServer,
  type CreateServerOptions,
  type RelevanceGateServer,
} from './server.js';
/** The decision log, its replay and the drift figures (docs/decision-log.md): usable without the server. */
export {
  createDecisionLog,
  readDecisionLog,
  parseDecisionLines,
  replayDecisions,
  replayDecisionLog,
  createReplayer,
  resultOfRecord,
  parseJudgments,
  readJudgments,
  DriftCounter,
  windowBetween,
  evaluateDriftAlerts,
  summarizeDrift,
  SIGNAL_BUCKETS,
  DEFAULT_DRIFT_TOLERANCES,
  DECISION_LOG_VERSION,
  DecisionLogOptionError,
  DecisionLogFormatError,
  ReplayError,
  sha256Hex,
  passageHash,
  policyHashOf,
  type DecisionLog,
  type DecisionEntry,
  type DecisionLogModel,
  type DecisionLogOptions,
  type DecisionLogStats,
  type DecisionRecord,
  type DropReason,
  type LogRecord,
  type PassageRecord,
  type PolicyRecord,
  type DecisionLogContents,
  type Replayer,
  type ReplayOptions,
  type ReplayReport,
  type ReplayLogReport,
  type ReplayRequest,
  type ReplayMove,
  type RouteCounts,
  type RuleCounts,
  type RetrievalFigures,
  type ShadowDisagreement,
  type Judgments,
  type DriftAlert,
  type DriftAlertName,
  type DriftSummary,
  type DriftSnapshot,
  type DriftTolerances,
  type SignalHistogram,
} from '../decision-log/index.js';
