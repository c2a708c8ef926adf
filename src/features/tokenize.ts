/**
 * The tokenizer every lexical component shares (statistics, training, serving): Unicode-aware
 * lower-casing, word split, Snowball English stop list, Porter stemming. Rules: docs/features.md.
 */
import { InvalidArgumentError } from '../errors.js';
import { featuresAddon } from './native.js';

/** The indexed terms of a text, in order (stop words removed, stemmed). Invalid UTF-8 bytes are separators. */
export function tokenize(text: string | Uint8Array): string[] {
  if (typeof text !== 'string' && !(text instanceof Uint8Array)) {
    throw new InvalidArgumentError(`tokenize expects a string or Uint8Array, got ${describe(text)}`);
  }
  return featuresAddon().featuresTokenize(text);
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
