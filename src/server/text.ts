/**
 * Text handling shared by the protocols: per-document truncation (by characters, either end, or
 * by whitespace tokens), and detection/repair of unpaired UTF-16 surrogates (`"\ud800"` escapes
 * are valid JSON but not text a tokenizer can read).
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

type WellFormedCheck = (this: string) => boolean;
/** Node 20+ has the native String.prototype.isWellFormed (ES2024); the regex is the fallback. */
const nativeIsWellFormed = (String.prototype as { isWellFormed?: WellFormedCheck }).isWellFormed;

export function hasLoneSurrogate(text: string): boolean {
  return nativeIsWellFormed === undefined ? LONE_SURROGATE.test(text) : !nativeIsWellFormed.call(text);
}

/** Replaces unpaired surrogates with U+FFFD (what a UTF-8 decoder does with invalid bytes). */
export function toWellFormed(text: string): string {
  return hasLoneSurrogate(text) ? text.replace(LONE_SURROGATES, '\uFFFD') : text;
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** At most `max` UTF-16 units of `text`, from the start ('right' cuts the end) or the end ('left'), never splitting a pair. */
export function truncateChars(text: string, max: number, direction: 'left' | 'right' = 'right'): string {
  if (text.length <= max) return text;
  if (direction === 'right') {
    let end = max;
    if (end > 0 && isHigh(text.charCodeAt(end - 1))) end--;
    return text.slice(0, end);
  }
  let start = text.length - max;
  if (start > 0 && isHigh(text.charCodeAt(start - 1))) start++;
  return text.slice(start);
}

const TOKEN = /\S+/g;

/** The first `maxTokens` whitespace-separated tokens of `text` (the text itself when it has no more). */
export function truncateTokens(text: string, maxTokens: number): string {
  TOKEN.lastIndex = 0;
  let count = 0;
  let match: RegExpExecArray | null = TOKEN.exec(text);
  while (match !== null) {
    count++;
    const end = match.index + match[0].length;
    match = TOKEN.exec(text);
    if (count === maxTokens) return match === null ? text : text.slice(0, end);
  }
  return text;
}
