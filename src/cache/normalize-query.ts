/**
 * Query normalisation for cache keys only: the scorer always sees the caller's original query.
 * Two queries that normalise alike share cached scores, so a rule belongs here only when it
 * cannot change what the model sees in a way that matters. Case is kept by default because cased
 * models (and cased vocabularies) score "Apple" and "apple" differently.
 */
import { InvalidArgumentError } from '../errors.js';

export interface QueryNormalizationOptions {
  /** Unicode normalisation form; default 'NFC'. 'none' keeps code points as sent. */
  readonly unicodeForm?: 'NFC' | 'NFKC' | 'none';
  /** Strip leading/trailing whitespace; default true. */
  readonly trim?: boolean;
  /** Collapse every run of whitespace into one space; default true. */
  readonly collapseWhitespace?: boolean;
  /** Lower-case (locale-independent) before keying; default false. Only for uncased models. */
  readonly caseFold?: boolean;
}

/** A custom normaliser; `id` names it in keys so caches sharing Redis never mix two rules. */
export interface CustomQueryNormalizer {
  readonly id: string;
  readonly normalize: (query: string) => string;
}

export type QueryNormalization = QueryNormalizationOptions | CustomQueryNormalizer | ((query: string) => string);

export interface CompiledNormalizer {
  readonly normalize: (query: string) => string;
  /** Folded into every key's scope hash: instances with different rules never share entries. */
  readonly tag: string;
}

const WHITESPACE_RUN = /\s+/g;

export function compileQueryNormalizer(spec: QueryNormalization | undefined): CompiledNormalizer {
  if (typeof spec === 'function') return { normalize: checked(spec), tag: 'custom-fn' };
  if (spec !== undefined && typeof (spec as CustomQueryNormalizer).normalize === 'function') {
    const custom = spec as CustomQueryNormalizer;
    if (typeof custom.id !== 'string' || custom.id.length === 0) {
      throw new InvalidArgumentError('normalizeQuery.id must be a non-empty string naming the custom normaliser');
    }
    return { normalize: checked(custom.normalize), tag: `custom:${custom.id}` };
  }
  const options = (spec ?? {}) as QueryNormalizationOptions;
  const form = options.unicodeForm ?? 'NFC';
  if (form !== 'NFC' && form !== 'NFKC' && form !== 'none') {
    throw new InvalidArgumentError(
      `normalizeQuery.unicodeForm must be 'NFC', 'NFKC' or 'none', got ${JSON.stringify(form)}`,
    );
  }
  const trim = options.trim ?? true;
  const collapse = options.collapseWhitespace ?? true;
  const fold = options.caseFold ?? false;
  const tag = `${form}|trim=${trim ? 1 : 0}|ws=${collapse ? 1 : 0}|fold=${fold ? 1 : 0}`;
  const normalize = (query: string): string => {
    let q = form === 'none' ? query : query.normalize(form);
    if (collapse) q = q.replace(WHITESPACE_RUN, ' ');
    if (trim) q = q.trim();
    if (fold) q = q.toLowerCase();
    return q;
  };
  return { normalize, tag };
}

function checked(fn: (query: string) => string): (query: string) => string {
  return (query) => {
    const out = fn(query);
    if (typeof out !== 'string') throw new InvalidArgumentError('normalizeQuery function must return a string');
    return out;
  };
}
