/**
 * relevance-gate/llamaindex: the gate as a LlamaIndex.TS node postprocessor.
 *
 *   import { RelevanceGatePostprocessor } from 'relevance-gate/llamaindex';
 *   const engine = new RetrieverQueryEngine(retriever, synthesizer, [new RelevanceGatePostprocessor({ gate })]);
 *
 * BaseNodePostprocessor is an interface and the nodes bring their own methods, so this entry loads
 * no LlamaIndex package: @llamaindex/core is an optional peer for its types only.
 */
export { RelevanceGatePostprocessor } from './postprocessor.js';
export type {
  GatedNodes,
  GatePostprocessorOptions,
  PostprocessorCommonOptions,
  RelevanceGatePostprocessorOptions,
  ScorerPostprocessorOptions,
} from './postprocessor.js';
export type { PostprocessOptions } from './call-options.js';
export type { NodePassage, RelevanceGateNodeDecision, RelevanceGateNodeMetadata } from './nodes.js';
export { InvalidNodeError, MissingQueryError } from './errors.js';
