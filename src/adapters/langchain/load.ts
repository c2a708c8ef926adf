/**
 * Loading the LangChain integration. It must extend LangChain's BaseDocumentCompressor, so the
 * module that defines it imports @langchain/core statically; this loader imports that module and
 * turns "@langchain/core is not installed" into MissingDependencyError naming the package.
 */
import { missingDependencyOf } from '../../util/optional-package.js';

/** Packages the LangChain adapter needs at run time. */
export const LANGCHAIN_PACKAGES: readonly string[] = Object.freeze(['@langchain/core']);

export async function loadLangChainModule<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    throw missingDependencyOf(err, LANGCHAIN_PACKAGES, 'relevance-gate/langchain');
  }
}
