/**
 * The shape of the server configuration: what a caller may give (ServerConfigInput, every field
 * optional) and what resolveServerConfig returns (ServerConfig, every field resolved).
 */
import type { GatePolicy, Scorer } from '../../index.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Options every model kind shares. */
export interface ModelCommonConfig {
  /** Gate policy of this model, merged over the server-wide `policy`. */
  readonly policy?: GatePolicy;
  /** Budget (ms) of requests to this model that carry none. Default: the server's `budgetMs`. */
  readonly budgetMs?: number;
  /** Pairs of this model in flight at most; beyond it requests are refused with 429. Default: `limits.maxInFlightPairs`. */
  readonly maxInFlightPairs?: number;
}

/** The tree fast path (a model directory in the fast-path model format). */
export interface FastPathModelConfig extends ModelCommonConfig {
  readonly type: 'fast-path';
  /** Model directory; default the shipped models/fast-path-lexical. */
  readonly dir?: string;
  /** Corpus statistics of your collection (a `relevance-gate stats` file); default the model's own. */
  readonly stats?: string;
  /** An operating-points file fitted for this model (`relevance-gate fit-points --out`); default the model's own. */
  readonly operatingPoints?: string;
}

/** An ONNX cross-encoder folder served by a worker pool. */
export interface CrossEncoderModelConfig extends ModelCommonConfig {
  readonly type: 'cross-encoder';
  readonly dir: string;
  /**
   * An operating-points file fitted for this model (`relevance-gate fit-points --tier cross-encoder`):
   * requests without a policy then decide by its `balanced` point instead of an absolute threshold.
   */
  readonly operatingPoints?: string;
  /** Worker threads; default sized so all processes' threads fit the cores (see docs/server.md). */
  readonly workers?: number;
  readonly intraOpThreads?: number;
  readonly maxBatchTokens?: number;
  readonly maxQueueDelayMs?: number;
  readonly maxLength?: number;
  readonly truncation?: 'longest_first' | 'only_second';
  readonly maxPendingPairs?: number;
  /** Unix nice increment (0-19) of the worker threads, so the event loop wins the CPU under saturation. */
  readonly workerNice?: number;
}

/**
 * A bi-encoder folder (`relevance-gate import-model --as bi-encoder`) served by the embedding tier:
 * signals `relevant` (Platt over the cosine) and `similarity`; on its own (Cohere / TEI rerank by
 * cosine) or as a router tier between the fast path and a cross-encoder.
 */
export interface EmbeddingModelConfig extends ModelCommonConfig {
  readonly type: 'embedding';
  readonly dir: string;
  /** 'int8' → onnx/model_int8.onnx; default onnx/model.onnx. */
  readonly variant?: string;
  /** An operating-points file fitted for this model (`relevance-gate fit-points --tier embedding`). */
  readonly operatingPoints?: string;
  /** Worker threads; default sized like a cross-encoder's (see docs/server.md). */
  readonly workers?: number;
  readonly intraOpThreads?: number;
  readonly maxBatchTokens?: number;
  readonly maxQueueDelayMs?: number;
  readonly maxLength?: number;
  readonly maxPendingTexts?: number;
  /** Prepended to queries / passages before they are embedded (E5, BGE instructions). */
  readonly queryPrefix?: string;
  readonly passagePrefix?: string;
  /** Vector cache (L1) size in MiB; 0 turns it off. Default 64. */
  readonly cacheMb?: number;
  readonly workerNice?: number;
}

/** The tier router over named tier models (a fast path, embedding models and/or cross-encoders). */
export interface RouterModelConfig extends ModelCommonConfig {
  readonly type: 'router';
  /** Names of `fast-path` / `embedding` / `cross-encoder` (or programmatic `scorer`) models to route between. */
  readonly tiers: readonly string[];
  readonly routing?: 'fixed' | 'budget' | 'cascade';
  /** Tier (model name) of fixed routing; default the best. */
  readonly fixedTier?: string;
  /** Decision threshold cascade spends the slow tier around; default the fast path's recommended threshold. */
  readonly threshold?: number;
  readonly headroom?: number;
  readonly returnMarginMs?: number;
  /** Pairs the router keeps outstanding on a slow tier at most (default 512). */
  readonly maxQueuedPairs?: number;
  readonly backgroundFill?: boolean;
}

