/**
 * The AI SDK's reranking model specification (RerankingModelV3 for `ai` 6, RerankingModelV4 for
 * `ai` 7, from @ai-sdk/provider), written out structurally so this adapter loads and type-checks
 * without the package. test/adapters/ai-sdk-spec.test.ts checks these against the installed
 * @ai-sdk/provider types in both directions.
 */

export type JSONValue = null | string | number | boolean | JSONObject | readonly JSONValue[];
export interface JSONObject {
  [key: string]: JSONValue | undefined;
}

/** SharedV3/V4ProviderOptions and ProviderMetadata: provider name → JSON object. */
export type ProviderRecord = Record<string, JSONObject>;

export interface RerankingCallOptions {
  readonly documents: { type: 'text'; values: string[] } | { type: 'object'; values: JSONObject[] };
  readonly query: string;
  readonly topN?: number;
  readonly abortSignal?: AbortSignal;
  readonly providerOptions?: ProviderRecord;
  readonly headers?: Record<string, string | undefined>;
}

export type RerankingWarning =
  | { type: 'unsupported'; feature: string; details?: string }
  | { type: 'other'; message: string };

export interface RerankingResult {
  /** Best first (descending relevanceScore); `index` is the position in the call's documents. */
  ranking: Array<{ index: number; relevanceScore: number }>;
  providerMetadata?: ProviderRecord;
  warnings?: RerankingWarning[];
  response?: { id?: string; timestamp?: Date; modelId?: string };
}

interface RerankingModelBase {
  readonly provider: string;
  readonly modelId: string;
  doRerank(options: RerankingCallOptions): PromiseLike<RerankingResult>;
}

/** Structurally a RerankingModelV4 (`ai` 7). */
export interface GateRerankingModelV4 extends RerankingModelBase {
  readonly specificationVersion: 'v4';
}

/** Structurally a RerankingModelV3 (`ai` 6; `ai` 7 accepts it too). */
export interface GateRerankingModelV3 extends RerankingModelBase {
  readonly specificationVersion: 'v3';
}

export type SpecificationVersion = 'v3' | 'v4';
export type GateRerankingModelFor<V extends SpecificationVersion> = V extends 'v3'
  ? GateRerankingModelV3
  : GateRerankingModelV4;
