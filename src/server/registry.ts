/**
 * The model registry: builds every configured model (fast path, cross-encoder and embedding pools, routers over
 * them, programmatic scorers) into the gates the protocol handlers call, shares tier instances
 * between the routers that name them, and owns their lifetime. Readiness means every model loaded.
 */
import { RELEVANT } from '../signals.js';
import {
  createCrossEncoder,
  createCrossEncoderScorer,
  createEmbeddingScorer,
  createGate,
  createRemoteScorer,
  createRouter,
  createScoreCache,
  crossEncoderTier,
  loadFastPathScorer,
  fastPathTier,
  type CrossEncoder,
  type CrossEncoderStats,
  type EmbeddingScorer,
  type FastPathScorer,
  type Gate,
  type GateMode,
  type GatePolicy,
  type Passage,
  type Router,
  type ScoreCache,
  type ScoreCacheStats,
  type Scorer,
  type ScoreOptions,
  type ScorerPairResult,
  type TierSpec,
} from '../index.js';
import { loadOperatingPointsPolicy } from '../operating-points/file.js';
import { embeddingTier } from '../router/tiers.js';
import { CROSS_ENCODER_TIER } from '../tiers/cross-encoder/scorer.js';
import { EMBEDDING_TIER } from '../tiers/embedding/types.js';
import { FAST_PATH_TIER, SHIPPED_FAST_PATH_MODEL_DIR } from '../tiers/fast-path/fast-path-scorer.js';
import { AdmissionController, type AdmissionOptions } from './admission.js';
import {
  defaultCrossEncoderThreads,
  type CrossEncoderModelConfig,
  type ModelConfig,
  type RouterModelConfig,
  type ServerConfig,
} from './config/index.js';
import { ServerConfigError } from './errors.js';
import { warmUp, warmupRequest } from './warmup.js';

/**
 * Environment variable with the secret that signs the score cache's Redis entries (shared by the
 * replicas). Read here, never put into the config: it stays out of --print-config and of what a
 * cluster primary hands its workers. Set but empty or shorter than 16 bytes: the server refuses to start.
 */
export const CACHE_SIGNING_KEY_ENV = 'RELEVANCE_GATE_CACHE_SIGNING_KEY';

/** Signals read as relevance, newest name first (older fast-path models report `relevance`). */
export const RELEVANCE_SIGNALS: readonly string[] = Object.freeze([RELEVANT]);

export type DegradeLabel = 'shed' | 'deadline' | 'error';

export interface ModelDescription {
  readonly name: string;
  readonly type: ModelConfig['type'];
  readonly scorerId: string;
  readonly tiers: readonly string[];
  readonly routing: string | undefined;
  readonly budgetMs: number;
  /** How a request without a policy is decided: the scorer's default operating point, or 'threshold'. */
  readonly mode: GateMode;
  /** The absolute threshold of mode 'threshold' (the configured one, else the fast path's recommended one). */
  readonly threshold: number;
  /** Longest pair the model reads, tokens (cross-encoders), when it has such a limit. */
  readonly maxInputTokens: number | undefined;
}

export interface ServedModel {
  readonly name: string;
  readonly description: ModelDescription;
  /** The configured policy (for /v1/gate). */
  readonly gate: Gate;
  /** The same scorer and policy without early stopping: reranking needs a score for every document. */
  readonly rerankGate: Gate;
  /** The policies of `gate` and `rerankGate` (what the decision log records and replays). */
  readonly policy: GatePolicy;
  readonly rerankPolicy: GatePolicy;
  readonly budgetMs: number;
  readonly admission: AdmissionController;
  /** Router models: why each pair of a call was degraded, keyed by the passage object of that call. */
  readonly degraded: WeakMap<Passage, DegradeLabel> | undefined;
  readonly crossEncoders: ReadonlyArray<{ readonly name: string; stats(): CrossEncoderStats }>;
  readonly cacheEnabled: boolean;
}

interface TierModel {
  readonly name: string;
  readonly config: ModelConfig;
  readonly scorer: Scorer;
  /** The model's `operatingPoints` file, checked against its scorer. */
  readonly operatingPoints: ConfiguredDecisions | undefined;
  readonly fastPath: FastPathScorer | undefined;
  readonly encoder: CrossEncoder | undefined;
  /** An embedding model's scorer (its own pool). */
  readonly embedder?: EmbeddingScorer | undefined;
  readonly close: () => Promise<void>;
}