/** A scorer built in code (embedding the server, tests): not expressible in a JSON file. */
export interface ScorerModelConfig extends ModelCommonConfig {
  readonly type: 'scorer';
  readonly scorer: Scorer | (() => Promise<Scorer>);
  /** As a router tier: its quality (higher is better) and whether it answers in-process (the fallback). */
  readonly quality?: number;
  readonly inline?: boolean;
  /** Label of its pairs; default the scorer id. */
  readonly tierName?: string;
  /** Release resources at shutdown. */
  readonly close?: () => Promise<void> | void;
}

/**
 * A reranker behind an HTTP API (createRemoteScorer, docs/remote.md): another `serve`, Cohere,
 * TEI, or a cross-encoder on a KServe v2 / Triton server (`kserve`: the engine tokenizes with
 * `tokenizerDir`). The API key is read from the environment variable `apiKeyEnv` names, never
 * from the file.
 */
export interface RemoteModelConfig extends ModelCommonConfig {
  readonly type: 'remote';
  readonly protocol: 'cohere' | 'tei' | 'kserve';
  readonly url: string;
  readonly model?: string;
  readonly maxBatch?: number;
  readonly apiKeyEnv?: string;
  readonly requestTimeoutMs?: number;
  /** kserve: the tokenizer folder (tokenizer.json; resolved against the config file's folder). */
  readonly tokenizerDir?: string;
  /** kserve: tokens per pair (default 512, never above the folder's limits). */
  readonly maxLength?: number;
  /** kserve: 'longest_first' (default) or 'only_second'. */
  readonly truncation?: 'longest_first' | 'only_second';
  /** kserve: the model version (`/v2/models/<model>/versions/<modelVersion>`). */
  readonly modelVersion?: string;
  /** kserve: the logits output (default the only one, else `logits`). */
  readonly output?: string;
  /** As a router tier: its quality (higher is better; default above the local tiers listed before it). */
  readonly quality?: number;
}

export type ModelConfig =
  | FastPathModelConfig
  | CrossEncoderModelConfig
  | EmbeddingModelConfig
  | RouterModelConfig
  | ScorerModelConfig
  | RemoteModelConfig;

export interface CacheConfig {
  /** Score cache on/off. Default on. */
  readonly enabled: boolean;
  /** L1 size in MiB. */
  readonly l1Mb: number;
  /** Shared L2 (redis:// URL); default none. */
  readonly redisUrl?: string;
  /** Shared L2 on a Redis Cluster: start-up nodes as "host:port" (instead of redisUrl); default none. */
  readonly redisCluster?: readonly string[];
  readonly ttlMs?: number;
  /** Longest wait for a Redis read before the pairs are scored instead; default 5 ms. */
  readonly redisTimeoutMs?: number;
  /** Longest Redis lease on pairs being scored, ms (other replicas wait for them); 0: no leases. Default 1000. */
  readonly redisLeaseMs?: number;
  /** Approximate query cache (docs/cache.md): off unless given. */
  readonly approximate?: ApproximateCacheConfig;
}

/** cache.approximate: reuse near-identical queries' scores, with query embeddings from a bi-encoder folder. */
export interface ApproximateCacheConfig {
  /** Bi-encoder model folder (as an embedding model's `dir`) that embeds the queries. */
  readonly embeddingModel: string;
  /** Cosine at or above which an earlier query's scores are reused; default the library's. */
  readonly threshold?: number;
}

export interface LimitsConfig {
  /** Request body bytes at most (→ 413). */
  readonly bodyBytes: number;
  /** Documents per request at most (→ 422 Cohere / 422 TEI Validation / 400 gate). */
  readonly documentsPerRequest: number;
  /** Characters of a document scored; longer ones are truncated (TEI `truncate: false`: 422). */
  readonly maxDocumentChars: number;
  readonly maxQueryChars: number;
  /** Default per-model bound on pairs in flight. */
  readonly maxInFlightPairs: number;
  /** Largest budget a request may ask for, ms. */
  readonly maxBudgetMs: number;
}

/** The decision log (docs/decision-log.md): opt-in, sampled, bounded NDJSON files. */
export interface DecisionLogConfig {
  /** Directory of the NDJSON files (created when missing). */
  readonly dir: string;
  /** Share of requests logged, in [0, 1]. Default 1. */
  readonly sample: number;
  /** A new file is started past this size, MiB. Default 64. */
  readonly maxFileMb?: number;
  /** Files kept; the oldest are deleted beyond it. Default 16. */
  readonly maxFiles?: number;
  /** Requests waiting to be written at most (beyond: dropped, counted). Default 4096. */
  readonly maxQueued?: number;
  /** Log the query text (default: only its sha256). */
  readonly includeQuery: boolean;
  /** Log passage text (default: only its sha256). */
  readonly includeText: boolean;
  /** Requests with a pair decided by one of these rules are logged whatever the sample rate. */
  readonly alwaysRules?: readonly string[];
}

