/**
 * WordPiece tokenizer for folders that ship only a `vocab.txt` (the slow-tokenizer layout of e.g.
 * cross-encoder/ms-marco-TinyBERT-L-2-v2): builds the tokenizer.json that transformers' own
 * converter (`convert_slow_tokenizer.BertConverter`, used when `AutoTokenizer` loads such a folder
 * as a fast tokenizer) would write, so the Rust `tokenizers` library stays the one implementation
 * of normalization, pre-tokenization, WordPiece and the pair template:
 *
 * - normalizer: BertNormalizer { clean_text, handle_chinese_chars = tokenize_chinese_chars,
 *   strip_accents, lowercase = do_lower_case } (all off when do_basic_tokenize is false, as the
 *   converter does when the slow tokenizer has no basic tokenizer);
 * - pre-tokenizer: BertPreTokenizer; model: WordPiece (`##` prefix, 100 chars per word, unk token);
 * - post-processor: TemplateProcessing `[CLS] $A [SEP]` / `[CLS] $A [SEP] $B:1 [SEP]:1`;
 * - added tokens: the special tokens (unk, sep, pad, cls, mask, additional_special_tokens) as
 *   special, unnormalized tokens, as transformers registers them; `added_tokens.json` entries as
 *   normal (normalized) added tokens.
 *
 * Special token strings come from tokenizer_config.json, overridden by special_tokens_map.json (the
 * precedence transformers applies), defaulting to BERT's `[CLS]`/`[SEP]`/`[PAD]`/`[UNK]`/`[MASK]`.
 * The parity test builds this from ms-marco-MiniLM-L-6-v2's vocab.txt and checks ids and type ids
 * against the tokenizer.json published next to it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ModelFormatError } from '../../errors.js';

/** Tokenizer classes whose slow tokenizer is BERT's WordPiece (the converter is BertConverter). */
const WORDPIECE_CLASSES = new Set([
  'BertTokenizer',
  'BertTokenizerFast',
  'DistilBertTokenizer',
  'DistilBertTokenizerFast',
  'ElectraTokenizer',
  'ElectraTokenizerFast',
  'MobileBertTokenizer',
  'MobileBertTokenizerFast',
  'SqueezeBertTokenizer',
  'SqueezeBertTokenizerFast',
  'LayoutLMTokenizer',
  'LayoutLMTokenizerFast',
]);

/** The special-token keys transformers registers as added tokens, in its own order. */
const SPECIAL_KEYS = ['unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'] as const;
const DEFAULT_SPECIALS: Record<(typeof SPECIAL_KEYS)[number], string> = {
  unk_token: '[UNK]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  cls_token: '[CLS]',
  mask_token: '[MASK]',
};

/** `vocab.txt` is the slow-tokenizer vocabulary file name; any other tokenizer path is a tokenizer.json. */
export function isVocabTxtPath(path: string): boolean {
  return /(^|[\\/])vocab\.txt$/.test(path);
}

type Json = Record<string, unknown>;

function readJsonIfPresent(path: string): Json | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new ModelFormatError(`${path} is not valid JSON`, { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ModelFormatError(`${path} must hold a JSON object`);
  }
  return parsed as Json;
}

/** A special token as the configs write it: a string or an AddedToken object `{ content, ... }`. */
function tokenString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as Json).content === 'string') {
    return (value as Json).content as string;
  }
  return undefined;
}