export type RegistryState = 'loading' | 'ready' | 'failed' | 'closed';

export interface ModelRegistry {
  readonly state: RegistryState;
  readonly failure: Error | undefined;
  readonly names: readonly string[];
  readonly defaultModel: string;
  /** Loads every model; rejects (and closes what loaded) on the first failure. */
  load(): Promise<void>;
  get(name: string): ServedModel | undefined;
  all(): readonly ServedModel[];
  /** Whether a model of that name is configured (loaded or not). */
  has(name: string): boolean;
  /** Counters of the score cache (undefined when it is off or not created yet). */
  cacheStats(): ScoreCacheStats | undefined;
  close(): Promise<void>;
}

/** Records the router's per-pair degrade labels so the gate API can report them per passage. */
function recordingScorer(router: Router, into: WeakMap<Passage, DegradeLabel>): Scorer {
  return {
    id: router.id,
    async score(query: string, passages: readonly Passage[], options?: ScoreOptions) {
      const results: ReadonlyArray<ScorerPairResult> = await router.score(query, passages, options);
      for (let i = 0; i < results.length && i < passages.length; i++) {
        const r = results[i] as { degraded?: DegradeLabel } | null;
        if (r !== null && typeof r === 'object' && r.degraded !== undefined) into.set(passages[i], r.degraded);
      }
      return results;
    },
  };
}

/** What a model's operating-points file gives its gate: the points and, when fitted, the score calibration. */
type ConfiguredDecisions = Awaited<ReturnType<typeof loadOperatingPointsPolicy>>;

/** A model's `operatingPoints` file, refused when fitted for another model; undefined when not configured. */
async function configuredOperatingPoints(
  path: string | undefined,
  scorer: Scorer,
): Promise<ConfiguredDecisions | undefined> {
  return path === undefined ? undefined : loadOperatingPointsPolicy(path, scorer);
}

function withoutEarlyStop(policy: GatePolicy): GatePolicy {
  return { ...policy, earlyStop: null };
}

