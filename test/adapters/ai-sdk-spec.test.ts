// The adapter writes the AI SDK specification out structurally (it loads no AI SDK package).
// These assignments make `npm run typecheck` fail if it drifts from the installed @ai-sdk/provider.
import type {
  ProviderV4,
  RerankingModelV3,
  RerankingModelV3CallOptions,
  RerankingModelV4,
  RerankingModelV4CallOptions,
  RerankingModelV4Result,
} from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import {
  createRelevanceGate,
  type GateRerankingModelV4,
  type RerankingCallOptions,
  type RerankingResult,
  rerankingModel,
} from '../../src/adapters/ai-sdk/index.js';
import { createGate } from '../../src/index.js';
import { tableScorer } from '../gate/helpers.js';

const gate = createGate({ scorer: tableScorer({ '0': { relevant: 0.9 } }) });

describe('AI SDK specification conformance', () => {
  it('models are RerankingModelV4 / RerankingModelV3 and the provider is a ProviderV4', async () => {
    const v4: RerankingModelV4 = rerankingModel(gate);
    const v3: RerankingModelV3 = rerankingModel(gate, { specificationVersion: 'v3' });
    const provider: ProviderV4 = createRelevanceGate({ gates: { g: gate } });
    const fromProvider: RerankingModelV4 | undefined = provider.rerankingModel?.('g');
    // Calls typed by the SDK are accepted; results are what the SDK expects.
    const v4Call: RerankingModelV4CallOptions = { documents: { type: 'text', values: ['x'] }, query: 'q', topN: 1 };
    const v3Call: RerankingModelV3CallOptions = v4Call;
    const ours: RerankingCallOptions = v4Call;
    const result: RerankingModelV4Result = await v4.doRerank(v4Call);
    const ourResult: RerankingResult = await rerankingModel(gate).doRerank(ours);
    const accepted: RerankingModelV4Result = ourResult;
    expect([v4.specificationVersion, v3.specificationVersion, fromProvider?.specificationVersion]).toEqual([
      'v4',
      'v3',
      'v4',
    ]);
    expect((await v3.doRerank(v3Call)).ranking).toEqual(result.ranking);
    expect(ours.query).toBe('q');
    expect(ourResult.ranking).toEqual([{ index: 0, relevanceScore: 0.9 }]);
    expect(accepted.ranking).toEqual(result.ranking);
    const asOurs: GateRerankingModelV4 = v4 as GateRerankingModelV4;
    expect(asOurs.provider).toBe('relevance-gate');
    expect(asOurs.modelId).toBe('table-model');
  });
});