function boolOr(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

/**
 * Token → id as transformers' `load_vocab` reads vocab.txt: one token per line (universal newlines,
 * only the line break stripped), id = line number, a repeated token keeps its last line.
 */
export function readVocabTxt(path: string): Map<string, number> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new ModelFormatError(`cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const vocab = new Map<string, number>();
  for (let id = 0; id < lines.length; id++) vocab.set(lines[id], id);
  if (vocab.size === 0) throw new ModelFormatError(`${path} is empty`);
  return vocab;
}

export interface WordPieceSettings {
  readonly lowercase: boolean;
  readonly stripAccents: boolean | null;
  readonly handleChineseChars: boolean;
  readonly cls: string;
  readonly sep: string;
  readonly unk: string;
  readonly pad: string;
}

/**
 * The tokenizer.json (as a string, for `Tokenizer.fromString`) equivalent to the slow BERT
 * tokenizer of a folder holding `vocab.txt`, `tokenizer_config.json`, `special_tokens_map.json`
 * and `added_tokens.json` (the last three optional).
 */
export function wordPieceTokenizerJson(vocabPath: string): { json: string; settings: WordPieceSettings } {
  const dir = dirname(vocabPath);
  const config = readJsonIfPresent(join(dir, 'tokenizer_config.json')) ?? {};
  const specialMap = readJsonIfPresent(join(dir, 'special_tokens_map.json')) ?? {};
  const addedFile = readJsonIfPresent(join(dir, 'added_tokens.json')) ?? {};
  const cls = config.tokenizer_class;
  if (typeof cls === 'string' && !WORDPIECE_CLASSES.has(cls)) {
    throw new ModelFormatError(
      `${vocabPath}: tokenizer_class ${cls} is not a WordPiece (BERT-style) tokenizer; a tokenizer.json is needed for it`,
    );
  }
  const vocab = readVocabTxt(vocabPath);
  const specials: Record<string, string> = { ...DEFAULT_SPECIALS };
  for (const key of SPECIAL_KEYS) {
    const value = tokenString(specialMap[key]) ?? tokenString(config[key]);
    if (value !== undefined) specials[key] = value;
  }
  const extraSpecials = (
    (Array.isArray(specialMap.additional_special_tokens)
      ? specialMap.additional_special_tokens
      : Array.isArray(config.additional_special_tokens)
        ? config.additional_special_tokens
        : []) as unknown[]
  )
    .map(tokenString)
    .filter((t): t is string => t !== undefined);

  // Tokens outside vocab.txt get the next free ids, in the order transformers adds them.
  let nextId = Math.max(...vocab.values()) + 1;
  const added = new Map<string, { id: number; special: boolean }>();
  const addToken = (content: string, special: boolean, id?: number) => {
    if (added.has(content)) return;
    let tokenId = id ?? vocab.get(content);
    if (tokenId === undefined) tokenId = nextId++;
    added.set(content, { id: tokenId, special });
  };
  for (const [content, id] of Object.entries(addedFile)) {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
      throw new ModelFormatError(`${join(dir, 'added_tokens.json')}: id of ${JSON.stringify(content)} is not an id`);
    }
    addToken(content, false, id);
    nextId = Math.max(nextId, id + 1);
  }
  for (const key of SPECIAL_KEYS) addToken(specials[key], true);
  for (const token of extraSpecials) addToken(token, true);
  // An added token that is also a special token is special (transformers' special wins).
  for (const token of [...SPECIAL_KEYS.map((k) => specials[k]), ...extraSpecials]) {
    const entry = added.get(token);
    if (entry) entry.special = true;
  }
  if (!vocab.has(specials.unk_token)) {
    throw new ModelFormatError(`${vocabPath} does not hold the unknown token ${JSON.stringify(specials.unk_token)}`);
  }
  const idOf = (token: string): number => (vocab.get(token) ?? added.get(token)?.id) as number;

  const basic = config.do_basic_tokenize !== false;
  const settings: WordPieceSettings = {
    lowercase: basic && boolOr(config.do_lower_case, true),
    stripAccents: basic ? (typeof config.strip_accents === 'boolean' ? config.strip_accents : null) : false,
    handleChineseChars: basic && boolOr(config.tokenize_chinese_chars, true),
    cls: specials.cls_token,
    sep: specials.sep_token,
    unk: specials.unk_token,
    pad: specials.pad_token,
  };
  // Null prototype: a vocabulary may hold a token named "__proto__".
  const vocabObject: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const [token, id] of vocab) vocabObject[token] = id;
  const special = (token: string) => ({ SpecialToken: { id: token, type_id: 0 } });
  const seq = (id: 'A' | 'B', typeId: number) => ({ Sequence: { id, type_id: typeId } });
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [...added.entries()]
      .sort((a, b) => a[1].id - b[1].id)
      .map(([content, { id, special: isSpecial }]) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: !isSpecial,
        special: isSpecial,
      })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: settings.handleChineseChars,
      strip_accents: settings.stripAccents,
      lowercase: settings.lowercase,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special(settings.cls), seq('A', 0), special(settings.sep)],
      pair: [
        special(settings.cls),
        seq('A', 0),
        special(settings.sep),
        seq('B', 1),
        { SpecialToken: { id: settings.sep, type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(
        [...new Set([settings.cls, settings.sep])].map((t) => [t, { id: t, ids: [idOf(t)], tokens: [t] }]),
      ),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: settings.unk,
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: vocabObject,
    },
  };
  return { json: JSON.stringify(tokenizer), settings };
}

/**
 * The files a tokenizer is read from (for the model id hash): a tokenizer.json alone, or a
 * vocab.txt with the folder's tokenizer_config.json / special_tokens_map.json / added_tokens.json
 * that exist (they change lower-casing and special tokens, hence scores).
 */
export function tokenizerSourceFiles(tokenizerPath: string): string[] {
  if (!isVocabTxtPath(tokenizerPath)) return [tokenizerPath];
  const dir = dirname(tokenizerPath);
  const siblings = ['tokenizer_config.json', 'special_tokens_map.json', 'added_tokens.json'].map((f) => join(dir, f));
  return [tokenizerPath, ...siblings.filter((p) => existsSync(p))];
}
