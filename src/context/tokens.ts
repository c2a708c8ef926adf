/**
 * Token counting for the context budget. A caller with the LLM's tokenizer passes its count
 * function; without one, `estimateTokens` is used: a deliberately pessimistic estimate for BPE
 * tokenizers, so a budget met by the estimate is met by the real tokenizer too (docs/context.md
 * gives the measured ratio on the shared collections).
 */

/** Tokens of `text` as the target model counts them. Must return a finite number ≥ 0. */
export type TokenCounter = (text: string) => number;

/** An asynchronous counter (e.g. the `tokenizers` package's `encode`), for buildContextAsync. */
export type AsyncTokenCounter = (text: string) => number | Promise<number>;

function isAsciiAlphanumeric(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/**
 * The documented estimate: every run of ASCII letters/digits costs ceil(length / 4) tokens,
 * every other non-space character (punctuation, symbols, each non-ASCII code point) costs 1,
 * whitespace costs nothing (BPE merges a leading space into the next word). On the first 300
 * documents of each shared collection it never counted fewer tokens than the RoBERTa (GPT-2
 * byte-level BPE) or ModernBERT tokenizers, and 1.34-1.72x as many in total (docs/context.md).
 * CJK text costs about one token per character in those vocabularies, as estimated.
 */
export function estimateTokens(text: string): number {
  let tokens = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80 && isAsciiAlphanumeric(c)) {
      run++;
      continue;
    }
    if (run > 0) {
      tokens += (run + 3) >> 2; // ceil(run / 4)
      run = 0;
    }
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) continue;
    // A surrogate pair is one code point: count it at its high half only.
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const prev = text.charCodeAt(i - 1);
      if (prev >= 0xd800 && prev <= 0xdbff) continue;
    }
    tokens++;
  }
  if (run > 0) tokens += (run + 3) >> 2;
  return tokens;
}
