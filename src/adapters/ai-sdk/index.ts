/**
 * relevance-gate/ai-sdk: the gate as an AI SDK reranking model.
 *
 *   import { rerank } from 'ai';
 *   import { rerankingModel } from 'relevance-gate/ai-sdk';
 *   const { ranking, rerankedDocuments } = await rerank({ model: rerankingModel(gate), query, documents, topN: 5 });
 *
 * The specification is an interface, so this entry loads neither `ai` nor @ai-sdk/provider.
 */
export { rerankingModel, DEFAULT_PROVIDER_NAME } from './reranking-model.js';
export type { RerankingModelOptions, GateRerankCallOptions } from './reranking-model.js';
export { createRelevanceGate, NoSuchGateModelError } from './provider.js';
export type { RelevanceGateProvider, RelevanceGateProviderOptions } from './provider.js';
export type { DocumentFields, FieldReader, RerankPassage } from './documents.js';
export type {
  GateRerankingModelV3,
  GateRerankingModelV4,
  GateRerankingModelFor,
  RerankingCallOptions,
  RerankingResult,
  RerankingWarning,
  SpecificationVersion,
  JSONObject,
  JSONValue,
  ProviderRecord,
} from './spec.js';
