/**
 * buildContext: turns a gate result into the prompt the LLM sees. Accepted and conflicting
 * passages go to separate blocks; passages are packed in the gate's returned order into a token budget,
 * each entry counted as rendered, and one that does not fit is dropped whole (or, with
 * `truncate`, cut at a word boundary). The packing is written once as a generator that asks
 * for token counts, so a synchronous and an asynchronous tokenizer share the same code.
 */
import { InvalidArgumentError } from '../errors.js';
import type { GateItem, GateResult } from '../gate/types.js';
import { hasGateResultFields } from '../gate/validate.js';
import type { Passage } from '../types.js';
import { rejectUnknownKeys } from '../util/option-keys.js';
import { admittedItems } from './order.js';
import { renderPart, resolveTemplate } from './template.js';
import { estimateTokens } from './tokens.js';
import type {
  BuildContextAsyncOptions,
  BuildContextOptions,
  ContextPassage,
  ContextTemplate,
  DroppedPassage,
  GatedContext,
  PassageView,
  PromptView,
} from './types.js';

const OPTION_KEYS: ReadonlySet<string> = new Set([
  'maxTokens',
  'countTokens',
  'template',
  'includeConflicting',
  'truncate',
  'question',
]);
const TRUNCATION_MARK = '…';
const NO_OPTIONS: BuildContextOptions = Object.freeze({});

/** Yields a text whose token count it needs; receives the count. */
type Packing<P extends Passage> = Generator<string, GatedContext<P>, number>;

interface Settings {
  readonly budget: number;
  readonly template: ContextTemplate;
  readonly includeConflicting: boolean;
  readonly truncate: boolean;
  readonly question: string;
}

/** The context is built from the accepted and conflicting items and the stats of the result. */
function isGateResult(value: unknown): value is GateResult {
  return hasGateResultFields(value, ['included', 'conflicting'], ['stats']);
}

function settingsOf(result: unknown, options: BuildContextOptions | BuildContextAsyncOptions): Settings {
  if (!isGateResult(result))
    throw new InvalidArgumentError('buildContext needs a GateResult (what gate.filter, stream or reroute returns)');
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('buildContext options must be an object');
  rejectUnknownKeys(options, OPTION_KEYS, 'options', 'a buildContext option');
  const { maxTokens, includeConflicting, truncate, question, countTokens } = options;
  if (maxTokens !== undefined && !(typeof maxTokens === 'number' && maxTokens >= 0 && !Number.isNaN(maxTokens)))
    throw new InvalidArgumentError(`options.maxTokens must be a number ≥ 0, got ${String(maxTokens)}`);
  if (countTokens !== undefined && typeof countTokens !== 'function')
    throw new InvalidArgumentError('options.countTokens must be a function (text) => number');
  for (const [name, value] of [
    ['includeConflicting', includeConflicting],
    ['truncate', truncate],
  ] as const)
    if (value !== undefined && typeof value !== 'boolean')
      throw new InvalidArgumentError(`options.${name} must be a boolean`);
  if (question !== undefined && typeof question !== 'string')
    throw new InvalidArgumentError('options.question must be a string');
  return {
    budget: maxTokens ?? Number.POSITIVE_INFINITY,
    template: resolveTemplate(options.template),
    includeConflicting: includeConflicting ?? true,
    truncate: truncate ?? false,
    question: question ?? result.query,
  };
}

function passageText(item: GateItem): { text: string; title: string | undefined } {
  const passage = item.passage as Passage | undefined;
  if (typeof passage !== 'object' || passage === null || typeof passage.text !== 'string')
    throw new InvalidArgumentError(`buildContext: item ${JSON.stringify(item.id)} has no passage text`);
  const title = typeof passage.title === 'string' && passage.title.length > 0 ? passage.title : undefined;
  return { text: passage.text, title };
}

function viewOf(item: GateItem, text: string, title: string | undefined, position: number, t: ContextTemplate) {
  const route = item.route === 'conflicting' ? 'conflicting' : 'included';
  const view: PassageView = {
    id: t.escapeAttribute(item.id),
    title: title === undefined ? '' : t.escapeAttribute(title),
    text: t.escapeText(text),
    relevance: item.relevance === null ? '' : item.relevance.toFixed(3),
    route,
    rule: item.rule,
    position,
    raw: { id: item.id, title, text },
  };
  return view;
}

/** Ends of words (exclusive), ascending: where a cut keeps whole words. */
function wordEnds(text: string): number[] {
  const ends: number[] = [];
  for (const m of text.matchAll(/\S+/g)) ends.push(m.index + m[0].length);
  return ends;
}

interface Block<P extends Passage> {
  readonly route: 'included' | 'conflicting';
  readonly passages: Array<ContextPassage<P>>;
  /** The entries exactly as counted, so the prompt holds what the budget charged. */
  readonly entries: string[];
}

