/** Gated context: from a gate result to the prompt the LLM sees (re-exported from the package root). */
export { buildContext, buildContextAsync } from './build-context.js';
export {
  DEFAULT_CONTEXT_TEMPLATE,
  DEFAULT_SYSTEM_PROMPT,
  DEFAULT_INSUFFICIENT_NOTICE,
} from './template.js';
export { neutralizeMarkup, escapeAttribute } from './escape.js';
export { estimateTokens, type TokenCounter, type AsyncTokenCounter } from './tokens.js';
export type {
  BuildContextOptions,
  BuildContextAsyncOptions,
  ContextTemplate,
  PassageView,
  PromptView,
  ContextPassage,
  DroppedPassage,
  ChatMessage,
  ContextTokens,
  GatedContext,
} from './types.js';
