/**
 * The scope of a call: the 128-bit hash of (scorer id, normalised query) that starts every key of
 * the call (keys.ts). Memoised on the raw strings: popular queries repeat, and normalising +
 * hashing costs more than the rest of an all-hit call.
 */
import { LRUCache } from 'lru-cache';
import { KEY_SCHEMA_VERSION, scopeHash } from './keys.js';
import type { CompiledNormalizer } from './normalize-query.js';

/** Distinct (scorer id, raw query) pairs memoised: the most recent ones. */
export const SCOPE_MEMO_SIZE = 1024;
/** Longer scorer id + query (in characters) are not memoised: the memo stays ≤ SCOPE_MEMO_SIZE × ~1 KB. */
export const SCOPE_MEMO_MAX_CHARS = 1024;

export class ScopeMemo {
  /** Raw (scorer id, query) → scope hash, for the most recent SCOPE_MEMO_SIZE distinct pairs. */
  private readonly scopes = new LRUCache<string, string>({ max: SCOPE_MEMO_SIZE });
  /** The key schema and the normalisation rule: part of every scope. */
  private readonly tag: string;

  constructor(private readonly normalizer: CompiledNormalizer) {
    this.tag = `k${KEY_SCHEMA_VERSION}|${normalizer.tag}`;
  }

  scopeOf(scorerId: string, query: string): string {
    if (query.length + scorerId.length > SCOPE_MEMO_MAX_CHARS)
      return scopeHash(scorerId, this.normalizer.normalize(query), this.tag);
    const memoKey = `${scorerId.length}:${scorerId}\u0000${query}`; // length prefix: unambiguous
    let scope = this.scopes.get(memoKey);
    if (scope === undefined) {
      scope = scopeHash(scorerId, this.normalizer.normalize(query), this.tag);
      this.scopes.set(memoKey, scope);
    }
    return scope;
  }
}
