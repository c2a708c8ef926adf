/**
 * Keeping untrusted text inside its delimiters. Passage text (and the question) is written
 * between tag-like delimiters; anything in the text that a model could read as the start of a
 * tag — `<passage`, `</accepted_evidence>`, `< / PASSAGE`, `＜/passage＞`, a bracket followed by
 * zero-width characters — has its bracket replaced by `&lt;`, so the text can neither close its
 * own block nor open a forged one. Everything else (`p < 0.05`, `x<=5`, `<-`) is left as written:
 * only tag openings are touched, so quotations stay faithful. (`a < b` does read as an opening,
 * a letter after the bracket, and becomes `a &lt; b`.)
 */

/** Characters a reader may take for `<`. */
const OPEN_BRACKET = '<\uff1c\ufe64\u2039\u3008\u27e8\u2329\u276c\u276e\u29fc';
/** Characters a reader may take for `/`. */
const SLASH = '/\uff0f\u2044\u2215\u29f8';
/** Whitespace and invisible format characters an attacker can slip between `<`, `/` and the name. */
const IGNORABLE = '\\t-\\r \u00a0\u00ad\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u3000\ufeff';
/** ASCII letters, their fullwidth forms, and `!` / `?` (comments, processing instructions), fullwidth too. */
const NAME_START = 'A-Za-z\uff21-\uff3a\uff41-\uff5a!?\uff01\uff1f';

/** A bracket that opens a tag: only the bracket is matched (the rest is lookahead). */
const TAG_OPENING = new RegExp(
  `[${OPEN_BRACKET}](?=[${IGNORABLE}]*(?:[${SLASH}][${IGNORABLE}]*)?[${NAME_START}])`,
  'g',
);

/**
 * Neutralises every tag opening in `text`: a `<` (or a look-alike) followed, after optional
 * whitespace/invisible characters and an optional slash, by a letter, `!` or `?`. Such a bracket
 * becomes `&lt;`; nothing else changes.
 */
export function neutralizeMarkup(text: string): string {
  return text.replace(TAG_OPENING, '&lt;');
}

/** Escapes a value written inside a double-quoted attribute; line breaks become spaces. */
export function escapeAttribute(value: string): string {
  return value.replace(/[&<>"\r\n\u2028\u2029]/g, (c) => ATTRIBUTE_ESCAPES[c] ?? ' ');
}

const ATTRIBUTE_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