/** A shadow model: decides a sampled share of another model's requests in the background (docs/decision-log.md). */
export interface ShadowConfig {
  /** The shadow: a configured model's name. */
  readonly model: string;
  /** Share of the live model's requests it also decides, in [0, 1]. Default 0.1. */
  readonly sample: number;
  /** Shadow calls in flight at most (the CPU share it may take); a request offered beyond it is skipped. Default 1. */
  readonly maxInFlight: number;
  /** Budget of a shadow call, ms. Default 1000. */
  readonly budgetMs: number;
}

export interface ServerConfig {
  /** Admission control (docs/server.md "Under load"). */
  readonly admission: {
    /** Requests served at once, server-wide (per process); beyond it new requests get 429 at arrival. Default 512. */
    readonly maxConcurrentRequests: number;
    /** Longest wait in an event-loop turn, under a standing queue, before a request is refused at arrival, ms. Default 5. */
    readonly maxQueueMs: number;
    /** Honour the client's send time in `x-request-start` (age and deadline count from it). Default true. */
    readonly requestStartHeader: boolean;
    /**
     * Refuse a request whose age plus its model's predicted completion exceeds its budget, at
     * arrival and once its body is read. Default true; false leaves the bounds only.
     */
    readonly predictive: boolean;
  };
  readonly host: string;
  readonly port: number;
  /**
   * Bearer token required on everything but health and metrics; undefined = no auth. `serve` reads
   * it from `--api-key-file`, `RELEVANCE_GATE_API_KEY` or (warned: visible in `ps`) `--api-key`.
   */
  readonly apiKey: string | undefined;
  readonly defaultModel: string;
  readonly models: Readonly<Record<string, ModelConfig>>;
  /** Server-wide gate policy (each model's `policy` is merged over it). */
  readonly policy: GatePolicy;
  readonly cache: CacheConfig;
  readonly limits: LimitsConfig;
  /** Budget of requests that carry none, ms. */
  readonly budgetMs: number;
  readonly responseMarginMs: number;
  /**
   * Garbage kept between major collections while the server runs, MiB (process-wide; each
   * cluster worker too): fewer main-thread pauses at the cost of that much more heap. Default 192;
   * 0 leaves V8's own sizing.
   */
  readonly heapHeadroomMb: number;
  /** HTTP processes (node:cluster); 1 = this process only. */
  readonly processes: number;
  readonly logLevel: LogLevel;
  /** Log the query text of each request at debug level (off by default; document text is never logged). */
  readonly logPassages: boolean;
  /** After SIGTERM, requests still in flight get this long before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
  /** After SIGTERM, readiness answers 503 this long before the listener closes (load balancers). */
  readonly drainDelayMs: number;
  /** Base directory relative model paths resolve against. */
  readonly baseDir: string;
  /** The decision log; undefined = off. */
  readonly decisionLog: DecisionLogConfig | undefined;
  /** Serve the inspector page at /inspect (behind the API key when one is set). Default false. */
  readonly inspector: boolean;
  /** Shadow models by the name of the live model they shadow; their decisions go to the decision log. */
  readonly shadows: Readonly<Record<string, ShadowConfig>>;
}

/** What a caller may give: every field optional, models merged over the default `fast-path`. */
export interface ServerConfigInput {
  readonly admission?: Partial<ServerConfig['admission']>;
  readonly host?: string;
  readonly port?: number;
  readonly apiKey?: string;
  readonly defaultModel?: string;
  readonly models?: Readonly<Record<string, ModelConfig>>;
  readonly policy?: GatePolicy;
  readonly cache?: Partial<CacheConfig>;
  readonly limits?: Partial<LimitsConfig>;
  readonly budgetMs?: number;
  readonly responseMarginMs?: number;
  readonly heapHeadroomMb?: number;
  readonly processes?: number;
  readonly logLevel?: LogLevel;
  readonly logPassages?: boolean;
  readonly shutdownTimeoutMs?: number;
  readonly drainDelayMs?: number;
  readonly baseDir?: string;
  readonly decisionLog?: Partial<DecisionLogConfig> & { readonly dir: string };
  readonly inspector?: boolean;
  readonly shadows?: Readonly<Record<string, Partial<ShadowConfig> & { readonly model: string }>>;
}
