/** Public types of the gated context: options, template, and what buildContext returns. */
import type { GateItem, Route } from '../gate/types.js';
import type { Passage } from '../types.js';
import type { AsyncTokenCounter, TokenCounter } from './tokens.js';

/** One passage as a template sees it. `id`, `title` and `text` are already escaped for their position. */
export interface PassageView {
  /** Escaped for an attribute value (quotes, brackets, line breaks). */
  readonly id: string;
  /** Escaped for an attribute value; '' when the passage has no title. */
  readonly title: string;
  /** The passage text with tag openings neutralised (see neutralizeMarkup). */
  readonly text: string;
  /** Relevance with three decimals, '' when the gate had none (fail-open). */
  readonly relevance: string;
  readonly route: 'included' | 'conflicting';
  readonly rule: string;
  /** 1-based position inside its block. */
  readonly position: number;
  /** The same values unescaped, for templates that escape differently. */
  readonly raw: { readonly id: string; readonly title: string | undefined; readonly text: string };
}

/** What the system and user templates receive. Block strings are rendered entries or the `none` marker. */
export interface PromptView {
  readonly accepted: string;
  readonly conflicting: string;
  /** The question with tag openings neutralised. */
  readonly question: string;
  /** The template's `insufficientNotice` when context is insufficient, else ''. */
  readonly insufficient: string;
  readonly isInsufficient: boolean;
  readonly acceptedCount: number;
  readonly conflictingCount: number;
}

/**
 * A prompt template. String parts use `{{name}}` placeholders (names of PromptView, or of
 * PassageView for `passage`), substituted in one pass: text inserted for one placeholder is
 * never scanned again. Functions get the view and return the text.
 */
export interface ContextTemplate {
  readonly system: string | ((view: PromptView) => string);
  readonly user: string | ((view: PromptView) => string);
  readonly passage: string | ((passage: PassageView) => string);
  /** Written in place of an empty block. */
  readonly none: string;
  /** PromptView.insufficient when context is insufficient. */
  readonly insufficientNotice: string;
  /** Between the entries of one block. */
  readonly separator: string;
  /** Makes passage text and the question safe inside the template's delimiters. */
  readonly escapeText: (text: string) => string;
  /** Makes ids and titles safe inside the template's attribute/header syntax. */
  readonly escapeAttribute: (value: string) => string;
}

export interface BuildContextOptions {
  /**
   * Token budget for the passage entries of both blocks together (each entry counted as
   * rendered: delimiters, id, title, text). Block scaffolding, instructions and the question are
   * not charged to it; `tokens` reports them. Default: unbounded.
   */
  readonly maxTokens?: number;
  /** Counts tokens; default estimateTokens. buildContext needs a synchronous counter. */
  readonly countTokens?: TokenCounter;
  /** A full template or parts merged over DEFAULT_CONTEXT_TEMPLATE. */
  readonly template?: Partial<ContextTemplate>;
  /** Put conflicting passages in the conflicting block (true) or leave them out (false). Default true. */
  readonly includeConflicting?: boolean;
  /** Cut the first passage that does not fit at a word boundary instead of dropping it. Default false. */
  readonly truncate?: boolean;
  /** The question written into the prompt. Default: the gate result's query. */
  readonly question?: string;
}

export interface BuildContextAsyncOptions extends Omit<BuildContextOptions, 'countTokens'> {
  readonly countTokens?: AsyncTokenCounter;
}

export interface ContextPassage<P extends Passage = Passage> {
  readonly id: string;
  readonly title: string | undefined;
  /** The text as written into the prompt (before escaping); shortened when `truncated`. */
  readonly text: string;
  readonly route: 'included' | 'conflicting';
  readonly rule: string;
  readonly relevance: number | null;
  /** Tokens of the rendered entry. */
  readonly tokens: number;
  readonly truncated: boolean;
  readonly item: GateItem<P>;
}

export interface DroppedPassage<P extends Passage = Passage> {
  readonly id: string;
  readonly route: Route;
  /** 'budget': did not fit maxTokens; 'conflicting-excluded': includeConflicting is false. */
  readonly reason: 'budget' | 'conflicting-excluded';
  /** Tokens of the rendered entry (0 when it was not rendered). */
  readonly tokens: number;
  readonly item: GateItem<P>;
}

/** A chat message in the shape OpenAI, the AI SDK, LangChain and most chat APIs accept. */
export interface ChatMessage {
  readonly role: 'system' | 'user';
  readonly content: string;
}

export interface ContextTokens {
  /** maxTokens, or null when unbounded. */
  readonly budget: number | null;
  /** Sum of the packed entries' tokens (≤ budget). */
  readonly passages: number;
  readonly system: number;
  readonly user: number;
}

export interface GatedContext<P extends Passage = Passage> {
  /** `system`, a blank line, then `user`: for completion-style APIs. */
  readonly prompt: string;
  /** [{ role: 'system', content: system }, { role: 'user', content: user }]. */
  readonly messages: readonly ChatMessage[];
  /** The instructions (Anthropic-style APIs take it apart from the messages). */
  readonly system: string;
  /** The evidence blocks and the question. */
  readonly user: string;
  /** Packed accepted passages, in the gate's returned order (src/gate/order.ts). */
  readonly accepted: ReadonlyArray<ContextPassage<P>>;
  /** Packed conflicting passages, in the gate's returned order (src/gate/order.ts). */
  readonly conflicting: ReadonlyArray<ContextPassage<P>>;
  /** Passages the gate let through that are not in the prompt, and why. */
  readonly dropped: ReadonlyArray<DroppedPassage<P>>;
  /** The gate found the context insufficient, or no accepted passage is in the prompt. */
  readonly insufficient: boolean;
  readonly tokens: ContextTokens;
}
