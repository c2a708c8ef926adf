/**
 * Validation of a router's configuration and of per-call routing overrides: everything a caller
 * sends is checked here once, with a typed error naming the field, so the rest of the router works
 * on resolved, trusted values.
 */
import type { AnswerLagOptions } from './answer-lag.js';
import { isScorer } from '../util/is-scorer.js';
import {
  nonNegativeNumber,
  positiveFraction,
  positiveInteger,
  positiveLimit,
  positiveNumber,
} from '../util/validate-options.js';
import { InvalidArgumentError } from '../errors.js';
import { RELEVANT } from '../signals.js';
import type { TierName } from '../types.js';
import type { BackgroundFillOptions } from './background-fill.js';
import { TierCostModel } from './cost-model.js';
import type { RouterCache, RouterConfig, RoutingMode, RoutingOptions, TierSpec } from './types.js';
import { rejectUnknownKeys } from '../util/option-keys.js';

export const DEFAULT_BUDGET_MS = 100;
const ANSWER_LAG_KEYS: ReadonlySet<string> = new Set(['maxMs', 'halfLifeMs', 'watchEventLoop']);
/**
 * How long before the deadline the router answers: covers the wake-up lateness measured on a host
 * with neighbours (2 ms let 26 of 30,126 seed-scenario calls end late in one minute, 5 ms none).
 */
export const DEFAULT_RETURN_MARGIN_MS = 5;
export const DEFAULT_HEADROOM = 0.8;
export const DEFAULT_MAX_QUEUED_PAIRS = 512;
export const DEFAULT_PROBE_INTERVAL_MS = 250;
/** The label of results answered from the cache (their `sourceTier` names the tier that scored them). */
export const CACHE_TIER: TierName = 'cache';
const DEFAULT_SIGNALS: readonly string[] = Object.freeze([RELEVANT]);
const MODES: ReadonlySet<RoutingMode> = new Set(['fixed', 'budget', 'cascade']);

/** A registered tier with its resolved settings and live cost model. */
export interface TierState {
  readonly spec: TierSpec;
  readonly name: TierName;
  readonly inline: boolean;
  readonly cacheable: boolean;
  readonly maxQueuedPairs: number;
  readonly model: TierCostModel;
}

/** A routing after defaults and overrides, with the fixed tier looked up. */
export interface ResolvedRouting {
  readonly mode: RoutingMode;
  readonly fixed: TierState;
  /** The tier cascade mode spends the budget on (never the inline tier). */
  readonly cascade: TierState;
  /** Further cascade stages, in order (a `cascadeTier` list after its first name); usually empty. */
  readonly cascadeStages: readonly TierState[];
  readonly threshold: number;
  readonly signals: readonly string[];
}

/** The tiers of one router, best first, and how to find them by name. */
export interface TierSet {
  /** Tiers sorted by quality, best first; the inline tier (if any) is last. */
  readonly ranked: readonly TierState[];
  readonly byName: ReadonlyMap<string, TierState>;
  readonly inline: TierState | undefined;
}

/** A validated RouterConfig with every default applied. */
export interface ResolvedConfig extends TierSet {
  readonly id: string;
  readonly routing: RoutingOptions;
  readonly defaultRouting: ResolvedRouting;
  readonly cache: RouterCache | undefined;
  /** Background fill settings, when it is on (it needs a cache and a cacheable, queued best tier). */
  readonly backgroundFill: BackgroundFillOptions | undefined;
  readonly defaultBudgetMs: number;
  readonly returnMarginMs: number;
  /** Answer-lag allowance settings; undefined when it is off. */
  readonly answerLag: AnswerLagOptions | undefined;
  readonly headroom: number;
  readonly probeIntervalMs: number;
  readonly clock: () => number;
  /** Union of the tiers' declared signals; undefined when a tier declares none. */
  readonly signals: readonly string[] | undefined;
}