function* pack<P extends Passage>(result: GateResult<P>, s: Settings): Packing<P> {
  const t = s.template;
  const accepted: Block<P> = { route: 'included', passages: [], entries: [] };
  const conflicting: Block<P> = { route: 'conflicting', passages: [], entries: [] };
  const dropped: Array<DroppedPassage<P>> = [];
  if (!s.includeConflicting)
    for (const item of result.conflicting)
      dropped.push({ id: item.id, route: item.route, reason: 'conflicting-excluded', tokens: 0, item });
  let used = 0;
  let full = false;
  const admit = (block: Block<P>, item: GateItem<P>, title: string | undefined, fit: PackedText): void => {
    used += fit.tokens;
    block.passages.push({
      id: item.id,
      title,
      text: fit.text,
      route: block.route,
      rule: item.rule,
      relevance: item.relevance,
      tokens: fit.tokens,
      truncated: fit.truncated,
      item,
    });
    block.entries.push(fit.entry);
  };
  for (const item of admittedItems(result, s.includeConflicting)) {
    const { text, title } = passageText(item);
    const block = item.route === 'conflicting' ? conflicting : accepted;
    const position = block.passages.length + 1;
    const render = (body: string): string => renderPart(t.passage, viewOf(item, body, title, position, t), 'passage');
    if (full) {
      dropped.push({ id: item.id, route: item.route, reason: 'budget', tokens: 0, item });
      continue;
    }
    const entry = render(text);
    const tokens = checkedCount(yield entry);
    if (used + tokens <= s.budget) {
      admit(block, item, title, { text, entry, tokens, truncated: false });
      continue;
    }
    if (s.truncate) {
      // Largest whole-word prefix whose rendered entry fits what is left (binary search).
      const ends = wordEnds(text);
      let lo = 0;
      let hi = ends.length - 1;
      let best: PackedText | undefined;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        const cut = text.slice(0, ends[mid]) + TRUNCATION_MARK;
        const cutEntry = render(cut);
        const cutTokens = checkedCount(yield cutEntry);
        if (used + cutTokens <= s.budget) {
          best = { text: cut, entry: cutEntry, tokens: cutTokens, truncated: true };
          lo = mid + 1;
        } else hi = mid - 1;
      }
      full = true; // the budget is now filled to the word: later passages are not tried
      if (best !== undefined) {
        admit(block, item, title, best);
        continue;
      }
    }
    dropped.push({ id: item.id, route: item.route, reason: 'budget', tokens, item });
  }
  const renderBlock = (block: Block<P>): string =>
    block.entries.length === 0 ? t.none : block.entries.join(t.separator);
  const insufficient = result.stats.insufficientContext === true || accepted.passages.length === 0;
  const view: PromptView = {
    accepted: renderBlock(accepted),
    conflicting: renderBlock(conflicting),
    question: t.escapeText(s.question),
    insufficient: insufficient ? t.insufficientNotice : '',
    isInsufficient: insufficient,
    acceptedCount: accepted.passages.length,
    conflictingCount: conflicting.passages.length,
  };
  const system = renderPart(t.system, view, 'system');
  const user = renderPart(t.user, view, 'user');
  const systemTokens = checkedCount(yield system);
  const userTokens = checkedCount(yield user);
  return {
    prompt: `${system}\n\n${user}`,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    system,
    user,
    accepted: accepted.passages,
    conflicting: conflicting.passages,
    dropped,
    insufficient,
    tokens: {
      budget: Number.isFinite(s.budget) ? s.budget : null,
      passages: used,
      system: systemTokens,
      user: userTokens,
    },
  };
}

interface PackedText {
  readonly text: string;
  readonly entry: string;
  readonly tokens: number;
  readonly truncated: boolean;
}

function checkedCount(value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value))
    throw new InvalidArgumentError(`countTokens must return a finite number ≥ 0, returned ${String(value)}`);
  return value;
}

/**
 * Builds the gated context with a synchronous token counter (default estimateTokens).
 * See docs/context.md for the template, the budget rules and the escaping.
 */
export function buildContext<P extends Passage>(
  result: GateResult<P>,
  options: BuildContextOptions = NO_OPTIONS,
): GatedContext<P> {
  const settings = settingsOf(result, options);
  const count = options.countTokens ?? estimateTokens;
  const packing = pack(result, settings);
  let step = packing.next();
  while (!step.done) {
    const n: unknown = count(step.value);
    if (typeof (n as PromiseLike<unknown> | null)?.then === 'function')
      throw new InvalidArgumentError(
        'countTokens returned a promise: use buildContextAsync for asynchronous tokenizers',
      );
    step = packing.next(n as number);
  }
  return step.value;
}

/** buildContext with a counter that may be asynchronous (e.g. a `tokenizers` Tokenizer's encode). */
export async function buildContextAsync<P extends Passage>(
  result: GateResult<P>,
  options: BuildContextAsyncOptions = NO_OPTIONS,
): Promise<GatedContext<P>> {
  const settings = settingsOf(result, options);
  const count = options.countTokens ?? estimateTokens;
  const packing = pack(result, settings);
  let step = packing.next();
  while (!step.done) step = packing.next((await count(step.value)) as number);
  return step.value;
}
