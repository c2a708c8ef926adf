/**
 * A relevance gate as an AI SDK reranking model. `rerank()` gets the documents the gate let
 * through in the gate's returned order, scored with the gate's calibrated score (GateItem.score,
 * descending in that order); the gate's route, rule and
 * signals (relevance included) for every input document travel in providerMetadata.
 */
import { installedSpecificationVersion } from './detect-version.js';
import { admittedItems } from '../../context/order.js';
import { type FilterOptions, type Gate, type GatePolicy, type GateResult, InvalidArgumentError } from '../../index.js';
import { rejectUnknownKeys } from '../../util/option-keys.js';
import { checkFields, type DocumentFields, type RerankPassage, rerankPassages } from './documents.js';
import type {
  GateRerankingModelFor,
  JSONObject,
  RerankingCallOptions,
  RerankingResult,
  RerankingWarning,
  SpecificationVersion,
} from './spec.js';

export const DEFAULT_PROVIDER_NAME = 'relevance-gate';

/** Options read per call from `providerOptions[provider]` (JSON, as rerank() passes them). */
export interface GateRerankCallOptions {
  readonly budgetMs?: number;
  readonly deadline?: number;
  readonly queryClass?: string;
  readonly includeConflicting?: boolean;
  readonly policy?: GatePolicy;
}

export interface RerankingModelOptions<V extends SpecificationVersion = 'v4'> extends DocumentFields {
  /** Reported as modelId. Default: the gate's scorer id. */
  readonly modelId?: string;
  /** Reported as provider; also the providerOptions / providerMetadata key. Default 'relevance-gate'. */
  readonly provider?: string;
  /** 'v4' for `ai` 7 (default), 'v3' for `ai` 6. */
  readonly specificationVersion?: V;
  /** Rank conflicting documents too (flagged in providerMetadata) or leave them out. Default true. */
  readonly includeConflicting?: boolean;
  /** Scoring budget per call in ms (fail closed past it); a per-call budgetMs lowers it. */
  readonly budgetMs?: number;
  /** Policy override for every call (merged over the gate's policy). */
  readonly policy?: GatePolicy;
  readonly queryClass?: string;
  /** Receives the full gate result of every call. */
  readonly onResult?: (result: GateResult<RerankPassage>) => void;
}

const MODEL_KEYS: ReadonlySet<string> = new Set([
  'modelId',
  'provider',
  'specificationVersion',
  'includeConflicting',
  'budgetMs',
  'policy',
  'queryClass',
  'onResult',
  'textField',
  'titleField',
  'idField',
]);
const CALL_KEYS: ReadonlySet<string> = new Set(['budgetMs', 'deadline', 'queryClass', 'includeConflicting', 'policy']);

function isGate(value: unknown): value is Gate {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Gate).filter === 'function' &&
    typeof (value as Gate).scorer?.id === 'string'
  );
}

function callOptionsOf(providerOptions: RerankingCallOptions['providerOptions'], key: string): GateRerankCallOptions {
  const raw = providerOptions?.[key];
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new InvalidArgumentError(`providerOptions['${key}'] must be an object`);
  rejectUnknownKeys(raw, CALL_KEYS, `providerOptions['${key}']`);
  const options = raw as GateRerankCallOptions;
  if (options.includeConflicting !== undefined && typeof options.includeConflicting !== 'boolean')
    throw new InvalidArgumentError(`providerOptions['${key}'].includeConflicting must be a boolean`);
  return options;
}

/** Route and signals of one input document, as JSON. */
function decisionJson(item: GateResult<RerankPassage>['included'][number], position: number | null): JSONObject {
  return {
    index: item.passage.index,
    id: item.id,
    route: item.route,
    rule: item.rule,
    relevance: item.relevance,
    reason: item.reason ?? null,
    signals: item.signals === null ? null : Object.assign({}, item.signals),
    tier: item.tier ?? null,
    cached: item.cached,
    position,
  };
}

function metadataJson(result: GateResult<RerankPassage>, positions: ReadonlyMap<number, number>): JSONObject {
  const items = [...result.included, ...result.conflicting, ...result.excluded].sort(
    (a, b) => a.passage.index - b.passage.index,
  );
  const s = result.stats;
  return {
    scorer: result.tier.scorer,
    tier: result.tier.name,
    threshold: s.threshold,
    insufficientContext: s.insufficientContext,
    stats: {
      retrieved: s.retrieved,
      scored: s.scored,
      cacheHits: s.cacheHits,
      passed: s.passed,
      returned: s.returned,
      conflicting: s.conflicting,
      excluded: s.excluded,
      unscored: s.unscored,
      fallbackTriggered: s.fallbackTriggered,
    },
    documents: items.map((item) => decisionJson(item, positions.get(item.passage.index) ?? null)),
    errors: [...result.errors],
  };
}