function resolveTier(spec: TierSpec, i: number, names: Set<string>, qualities: Set<number>): TierState {
  if (typeof spec !== 'object' || spec === null) throw new InvalidArgumentError(`tiers[${i}] must be an object`);
  if (typeof spec.name !== 'string' || spec.name.length === 0 || spec.name === CACHE_TIER)
    throw new InvalidArgumentError(`tiers[${i}].name must be a non-empty string other than 'cache'`);
  if (names.has(spec.name))
    throw new InvalidArgumentError(`tier name ${JSON.stringify(spec.name)} is registered twice`);
  if (!isScorer(spec.scorer))
    throw new InvalidArgumentError(
      `tiers[${i}].scorer must be a Scorer { id, score(), signals? } (signals: a list of non-empty names)`,
    );
  if (typeof spec.quality !== 'number' || !Number.isFinite(spec.quality))
    throw new InvalidArgumentError(`tiers[${i}].quality must be a finite number`);
  if (qualities.has(spec.quality)) throw new InvalidArgumentError(`tiers[${i}].quality ${spec.quality} is not unique`);
  if (spec.maxQueuedPairs !== undefined) positiveInteger(`tiers[${i}].maxQueuedPairs`, spec.maxQueuedPairs);
  if (spec.initialMsPerPair !== undefined) nonNegativeNumber(`tiers[${i}].initialMsPerPair`, spec.initialMsPerPair);
  if (spec.estimateMs !== undefined && typeof spec.estimateMs !== 'function')
    throw new InvalidArgumentError(`tiers[${i}].estimateMs must be a function`);
  if (spec.pendingPairs !== undefined && typeof spec.pendingPairs !== 'function')
    throw new InvalidArgumentError(`tiers[${i}].pendingPairs must be a function`);
  const declared = spec.scorer.signals;
  if (
    declared !== undefined &&
    (!Array.isArray(declared) || !declared.every((s) => typeof s === 'string' && s.length > 0))
  )
    throw new InvalidArgumentError(`tiers[${i}].scorer.signals must be a list of signal names`);
  names.add(spec.name);
  qualities.add(spec.quality);
  const inline = spec.inline === true;
  return {
    spec,
    name: spec.name,
    inline,
    cacheable: spec.cache ?? !inline,
    maxQueuedPairs: spec.maxQueuedPairs ?? DEFAULT_MAX_QUEUED_PAIRS,
    model: new TierCostModel(spec),
  };
}

/**
 * The union of the given tiers' declared signals (best tier's first, each name once), or undefined
 * when any of them declares none: then nobody can tell which signals a pair may carry.
 */
export function signalUnion(tiers: readonly TierState[]): readonly string[] | undefined {
  const union = new Set<string>();
  for (const tier of tiers) {
    const declared = tier.spec.scorer.signals;
    if (declared === undefined) return undefined;
    for (const name of declared) union.add(name);
  }
  return Object.freeze([...union]);
}

/** Validates a RouterConfig; throws InvalidArgumentError naming the first bad field. */
export function resolveConfig(config: RouterConfig): ResolvedConfig {
  if (typeof config !== 'object' || config === null)
    throw new InvalidArgumentError('createRouter needs a config object { tiers, routing?, cache? }');
  if (!Array.isArray(config.tiers) || config.tiers.length === 0)
    throw new InvalidArgumentError('config.tiers must be a non-empty array of tiers');
  const names = new Set<string>();
  const qualities = new Set<number>();
  const ranked = config.tiers.map((spec, i) => resolveTier(spec, i, names, qualities));
  ranked.sort((a, b) => b.spec.quality - a.spec.quality);
  const inlineTiers = ranked.filter((s) => s.inline);
  if (inlineTiers.length > 1) throw new InvalidArgumentError('at most one tier may be inline');
  if (inlineTiers.length === 1 && ranked[ranked.length - 1] !== inlineTiers[0])
    throw new InvalidArgumentError('the inline tier must have the lowest quality');
  if (
    config.cache !== undefined &&
    (typeof config.cache !== 'object' ||
      config.cache === null ||
      typeof config.cache.lookup !== 'function' ||
      typeof config.cache.resolve !== 'function')
  ) {
    throw new InvalidArgumentError('config.cache must provide lookup() and resolve() (createScoreCache does)');
  }
  if (config.defaultBudgetMs !== undefined) positiveNumber('defaultBudgetMs', config.defaultBudgetMs);
  if (config.returnMarginMs !== undefined) nonNegativeNumber('returnMarginMs', config.returnMarginMs);
  const answerLag = resolveAnswerLag(config.answerLag);
  if (config.probeIntervalMs !== undefined) positiveLimit('probeIntervalMs', config.probeIntervalMs);
  if (config.headroom !== undefined) positiveFraction('headroom', config.headroom);
  if (config.clock !== undefined && typeof config.clock !== 'function')
    throw new InvalidArgumentError('config.clock must be a function');
  if (config.id !== undefined && (typeof config.id !== 'string' || config.id.length === 0))
    throw new InvalidArgumentError('config.id must be a non-empty string');
  const tiers: TierSet = { ranked, byName: new Map(ranked.map((s) => [s.name, s])), inline: inlineTiers[0] };
  const best = ranked[0];
  const fillWanted = config.backgroundFill !== undefined && config.backgroundFill !== false;
  const backgroundFill =
    fillWanted && config.cache !== undefined && best.cacheable && !best.inline
      ? config.backgroundFill === true
        ? {}
        : (config.backgroundFill as BackgroundFillOptions)
      : undefined;
  const routing = Object.freeze({ ...(config.routing ?? { mode: ranked.length > 1 ? 'cascade' : 'fixed' }) });
  return {
    ...tiers,
    id: config.id ?? `router(${ranked.map((s) => `${s.name}=${s.spec.scorer.id}`).join(',')})`,
    routing,
    defaultRouting: resolveRouting(tiers, routing, undefined),
    cache: config.cache,
    backgroundFill,
    defaultBudgetMs: config.defaultBudgetMs ?? DEFAULT_BUDGET_MS,
    returnMarginMs: config.returnMarginMs ?? DEFAULT_RETURN_MARGIN_MS,
    answerLag,
    headroom: config.headroom ?? DEFAULT_HEADROOM,
    probeIntervalMs: config.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS,
    clock: config.clock ?? Date.now,
    signals: signalUnion(ranked),
  };
}

