/**
 * createRelevanceGate: an AI SDK provider over named gates, so an app can write
 * `relevanceGate.reranking('fast-path')` and register the provider with createProviderRegistry.
 * It offers reranking models only; asking it for any other kind of model throws.
 */
import { type Gate, InvalidArgumentError } from '../../index.js';
import { checkModelOptions, type RerankingModelOptions, rerankingModel } from './reranking-model.js';
import type { GateRerankingModelV4 } from './spec.js';
import { NoSuchGateModelError } from './errors.js';

export { NoSuchGateModelError } from './errors.js';

export interface RelevanceGateProviderOptions<Names extends string>
  extends Omit<RerankingModelOptions<'v4'>, 'modelId' | 'specificationVersion'> {
  /** Gate per model id: `reranking(id)` ranks with `gates[id]`. */
  readonly gates: Readonly<Record<Names, Gate>>;
}

/** Structurally an AI SDK ProviderV4 offering reranking models only. */
export interface RelevanceGateProvider<Names extends string> {
  readonly specificationVersion: 'v4';
  /** The reranking model of gate `modelId` (the same object on every call). */
  reranking(modelId: Names): GateRerankingModelV4;
  /** The name ProviderV4 and createProviderRegistry use; same as `reranking`. */
  rerankingModel(modelId: Names): GateRerankingModelV4;
  languageModel(modelId: string): never;
  embeddingModel(modelId: string): never;
  imageModel(modelId: string): never;
}

export function createRelevanceGate<Names extends string>(
  options: RelevanceGateProviderOptions<Names>,
): RelevanceGateProvider<Names> {
  if (typeof options !== 'object' || options === null || typeof options.gates !== 'object' || options.gates === null)
    throw new InvalidArgumentError('createRelevanceGate needs { gates: { name: gate, ... } }');
  const { gates, ...modelOptions } = options;
  checkModelOptions(modelOptions, 'createRelevanceGate');
  const names = Object.keys(gates);
  if (names.length === 0) throw new InvalidArgumentError('createRelevanceGate: gates must name at least one gate');
  const models = new Map<string, GateRerankingModelV4>();
  for (const name of names)
    models.set(name, rerankingModel((gates as Record<string, Gate>)[name], { ...modelOptions, modelId: name }));
  const reranking = (modelId: Names): GateRerankingModelV4 => {
    const model = models.get(modelId);
    if (model === undefined)
      throw new NoSuchGateModelError(
        String(modelId),
        'rerankingModel',
        `relevance-gate has no gate named ${JSON.stringify(modelId)} (configured: ${names.join(', ')})`,
      );
    return model;
  };
  const unsupported =
    (modelType: string) =>
    (modelId: string): never => {
      throw new NoSuchGateModelError(
        modelId,
        modelType,
        `relevance-gate provides reranking models only, not a ${modelType} (${JSON.stringify(modelId)})`,
      );
    };
  return Object.freeze({
    specificationVersion: 'v4',
    reranking,
    rerankingModel: reranking,
    languageModel: unsupported('languageModel'),
    embeddingModel: unsupported('embeddingModel'),
    imageModel: unsupported('imageModel'),
  });
}