/** One doRerank call of the model configured by `options`. */
async function rerankWithGate(
  gate: Gate,
  options: RerankingModelOptions<SpecificationVersion>,
  provider: string,
  modelId: string,
  call: RerankingCallOptions,
): Promise<RerankingResult> {
  if (typeof call !== 'object' || call === null)
    throw new InvalidArgumentError('doRerank needs { documents, query, topN?, abortSignal? }');
  const { query, topN, abortSignal } = call;
  if (topN !== undefined && !(Number.isInteger(topN) && topN >= 1))
    throw new InvalidArgumentError(`topN must be an integer ≥ 1, got ${String(topN)}`);
  if (abortSignal !== undefined && !(abortSignal instanceof AbortSignal))
    throw new InvalidArgumentError('abortSignal must be an AbortSignal');
  const perCall = callOptionsOf(call.providerOptions, provider);
  const passages = rerankPassages(call.documents, options);
  const timestamp = new Date();
  const warnings: RerankingWarning[] = [];
  if (call.headers !== undefined && Object.keys(call.headers).length > 0)
    warnings.push({ type: 'unsupported', feature: 'headers', details: 'the gate runs in-process; no HTTP request' });
  abortSignal?.throwIfAborted();
  if (passages.length === 0) return { ranking: [], warnings, response: { timestamp, modelId } };
  const result = await gate.filter(query, passages, filterOptionsOf(options, perCall, abortSignal));
  abortSignal?.throwIfAborted();
  options.onResult?.(result);
  const includeConflicting = perCall.includeConflicting ?? options.includeConflicting ?? true;
  let admitted = admittedItems(result, includeConflicting);
  if (topN !== undefined && admitted.length > topN) admitted = admitted.slice(0, topN);
  // The gate's score (GateItem.score): calibrated and descending in the order admitted comes in;
  // fail-open items have none: last, with score 0.
  const ranking = admitted.map((item) => ({
    index: item.passage.index,
    relevanceScore: item.score ?? 0,
  }));
  const positions = new Map(ranking.map((r, i) => [r.index, i]));
  return {
    ranking,
    providerMetadata: { [provider]: metadataJson(result, positions) },
    warnings,
    response: { timestamp, modelId },
  };
}

function filterOptionsOf(
  base: RerankingModelOptions<SpecificationVersion>,
  call: GateRerankCallOptions,
  signal: AbortSignal | undefined,
): FilterOptions {
  const out: { -readonly [K in keyof FilterOptions]: FilterOptions[K] } = {};
  if (signal !== undefined) out.signal = signal;
  const budgets = [base.budgetMs, call.budgetMs].filter((b): b is number => b !== undefined);
  if (budgets.length > 0) out.budgetMs = Math.min(...budgets);
  if (call.deadline !== undefined) out.deadline = call.deadline;
  const policy = call.policy === undefined ? base.policy : { ...base.policy, ...call.policy };
  if (policy !== undefined) out.policy = policy;
  const queryClass = call.queryClass ?? base.queryClass;
  if (queryClass !== undefined) out.queryClass = queryClass;
  return out;
}

export function checkModelOptions(options: RerankingModelOptions<SpecificationVersion>, what: string): void {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError(`${what} options must be an object`);
  rejectUnknownKeys(options, MODEL_KEYS, `${what} options`);
  const { modelId, provider, specificationVersion, includeConflicting, onResult } = options;
  if (modelId !== undefined && (typeof modelId !== 'string' || modelId.length === 0))
    throw new InvalidArgumentError(`${what} options.modelId must be a non-empty string`);
  if (provider !== undefined && (typeof provider !== 'string' || provider.length === 0))
    throw new InvalidArgumentError(`${what} options.provider must be a non-empty string`);
  if (specificationVersion !== undefined && specificationVersion !== 'v3' && specificationVersion !== 'v4')
    throw new InvalidArgumentError(`${what} options.specificationVersion must be 'v3' or 'v4'`);
  if (includeConflicting !== undefined && typeof includeConflicting !== 'boolean')
    throw new InvalidArgumentError(`${what} options.includeConflicting must be a boolean`);
  if (onResult !== undefined && typeof onResult !== 'function')
    throw new InvalidArgumentError(`${what} options.onResult must be a function`);
  checkFields(options);
}

/**
 * A reranking model (by default the specification of the application's `ai` package: V4 for
 * `ai` 7, V3 for `ai` 6; or as `specificationVersion` says) that
 * ranks by `gate`: `rerank({ model: rerankingModel(gate), query, documents, topN })`.
 */
export function rerankingModel<V extends SpecificationVersion = 'v4'>(
  gate: Gate,
  options: RerankingModelOptions<V> = {},
): GateRerankingModelFor<V> {
  if (!isGate(gate)) throw new InvalidArgumentError('rerankingModel needs a gate (what createGate returns)');
  checkModelOptions(options, 'rerankingModel');
  const settings = { ...options };
  const provider = settings.provider ?? DEFAULT_PROVIDER_NAME;
  const modelId = settings.modelId ?? gate.scorer.id;
  // A plain object with a closure, not a class with private fields: ai 7 wraps v3 models in a
  // Proxy and calls doRerank through it, which private fields would not survive.
  const model = {
    specificationVersion: settings.specificationVersion ?? installedSpecificationVersion(),
    provider,
    modelId,
    doRerank: (call: RerankingCallOptions) => rerankWithGate(gate, settings, provider, modelId, call),
  };
  return Object.freeze(model) as GateRerankingModelFor<V>;
}
