/**
 * Validation of the config's `models`: each model by its kind (fast path, cross-encoder, router,
 * programmatic scorer, remote reranker), its paths resolved against the base directory, then the routers' references
 * to their tier models. The shipped fast path is served as `fast-path` unless the config redefines it.
 */
import type { GatePolicy } from '../../index.js';
import { isScorer } from '../../util/is-scorer.js';
import {
  booleanValue,
  finiteNumber,
  integerInRange,
  nonEmptyString,
  nonNegativeNumber,
  oneOf,
  positiveFraction,
  positiveInteger,
  positiveNumber,
  probability,
} from '../../util/validate-options.js';
import { ServerConfigError } from '../errors.js';
import { DEFAULT_MODEL_NAME } from './defaults.js';
import { configError, configPath, isRecord, optional, rejectUnknownConfigKeys } from './fields.js';
import type { ModelConfig, ScorerModelConfig } from './types.js';
import { SHIPPED_CROSS_ENCODER_MODEL_DIR, SHIPPED_MODEL_NAME } from '../../tiers/cross-encoder/shipped-model.js';

const COMMON_MODEL_KEYS = ['type', 'policy', 'budgetMs', 'maxInFlightPairs'];
/** The worker pool and batcher settings the cross-encoder and embedding models share. */
const POOL_KEYS = ['workers', 'intraOpThreads', 'maxBatchTokens', 'maxQueueDelayMs', 'workerNice'];
const MODEL_KEYS: Readonly<Record<ModelConfig['type'], ReadonlySet<string>>> = {
  'fast-path': new Set([...COMMON_MODEL_KEYS, 'dir', 'stats', 'operatingPoints']),
  'cross-encoder': new Set([
    ...COMMON_MODEL_KEYS,
    'dir',
    'operatingPoints',
    ...POOL_KEYS,
    'maxLength',
    'truncation',
    'maxPendingPairs',
  ]),
  embedding: new Set([
    ...COMMON_MODEL_KEYS,
    'dir',
    'variant',
    'operatingPoints',
    ...POOL_KEYS,
    'maxLength',
    'maxPendingTexts',
    'queryPrefix',
    'passagePrefix',
    'cacheMb',
  ]),
  router: new Set([
    ...COMMON_MODEL_KEYS,
    'tiers',
    'routing',
    'fixedTier',
    'threshold',
    'headroom',
    'returnMarginMs',
    'maxQueuedPairs',
    'backgroundFill',
  ]),
  scorer: new Set([...COMMON_MODEL_KEYS, 'scorer', 'quality', 'inline', 'tierName', 'close']),
  remote: new Set([
    ...COMMON_MODEL_KEYS,
    'protocol',
    'url',
    'model',
    'maxBatch',
    'apiKeyEnv',
    'requestTimeoutMs',
    'quality',
    'tokenizerDir',
    'maxLength',
    'truncation',
    'modelVersion',
    'output',
  ]),
};
const MODEL_TYPES: readonly ModelConfig['type'][] = [
  'fast-path',
  'cross-encoder',
  'embedding',
  'router',
  'scorer',
  'remote',
];
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

