/**
 * relevance-gate/langchain: the gate as a LangChain document compressor.
 *
 *   import { RelevanceGateCompressor } from 'relevance-gate/langchain';
 *   const retriever = new ContextualCompressionRetriever({ baseCompressor: new RelevanceGateCompressor({ gate }), baseRetriever });
 *
 * Without @langchain/core installed, importing this entry rejects with MissingDependencyError.
 */
import { loadLangChainModule } from './load.js';

export type {
  CompressOptions,
  DocumentPassage,
  GatedDocuments,
  RelevanceGateCompressorOptions,
  RelevanceGateDecision,
  RelevanceGateMetadata,
} from './compressor.js';
export { LANGCHAIN_PACKAGES } from './load.js';

const compressorModule = await loadLangChainModule(() => import('./compressor.js'));

/** A BaseDocumentCompressor that keeps the documents the gate lets through (see docs/adapters.md). */
export const RelevanceGateCompressor = compressorModule.RelevanceGateCompressor;
export type RelevanceGateCompressor = import('./compressor.js').RelevanceGateCompressor;