function resolveAnswerLag(value: RouterConfig['answerLag']): AnswerLagOptions | undefined {
  if (value === undefined || value === true) return {};
  if (value === false) return undefined;
  if (typeof value !== 'object' || value === null)
    throw new InvalidArgumentError('answerLag must be a boolean or { maxMs?, halfLifeMs?, watchEventLoop? }');
  rejectUnknownKeys(value, ANSWER_LAG_KEYS, 'answerLag');
  if (value.maxMs !== undefined) nonNegativeNumber('answerLag.maxMs', value.maxMs);
  if (value.halfLifeMs !== undefined) positiveNumber('answerLag.halfLifeMs', value.halfLifeMs);
  if (value.watchEventLoop !== undefined && typeof value.watchEventLoop !== 'boolean')
    throw new InvalidArgumentError('answerLag.watchEventLoop must be a boolean');
  return { ...value };
}

/**
 * Merges a routing override over a base (the router's configured routing, or an already resolved
 * one) and validates the result; throws InvalidArgumentError naming the bad field.
 */
export function resolveRouting(
  tiers: TierSet,
  base: RoutingOptions | ResolvedRouting,
  override: Partial<RoutingOptions> | undefined,
): ResolvedRouting {
  const merged: { -readonly [K in keyof RoutingOptions]?: RoutingOptions[K] } = {
    ...(base as RoutingOptions),
    ...(override ?? {}),
  };
  if ('fixed' in base && override?.fixedTier === undefined) merged.fixedTier = base.fixed.name;
  if ('cascade' in base && override?.cascadeTier === undefined)
    merged.cascadeTier =
      base.cascadeStages.length === 0 ? base.cascade.name : [base.cascade, ...base.cascadeStages].map((t) => t.name);
  if ('signals' in base && override?.signal === undefined) merged.signal = base.signals;
  const mode = merged.mode;
  if (mode === undefined || !MODES.has(mode))
    throw new InvalidArgumentError(`routing.mode must be 'fixed', 'budget' or 'cascade', got ${String(mode)}`);
  const fixedName = merged.fixedTier ?? tiers.ranked[0].name;
  const fixed = tiers.byName.get(fixedName);
  if (fixed === undefined)
    throw new InvalidArgumentError(
      `routing.fixedTier ${JSON.stringify(fixedName)} is not a registered tier (${[...tiers.byName.keys()].join(', ')})`,
    );
  const cascadeNames: readonly unknown[] = Array.isArray(merged.cascadeTier)
    ? merged.cascadeTier
    : [merged.cascadeTier ?? tiers.ranked[0].name];
  if (cascadeNames.length === 0) throw new InvalidArgumentError('routing.cascadeTier must not be an empty list');
  const cascadeTiers = cascadeNames.map((cascadeName) => {
    const tier = typeof cascadeName === 'string' ? tiers.byName.get(cascadeName) : undefined;
    if (tier === undefined || (tier.inline && tiers.ranked.length > 1))
      throw new InvalidArgumentError(
        `routing.cascadeTier ${JSON.stringify(cascadeName)} must be a registered tier that is not the inline one (${[...tiers.byName.keys()].join(', ')})`,
      );
    return tier;
  });
  if (new Set(cascadeTiers).size !== cascadeTiers.length)
    throw new InvalidArgumentError(`routing.cascadeTier names a tier twice: ${JSON.stringify(cascadeNames)}`);
  const [cascade, ...cascadeStages] = cascadeTiers;
  const threshold = merged.threshold ?? 0.5;
  if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1))
    throw new InvalidArgumentError(`routing.threshold must be a probability in [0, 1], got ${String(threshold)}`);
  const signal = merged.signal ?? DEFAULT_SIGNALS;
  const signals = typeof signal === 'string' ? [signal] : signal;
  if (!Array.isArray(signals) || signals.length === 0 || !signals.every((s) => typeof s === 'string' && s.length > 0)) {
    throw new InvalidArgumentError('routing.signal must be a signal name or a non-empty list of names');
  }
  return { mode, fixed, cascade, cascadeStages, threshold, signals };
}