function validateModel(name: string, raw: unknown, baseDir: string): ModelConfig {
  const where = `models.${name}`;
  if (!MODEL_NAME.test(name))
    throw new ServerConfigError(
      `${where}: model names are 1-128 characters of [A-Za-z0-9._:/-], starting alphanumeric`,
    );
  if (!isRecord(raw)) throw configError(where, 'an object with a "type"', raw);
  // `scorer` is accepted but not offered: a programmatic model cannot be written in a JSON file.
  if (!(MODEL_TYPES as readonly unknown[]).includes(raw.type))
    throw configError(`${where}.type`, 'fast-path, cross-encoder, embedding, remote or router', raw.type);
  const type = raw.type as ModelConfig['type'];
  rejectUnknownConfigKeys(where, raw, MODEL_KEYS[type]);
  if (raw.policy !== undefined && !isRecord(raw.policy)) throw configError(`${where}.policy`, 'an object', raw.policy);
  if (raw.operatingPoints !== undefined && raw.policy?.operatingPoints !== undefined)
    throw new ServerConfigError(`${where}: give operatingPoints (a file) or policy.operatingPoints, not both`);
  const common = {
    policy: raw.policy as GatePolicy | undefined,
    budgetMs: optional(raw.budgetMs, (v) => positiveNumber(`${where}.budgetMs`, v, configError)),
    maxInFlightPairs: optional(raw.maxInFlightPairs, (v) =>
      positiveInteger(`${where}.maxInFlightPairs`, v, configError),
    ),
  };
  switch (type) {
    case 'fast-path':
      return {
        ...common,
        type,
        dir: optional(raw.dir, (v) => configPath(baseDir, `${where}.dir`, v)),
        stats: optional(raw.stats, (v) => configPath(baseDir, `${where}.stats`, v)),
        operatingPoints: optional(raw.operatingPoints, (v) => configPath(baseDir, `${where}.operatingPoints`, v)),
      };
    case 'cross-encoder': {
      const truncation = optional(raw.truncation, (v) =>
        oneOf(`${where}.truncation`, v, ['longest_first', 'only_second'], configError),
      );
      return {
        ...common,
        type,
        dir:
          raw.dir === SHIPPED_MODEL_NAME
            ? SHIPPED_CROSS_ENCODER_MODEL_DIR
            : configPath(baseDir, `${where}.dir`, raw.dir),
        operatingPoints: optional(raw.operatingPoints, (v) => configPath(baseDir, `${where}.operatingPoints`, v)),
        ...poolFields(raw, where),
        maxLength: optional(raw.maxLength, (v) =>
          integerInRange(`${where}.maxLength`, v, 2, Number.MAX_SAFE_INTEGER, configError),
        ),
        truncation,
        maxPendingPairs: optional(raw.maxPendingPairs, (v) =>
          positiveInteger(`${where}.maxPendingPairs`, v, configError),
        ),
      };
    }
    case 'embedding': {
      const text = (key: string): string | undefined =>
        optional(raw[key], (v) => {
          if (typeof v !== 'string') throw configError(`${where}.${key}`, 'a string', v);
          return v;
        });
      return {
        ...common,
        type,
        dir: configPath(baseDir, `${where}.dir`, raw.dir),
        variant: optional(raw.variant, (v) => nonEmptyString(`${where}.variant`, v, configError)),
        operatingPoints: optional(raw.operatingPoints, (v) => configPath(baseDir, `${where}.operatingPoints`, v)),
        ...poolFields(raw, where),
        maxLength: optional(raw.maxLength, (v) =>
          integerInRange(`${where}.maxLength`, v, 4, Number.MAX_SAFE_INTEGER, configError),
        ),
        maxPendingTexts: optional(raw.maxPendingTexts, (v) =>
          positiveInteger(`${where}.maxPendingTexts`, v, configError),
        ),
        queryPrefix: text('queryPrefix'),
        passagePrefix: text('passagePrefix'),
        cacheMb: optional(raw.cacheMb, (v) => nonNegativeNumber(`${where}.cacheMb`, v, configError)),
      };
    }
    case 'router': {
      if (!Array.isArray(raw.tiers) || raw.tiers.length === 0)
        throw configError(`${where}.tiers`, 'a non-empty array of model names', raw.tiers);
      const routing = optional(raw.routing, (v) =>
        oneOf(`${where}.routing`, v, ['fixed', 'budget', 'cascade'], configError),
      );
      return {
        ...common,
        type,
        tiers: raw.tiers.map((t, i) => nonEmptyString(`${where}.tiers[${i}]`, t, configError)),
        routing,
        fixedTier: optional(raw.fixedTier, (v) => nonEmptyString(`${where}.fixedTier`, v, configError)),
        threshold: optional(raw.threshold, (v) => probability(`${where}.threshold`, v, configError)),
        headroom: optional(raw.headroom, (v) => positiveFraction(`${where}.headroom`, v, configError)),
        returnMarginMs: optional(raw.returnMarginMs, (v) =>
          nonNegativeNumber(`${where}.returnMarginMs`, v, configError),
        ),
        maxQueuedPairs: optional(raw.maxQueuedPairs, (v) => positiveInteger(`${where}.maxQueuedPairs`, v, configError)),
        backgroundFill: optional(raw.backgroundFill, (v) => booleanValue(`${where}.backgroundFill`, v, configError)),
      };
    }
    case 'remote': {
      // The URL and the rest are checked by createRemoteScorer when the model loads.
      const protocol = oneOf(`${where}.protocol`, raw.protocol, ['cohere', 'tei', 'kserve'], configError);
      if (protocol === 'kserve') {
        // The engine tokenizes for kserve and names the model in the path: both are needed.
        if (raw.model === undefined)
          throw configError(`${where}.model`, 'the model name on the kserve server', raw.model);
        if (raw.tokenizerDir === undefined)
          throw configError(`${where}.tokenizerDir`, "the folder of the model's tokenizer.json", raw.tokenizerDir);
      } else {
        for (const key of ['tokenizerDir', 'maxLength', 'truncation', 'modelVersion', 'output'])
          if (raw[key] !== undefined)
            throw new ServerConfigError(
              `${where}.${key}: a kserve option (${protocol} backends tokenize on the server)`,
            );
      }
      return {
        ...common,
        type,
        protocol,
        url: nonEmptyString(`${where}.url`, raw.url, configError),
        model: optional(raw.model, (v) => nonEmptyString(`${where}.model`, v, configError)),
        maxBatch: optional(raw.maxBatch, (v) => positiveInteger(`${where}.maxBatch`, v, configError)),
        apiKeyEnv: optional(raw.apiKeyEnv, (v) => nonEmptyString(`${where}.apiKeyEnv`, v, configError)),
        requestTimeoutMs: optional(raw.requestTimeoutMs, (v) =>
          positiveInteger(`${where}.requestTimeoutMs`, v, configError),
        ),
        quality: optional(raw.quality, (v) => finiteNumber(`${where}.quality`, v, configError)),
        tokenizerDir: optional(raw.tokenizerDir, (v) => configPath(baseDir, `${where}.tokenizerDir`, v)),
        maxLength: optional(raw.maxLength, (v) =>
          integerInRange(`${where}.maxLength`, v, 4, Number.MAX_SAFE_INTEGER, configError),
        ),
        truncation: optional(raw.truncation, (v) =>
          oneOf(`${where}.truncation`, v, ['longest_first', 'only_second'], configError),
        ),
        modelVersion: optional(raw.modelVersion, (v) => nonEmptyString(`${where}.modelVersion`, v, configError)),
        output: optional(raw.output, (v) => nonEmptyString(`${where}.output`, v, configError)),
      };
    }
    case 'scorer': {
      const scorer = raw.scorer;
      if (typeof scorer !== 'function' && !isScorer(scorer))
        throw configError(`${where}.scorer`, 'a Scorer or an async factory of one', scorer);
      if (raw.close !== undefined && typeof raw.close !== 'function')
        throw configError(`${where}.close`, 'a function', raw.close);
      return {
        ...common,
        type,
        scorer: scorer as ScorerModelConfig['scorer'],
        quality: optional(raw.quality, (v) => finiteNumber(`${where}.quality`, v, configError)),
        inline: optional(raw.inline, (v) => v === true),
        tierName: optional(raw.tierName, (v) => nonEmptyString(`${where}.tierName`, v, configError)),
        close: raw.close as ScorerModelConfig['close'],
      };
    }
  }
}

