/**
 * The server configuration, by job: its shape (types.ts), its defaults (defaults.ts), validation
 * (validate.ts, validate-models.ts, with the field checks in fields.ts), and its sources: files
 * (file.ts), environment variables (env.ts) and their layering (merge.ts).
 */
export {
  DEFAULT_BODY_LIMIT_BYTES,
  DEFAULT_BUDGET_MS,
  DEFAULT_CACHE_MB,
  DEFAULT_HOST,
  DEFAULT_MAX_BUDGET_MS,
  DEFAULT_MAX_CONCURRENT_REQUESTS,
  DEFAULT_MAX_DOCUMENT_CHARS,
  DEFAULT_MAX_DOCUMENTS,
  DEFAULT_MAX_IN_FLIGHT_PAIRS,
  DEFAULT_MAX_QUERY_CHARS,
  DEFAULT_MAX_QUEUE_MS,
  DEFAULT_MODEL_NAME,
  DEFAULT_PORT,
  DEFAULT_RESPONSE_MARGIN_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  defaultCrossEncoderThreads,
  MAX_DEFAULT_CROSS_ENCODER_WORKERS,
} from './defaults.js';
export { configFromEnvironment, ENVIRONMENT_VARIABLES } from './env.js';
export { readApiKeyFile, readConfigFile } from './file.js';
export { mergeConfigInputs } from './merge.js';
export type {
  CacheConfig,
  CrossEncoderModelConfig,
  DecisionLogConfig,
  EmbeddingModelConfig,
  FastPathModelConfig,
  LimitsConfig,
  LogLevel,
  ModelCommonConfig,
  ModelConfig,
  RouterModelConfig,
  RemoteModelConfig,
  ScorerModelConfig,
  ServerConfig,
  ServerConfigInput,
  ShadowConfig,
} from './types.js';
export { resolveServerConfig } from './validate.js';