export function createModelRegistry(
  config: ServerConfig,
  log: (msg: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): ModelRegistry {
  let state: RegistryState = 'loading';
  let failure: Error | undefined;
  const served = new Map<string, ServedModel>();
  const tiers = new Map<string, TierModel>();
  let cache: ScoreCache | undefined;
  // The bi-encoder that embeds queries for the approximate query cache (cache.approximate).
  let queryEmbedder: Promise<EmbeddingScorer> | undefined;
  const routers: Router[] = [];
  // Built-in tiers warmed before the server reports ready (an LLM judge's calls cost money: not warmed).
  const warmUps: Array<Promise<unknown>> = [];
  const names = Object.keys(config.models);
  // Worker pools share the cores: cross-encoders and embedding models alike.
  const crossEncoderCount = Object.values(config.models).filter(
    (m) => m.type === 'cross-encoder' || m.type === 'embedding',
  ).length;

  const loadTier = async (name: string, model: ModelConfig): Promise<TierModel> => {
    switch (model.type) {
      case 'fast-path': {
        const dir = model.dir ?? SHIPPED_FAST_PATH_MODEL_DIR;
        const scorer = await loadFastPathScorer(dir, model.stats === undefined ? {} : { statsPath: model.stats });
        return {
          name,
          config: model,
          scorer,
          operatingPoints: await configuredOperatingPoints(model.operatingPoints, scorer),
          fastPath: scorer,
          encoder: undefined,
          close: async () => scorer.model.dispose(),
        };
      }
      case 'cross-encoder': {
        const ce = model as CrossEncoderModelConfig;
        const sized = defaultCrossEncoderThreads(config.processes, crossEncoderCount);
        const encoder = await createCrossEncoder({
          modelDir: ce.dir,
          workers: ce.workers ?? sized.workers,
          intraOpThreads: ce.intraOpThreads ?? (ce.workers === undefined ? sized.intraOpThreads : undefined),
          maxBatchTokens: ce.maxBatchTokens,
          maxQueueDelayMs: ce.maxQueueDelayMs,
          maxLength: ce.maxLength,
          truncation: ce.truncation,
          maxPendingPairs: ce.maxPendingPairs,
          ...(ce.workerNice === undefined ? {} : { workerNice: ce.workerNice }),
          // The HTTP limit is the bound; the pool must accept every admitted request.
          maxPassagesPerRequest: Math.max(config.limits.documentsPerRequest, 1024),
        });
        const scorer = createCrossEncoderScorer(encoder);
        let operatingPoints: ConfiguredDecisions | undefined;
        try {
          operatingPoints = await configuredOperatingPoints(ce.operatingPoints, scorer);
        } catch (error) {
          await encoder.close();
          throw error;
        }
        return {
          name,
          config: model,
          scorer,
          operatingPoints,
          fastPath: undefined,
          encoder,
          close: () => encoder.close(),
        };
      }
      case 'embedding': {
        const sized = defaultCrossEncoderThreads(config.processes, crossEncoderCount);
        const embedder = await createEmbeddingScorer({
          modelDir: model.dir,
          ...(model.variant === undefined ? {} : { variant: model.variant }),
          workers: model.workers ?? sized.workers,
          intraOpThreads: model.intraOpThreads ?? (model.workers === undefined ? sized.intraOpThreads : undefined),
          maxBatchTokens: model.maxBatchTokens,
          maxQueueDelayMs: model.maxQueueDelayMs,
          maxLength: model.maxLength,
          maxPendingTexts: model.maxPendingTexts,
          queryPrefix: model.queryPrefix,
          passagePrefix: model.passagePrefix,
          ...(model.cacheMb === undefined ? {} : { cacheBytes: Math.floor(model.cacheMb * 1024 * 1024) }),
          ...(model.workerNice === undefined ? {} : { workerNice: model.workerNice }),
          // The HTTP limit is the bound; the pool must accept every admitted request.
          maxPassagesPerRequest: Math.max(config.limits.documentsPerRequest, 1024),
        });
        let operatingPoints: ConfiguredDecisions | undefined;
        try {
          operatingPoints = await configuredOperatingPoints(model.operatingPoints, embedder);
        } catch (error) {
          await embedder.close();
          throw error;
        }
        return {
          name,
          config: model,
          scorer: embedder,
          operatingPoints,
          fastPath: undefined,
          encoder: undefined,
          embedder,
          close: () => embedder.close(),
        };
      }
      case 'scorer': {
        const scorer = typeof model.scorer === 'function' ? await model.scorer() : model.scorer;
        return {
          name,
          config: model,
          scorer,
          operatingPoints: undefined,
          fastPath: undefined,
          encoder: undefined,
          close: async () => {
            await model.close?.();
          },
        };
      }
      case 'remote': {
        const key = model.apiKeyEnv === undefined ? undefined : env[model.apiKeyEnv];
        if (model.apiKeyEnv !== undefined && (key === undefined || key === ''))
          throw new ServerConfigError(
            `models.${name}.apiKeyEnv: the environment variable ${model.apiKeyEnv} is not set`,
          );
        const scorer = createRemoteScorer({
          protocol: model.protocol,
          url: model.url,
          ...(model.model === undefined ? {} : { model: model.model }),
          ...(key === undefined ? {} : { apiKey: key }),
          ...(model.maxBatch === undefined ? {} : { maxBatch: model.maxBatch }),
          ...(model.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: model.requestTimeoutMs }),
          ...(model.tokenizerDir === undefined ? {} : { tokenizerDir: model.tokenizerDir }),
          ...(model.maxLength === undefined ? {} : { maxLength: model.maxLength }),
          ...(model.truncation === undefined ? {} : { truncation: model.truncation }),
          ...(model.modelVersion === undefined ? {} : { modelVersion: model.modelVersion }),
          ...(model.output === undefined ? {} : { output: model.output }),
        });
        return {
          name,
          config: model,
          scorer,
          operatingPoints: undefined,
          fastPath: undefined,
          encoder: undefined,
          close: async () => undefined,
        };
      }
      case 'router':
        throw new ServerConfigError(`models.${name}: a router is not a tier`);
    }
  };

  /**
   * The configured policy. When the gate decides by an operating point (the fast path served on its
   * own, with no threshold option configured) it stays so, as createGate({ scorer }) decides;
   * otherwise (a router, whose pairs come from tiers of different scales, or a threshold option) the
   * fast path's recommended threshold is the default threshold.
   */
  const basePolicy = (
    model: ModelConfig,
    fastPath: FastPathScorer | undefined,
    scorer: Scorer,
    decisions: ConfiguredDecisions | undefined,
  ): GatePolicy => {
    const merged: Record<string, unknown> = {
      relevanceSignal: RELEVANCE_SIGNALS,
      ...config.policy,
      ...(decisions === undefined ? {} : { operatingPoints: decisions.operatingPoints }),
      ...(decisions?.scoreCalibration === undefined ? {} : { scoreCalibration: decisions.scoreCalibration }),
      ...model.policy,
    };
    if (
      merged.threshold !== undefined ||
      merged.calibrated !== undefined ||
      fastPath?.recommendedThreshold === undefined
    )
      return merged as GatePolicy;
    // The gate's own resolution of the mode (an invalid policy throws here, as it would below).
    if (createGate({ scorer, policy: merged as GatePolicy }).operatingPoint !== undefined) return merged as GatePolicy;
    return { ...merged, threshold: fastPath.recommendedThreshold } as GatePolicy;
  };

  const serve = (
    name: string,
    model: ModelConfig,
    scorer: Scorer,
    gateCache: ScoreCache | undefined,
    extras: {
      fastPath: FastPathScorer | undefined;
      degraded: WeakMap<Passage, DegradeLabel> | undefined;
      encoders: ReadonlyArray<{ readonly name: string; stats(): CrossEncoderStats }>;
      tiers: readonly string[];
      routing: string | undefined;
      maxInputTokens: number | undefined;
      tierName?: string;
      operatingPoints?: ConfiguredDecisions | undefined;
      /** How admission predicts the model's completion time; absent: bounds only (programmatic scorers). */
      admission?: AdmissionOptions;
    },
  ): void => {
    const policy = basePolicy(model, extras.fastPath, scorer, extras.operatingPoints);
    const common = {
      scorer,
      maxPassages: Math.max(1, config.limits.documentsPerRequest * 16),
      ...(gateCache === undefined ? {} : { cache: gateCache }),
      ...(extras.tierName === undefined ? {} : { tierName: extras.tierName }),
    };
    const gate = createGate({ ...common, policy });
    const rerankPolicy = withoutEarlyStop(policy);
    const rerankGate = createGate({ ...common, policy: rerankPolicy });
    const budgetMs = model.budgetMs ?? config.budgetMs;
    served.set(name, {
      name,
      gate,
      rerankGate,
      policy,
      rerankPolicy,
      budgetMs,
      admission: new AdmissionController(model.maxInFlightPairs ?? config.limits.maxInFlightPairs, {
        ...extras.admission,
        predictive: config.admission.predictive && extras.admission !== undefined,
      }),
      degraded: extras.degraded,
      crossEncoders: extras.encoders,
      cacheEnabled: cache !== undefined,
      description: {
        name,
        type: model.type,
        scorerId: scorer.id,
        tiers: extras.tiers,
        routing: extras.routing,
        budgetMs,
        mode: gate.mode,
        threshold:
          typeof policy.threshold === 'number' ? policy.threshold : (extras.fastPath?.recommendedThreshold ?? 0.5),
        maxInputTokens: extras.maxInputTokens,
      },
    });
  };

  const buildRouter = (name: string, model: RouterModelConfig): void => {
    const specs: TierSpec[] = [];
    let fastPath: FastPathScorer | undefined;
    const encoders: Array<{ name: string; stats(): CrossEncoderStats }> = [];
    let nextQuality = 2;
    let maxInputTokens: number | undefined;
    // Pairs are labelled with the built-in tier names ('fast-path', 'cross-encoder') so results, metrics
    // and bench tables read the same as in-process; a second cross-encoder keeps its model name (a
    // cross-encoder model named 'cross-encoder' keeps its name too, so no two tiers share a label).
    const labels = new Map<string, string>();
    const warmTiers: string[] = [];
    const ceLabelTaken = model.tiers.some((t) => t === CROSS_ENCODER_TIER && tiers.get(t)?.encoder !== undefined);
    const embeddingLabelTaken = model.tiers.some((t) => t === EMBEDDING_TIER && tiers.get(t)?.embedder !== undefined);
    // Embedding tiers rank above the fast path and below every cross-encoder.
    let embeddingQuality = 1.5;
    const embeddingLabels = new Set<string>();
    for (const tierName of model.tiers) {
      const tier = tiers.get(tierName) as TierModel;
      if (tier.fastPath !== undefined) {
        fastPath = tier.fastPath;
        labels.set(tierName, FAST_PATH_TIER);
        warmTiers.push(FAST_PATH_TIER);
        specs.push(fastPathTier(tier.fastPath));
      } else if (tier.encoder !== undefined) {
        const encoder = tier.encoder;
        const label = ceLabelTaken || [...labels.values()].includes(CROSS_ENCODER_TIER) ? tierName : CROSS_ENCODER_TIER;
        labels.set(tierName, label);
        warmTiers.push(label);
        encoders.push({ name: tierName, stats: () => encoder.stats() });
        maxInputTokens = Math.max(maxInputTokens ?? 0, encoder.info.maxLength);
        specs.push({
          ...crossEncoderTier(encoder, { maxQueuedPairs: model.maxQueuedPairs }),
          name: label,
          quality: nextQuality++,
        });
      } else if (tier.embedder !== undefined) {
        const embedder = tier.embedder;
        const label = embeddingLabelTaken || [...labels.values()].includes(EMBEDDING_TIER) ? tierName : EMBEDDING_TIER;
        labels.set(tierName, label);
        embeddingLabels.add(label);
        warmTiers.push(label);
        encoders.push({ name: tierName, stats: () => embedder.stats() });
        maxInputTokens = Math.max(maxInputTokens ?? 0, embedder.info.maxLength);
        specs.push({
          ...embeddingTier(embedder, { maxQueuedPairs: model.maxQueuedPairs }),
          name: label,
          quality: embeddingQuality,
        });
        embeddingQuality += 0.01;
      } else {
        const sc = tier.config as Extract<ModelConfig, { type: 'scorer' }>;
        const label = sc.tierName ?? tierName;
        labels.set(tierName, label);
        specs.push({
          name: label,
          scorer: tier.scorer,
          quality: sc.quality ?? (sc.inline === true ? 1 : nextQuality++),
          inline: sc.inline === true,
          maxQueuedPairs: model.maxQueuedPairs,
        });
      }
    }
    const threshold = model.threshold ?? fastPath?.recommendedThreshold ?? 0.5;
    // A cascade over a cross-encoder and embedding models is staged: the pairs nearest the threshold
    // go to the best tier as many as fit, the next nearest to the embedding tier(s), the rest keep
    // the fast path's score.
    const ranked = [...specs].sort((x, y) => y.quality - x.quality);
    const embeddingStages = ranked.slice(1).filter((s) => embeddingLabels.has(s.name) && s.inline !== true);
    const cascadeTier =
      ranked.length > 0 && embeddingStages.length > 0 && !embeddingLabels.has(ranked[0].name)
        ? [ranked[0].name, ...embeddingStages.map((s) => s.name)]
        : undefined;
    const router = createRouter({
      tiers: specs,
      routing: {
        mode: model.routing ?? (specs.length === 1 ? 'fixed' : 'cascade'),
        threshold,
        signal: RELEVANCE_SIGNALS,
        ...(cascadeTier === undefined ? {} : { cascadeTier }),
        ...(model.fixedTier === undefined ? {} : { fixedTier: labels.get(model.fixedTier) }),
      },
      ...(cache === undefined ? {} : { cache }),
      defaultBudgetMs: model.budgetMs ?? config.budgetMs,
      ...(model.headroom === undefined ? {} : { headroom: model.headroom }),
      ...(model.returnMarginMs === undefined ? {} : { returnMarginMs: model.returnMarginMs }),
      // A server is the hard-deadline surface: learn the host's stalls before they make a call late.
      answerLag: { watchEventLoop: true },
      backgroundFill: model.backgroundFill === true && cache !== undefined,
    });
    routers.push(router);
    warmUps.push(router.warmUp({ tiers: warmTiers }));
    const degraded = new WeakMap<Passage, DegradeLabel>();
    // The router holds the cache (per tier); the gate must not cache the router's mixed answers.
    // A router answers by the deadline from its fastest tier whatever the others do; fixed routing
    // from its one tier.
    const best = specs.reduce((a, b) => (b.quality > a.quality ? b : a)).name;
    const answerTiers =
      router.routing.mode === 'fixed'
        ? [model.fixedTier === undefined ? best : (labels.get(model.fixedTier) as string)]
        : [...labels.values()];
    serve(name, model, recordingScorer(router, degraded), undefined, {
      admission: { answerMs: (pairs) => Math.min(...answerTiers.map((label) => router.predictMs(label, pairs))) },
      fastPath,
      degraded,
      encoders,
      tiers: model.tiers,
      routing: router.routing.mode,
      maxInputTokens,
    });
  };

  const closeAll = async (): Promise<void> => {
    for (const router of routers.splice(0)) router.close();
    const closing = [...tiers.values()].map((t) => t.close().catch(() => undefined));
    tiers.clear();
    await Promise.all(closing);
    if (cache !== undefined) await cache.close().catch(() => undefined);
    cache = undefined;
    const embedder = queryEmbedder;
    queryEmbedder = undefined;
    if (embedder !== undefined) await embedder.then((e) => e.close()).catch(() => undefined);
  };

  return {
    get state() {
      return state;
    },
    get failure() {
      return failure;
    },
    names,
    defaultModel: config.defaultModel,
    async load() {
      try {
        if (config.cache.enabled) {
          const approximate = config.cache.approximate;
          if (approximate !== undefined) {
            // One worker: it embeds one short query per call that has pairs to score.
            queryEmbedder = createEmbeddingScorer({
              modelDir: approximate.embeddingModel,
              workers: 1,
              intraOpThreads: 1,
            });
            queryEmbedder.catch(() => undefined); // awaited below; a failure fails the load there
          }
          cache = createServerCache(config, env, log, queryEmbedder);
        }
        // Redis connects while the models load: a replica's first requests then read what its
        // peers scored instead of skipping L2 (a Redis that is down delays readiness by 1 s at most).
        const l2Connected = cache?.ready(1000);
        const tierEntries = Object.entries(config.models).filter(([, m]) => m.type !== 'router');
        const loaded = await Promise.allSettled(tierEntries.map(([name, m]) => loadTier(name, m)));
        for (const r of loaded) if (r.status === 'fulfilled') tiers.set(r.value.name, r.value);
        if (loaded.every((r) => r.status === 'fulfilled')) {
          // Readiness waits for warm tiers: first calls are slow (JIT, onnxruntime's first runs).
          const request = await warmupRequest();
          await Promise.all(
            [...tiers.values()].map((t) =>
              t.encoder !== undefined
                ? warmUp(t.scorer, request, 2, Math.max(2, t.encoder.info.workers * 2))
                : t.embedder !== undefined
                  ? warmUp(t.scorer, request, 2, Math.max(2, t.embedder.info.workers * 2))
                  : t.fastPath !== undefined
                    ? warmUp(t.scorer, request, 50, 1)
                    : Promise.resolve(),
            ),
          );
        }
        if (queryEmbedder !== undefined) {
          try {
            const embedder = await queryEmbedder;
            log(`cache: approximate query cache on, queries embedded by ${embedder.modelId}`);
          } catch (error) {
            throw new ServerConfigError(
              `cache.approximate.embeddingModel failed to load: ${error instanceof Error ? error.message : String(error)}`,
              { cause: error },
            );
          }
        }
        const failed = loaded.findIndex((r) => r.status === 'rejected');
        if (failed >= 0) {
          const reason = (loaded[failed] as PromiseRejectedResult).reason as unknown;
          throw new ServerConfigError(
            `model ${JSON.stringify(tierEntries[failed][0])} failed to load: ${reason instanceof Error ? reason.message : String(reason)}`,
            { cause: reason },
          );
        }
        for (const [name, tier] of tiers) {
          const encoder = tier.encoder;
          const embedder = tier.embedder;
          const pool = encoder ?? embedder;
          serve(name, tier.config, tier.scorer, cache, {
            fastPath: tier.fastPath,
            degraded: undefined,
            encoders: pool === undefined ? [] : [{ name, stats: () => pool.stats() }],
            tiers: [name],
            routing: undefined,
            maxInputTokens: pool?.info.maxLength,
            tierName: tier.config.type === 'scorer' ? tier.config.tierName : undefined,
            admission: admissionOf(tier),
            operatingPoints: tier.operatingPoints,
          });
          log(
            `model ${name}: ${tier.config.type} ${tier.scorer.id}${pool === undefined ? '' : ` (${pool.info.workers} workers × ${pool.info.intraOpThreads} threads, max length ${pool.info.maxLength})`}`,
          );
        }
        for (const [name, m] of Object.entries(config.models)) {
          if (m.type !== 'router') continue;
          buildRouter(name, m);
          log(`model ${name}: router ${served.get(name)?.description.routing} over ${m.tiers.join(', ')}`);
        }
        // The first request must not pay the tiers' cold start (measured: 103–117 ms against 100).
        await Promise.all(warmUps);
        if (
          (await l2Connected) === false &&
          (config.cache.redisUrl !== undefined || config.cache.redisCluster !== undefined)
        )
          log('cache: Redis not connected yet: requests score without L2 until it is (reconnecting in the background)');
        if (state === 'loading') state = 'ready';
        else await closeAll();
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        if (state === 'loading') state = 'failed';
        await closeAll();
        throw failure;
      }
    },
    get(name) {
      return state === 'ready' ? served.get(name) : undefined;
    },
    all() {
      return [...served.values()];
    },
    has(name) {
      return Object.hasOwn(config.models, name);
    },
    cacheStats() {
      return cache?.stats();
    },
    async close() {
      if (state === 'closed') return;
      state = 'closed';
      served.clear();
      await closeAll();
    },
  };
}