/** Checks that routers reference tier models that exist and are not routers themselves. */
function validateReferences(models: Readonly<Record<string, ModelConfig>>): void {
  for (const [name, model] of Object.entries(models)) {
    if (model.type !== 'router') continue;
    const seen = new Set<string>();
    for (const tier of model.tiers) {
      const target = models[tier];
      if (target === undefined)
        throw new ServerConfigError(
          `models.${name}.tiers names ${JSON.stringify(tier)}, which is not a configured model`,
        );
      if (target.type === 'router')
        throw new ServerConfigError(`models.${name}.tiers: ${JSON.stringify(tier)} is a router; tiers must be models`);
      if (seen.has(tier)) throw new ServerConfigError(`models.${name}.tiers names ${JSON.stringify(tier)} twice`);
      seen.add(tier);
    }
    const fastPaths = model.tiers.filter((t) => models[t].type === 'fast-path').length;
    if (fastPaths > 1) throw new ServerConfigError(`models.${name}.tiers: at most one fast-path tier per router`);
    if (model.fixedTier !== undefined && !model.tiers.includes(model.fixedTier))
      throw new ServerConfigError(`models.${name}.fixedTier must be one of its tiers`);
  }
}

/**
 * The config's `models` validated, with the shipped fast path as `fast-path` unless redefined, and
 * every router's tiers checked against them.
 */
export function validateModels(rawModels: unknown, baseDir: string): Record<string, ModelConfig> {
  if (!isRecord(rawModels)) throw configError('models', 'an object { name: { type, ... } }', rawModels);
  const models: Record<string, ModelConfig> = {};
  if (!Object.hasOwn(rawModels, DEFAULT_MODEL_NAME)) models[DEFAULT_MODEL_NAME] = { type: 'fast-path' };
  for (const [name, raw] of Object.entries(rawModels)) models[name] = validateModel(name, raw, baseDir);
  validateReferences(models);
  return models;
}

/** POOL_KEYS of a cross-encoder or embedding model, validated. */
function poolFields(raw: Readonly<Record<string, unknown>>, where: string) {
  return {
    workers: optional(raw.workers, (v) => integerInRange(`${where}.workers`, v, 1, 256, configError)),
    intraOpThreads: optional(raw.intraOpThreads, (v) =>
      integerInRange(`${where}.intraOpThreads`, v, 1, 256, configError),
    ),
    maxBatchTokens: optional(raw.maxBatchTokens, (v) => positiveInteger(`${where}.maxBatchTokens`, v, configError)),
    maxQueueDelayMs: optional(raw.maxQueueDelayMs, (v) =>
      nonNegativeNumber(`${where}.maxQueueDelayMs`, v, configError),
    ),
    workerNice: optional(raw.workerNice, (v) => integerInRange(`${where}.workerNice`, v, 0, 19, configError)),
  };
}