/**
 * How admission predicts a tier model's completion: a cross-encoder by its pool's queue (pairs
 * ahead, the batcher's estimate until the fit has samples), a fast path by its own service time (it
 * runs on the event loop); a programmatic scorer is not predicted (its cost is the embedder's).
 */
function admissionOf(tier: TierModel): AdmissionOptions | undefined {
  const embedder = tier.embedder;
  if (embedder !== undefined)
    return {
      pairsAhead: () => embedder.pendingTexts(),
      // One text per pair plus the query.
      estimateMs: (pairs) => embedder.estimateWaitMs(pairs + 1),
    };
  const encoder = tier.encoder;
  if (encoder !== undefined)
    return {
      pairsAhead: () => encoder.pendingPairs(),
      estimateMs: (pairs) => encoder.estimateWaitMs(pairs),
    };
  return tier.fastPath === undefined ? undefined : {};
}

/** A Redis Cluster start-up node from its "host:port" (checked by the config validation). */
function clusterNode(node: string): { host: string; port: number } {
  const at = node.lastIndexOf(':');
  return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
}

/** The server's score cache; its Redis entries are signed when CACHE_SIGNING_KEY_ENV is set. */
function createServerCache(
  config: ServerConfig,
  env: NodeJS.ProcessEnv,
  log: (msg: string) => void,
  queryEmbedder: Promise<EmbeddingScorer> | undefined,
): ScoreCache {
  const { redisUrl, redisCluster, ttlMs, redisTimeoutMs, redisLeaseMs, approximate } = config.cache;
  const signingKey = env[CACHE_SIGNING_KEY_ENV];
  const redisConnection =
    redisCluster !== undefined
      ? { cluster: redisCluster.map(clusterNode) }
      : redisUrl === undefined
        ? undefined
        : { url: redisUrl };
  if (redisConnection === undefined && signingKey !== undefined)
    log(`cache: ${CACHE_SIGNING_KEY_ENV} is set but no Redis is configured: nothing to sign`);
  let cache: ScoreCache;
  try {
    cache = createScoreCache({
      maxBytes: Math.max(4096, Math.floor(config.cache.l1Mb * 1024 * 1024)),
      ...(ttlMs === undefined ? {} : { ttlMs }),
      ...(approximate === undefined || queryEmbedder === undefined
        ? {}
        : {
            approximate: {
              ...(approximate.threshold === undefined ? {} : { threshold: approximate.threshold }),
              model: approximate.embeddingModel,
              embed: async (query: string, options: ScoreOptions) =>
                (await (await queryEmbedder).embed([query], { ...options, as: 'query' }))[0],
            },
          }),
      ...(redisConnection === undefined
        ? {}
        : {
            redis: {
              ...redisConnection,
              ...(redisTimeoutMs === undefined ? {} : { timeoutMs: redisTimeoutMs }),
              ...(redisLeaseMs === undefined ? {} : { leaseMs: redisLeaseMs }),
              ...(signingKey === undefined ? {} : { signingKey }),
            },
          }),
    });
  } catch (error) {
    if (error instanceof Error && error.name === 'CacheSigningKeyError')
      throw new ServerConfigError(`${CACHE_SIGNING_KEY_ENV} refused: ${error.message}`, { cause: error });
    throw error;
  }
  if (redisConnection !== undefined)
    log(
      signingKey === undefined
        ? `cache: Redis entries are NOT signed: anyone who can write to that Redis decides the scores served (set ${CACHE_SIGNING_KEY_ENV})`
        : 'cache: Redis entries signed and verified (HMAC-SHA256)',
    );
  return cache;
}
