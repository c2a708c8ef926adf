/**
 * Cache key anatomy (docs/cache.md): scope (32 hex) + content hash (16 hex) + passage id verbatim.
 *
 * - scope: 128-bit hash of the scorer id (model, version/content hash, score-changing tier
 *   settings: whoever builds a Scorer must change its id whenever scores could change), the
 *   query normalisation rule, and the normalised query. Computed once per call.
 * - content hash: 64-bit hash of title + text (+ caller features, + the values of the metadata keys
 *   the scorer reads), so an edited passage misses.
 * - passage id: kept verbatim, so two passages can only share a key if their ids are equal AND
 *   their contents collide in 64 bits AND their scopes collide in 128 bits.
 *
 * The two hashes have fixed widths, so the id is always the remainder: keys cannot be ambiguous.
 *
 * In Redis the scope is a hash tag (`prefix{scope}content+id`), so every pair of one request (one
 * scorer, one query) lives in one Redis Cluster slot: one MGET or one script per request, never a
 * command across slots. A pair's lease key is in the same slot (`prefix{scope}!content+id`): a
 * value key's remainder starts with a hex digit, a lease key's with `!`, so the two never meet.
 */
import { contentHash, scopeHash, type HashablePassageContent } from './hash.js';

/** Bump when the key layout or any hashing rule changes: older snapshots are then refused. */
export const KEY_SCHEMA_VERSION = 2;

export { scopeHash };

/** Characters of the scope at the start of every key (two 64-bit hashes in hex). */
export const SCOPE_CHARS = 32;

/** Layout of the Redis keys (hash tag, lease keys); independent of KEY_SCHEMA_VERSION (L1, snapshots). */
export const L2_KEY_LAYOUT = 2;

/** The Redis key of a cache key: the prefix, then the scope as a hash tag, then the rest. */
export function redisValueKey(prefix: string, key: string): string {
  return `${prefix}{${key.slice(0, SCOPE_CHARS)}}${key.slice(SCOPE_CHARS)}`;
}

/** The Redis key of the lease on a cache key's pair (same hash tag, so the same slot as its value). */
export function redisLeaseKey(prefix: string, key: string): string {
  return `${prefix}{${key.slice(0, SCOPE_CHARS)}}!${key.slice(SCOPE_CHARS)}`;
}

/** The scope of a cache key (what its Redis hash tag holds). */
export function scopeOfKey(key: string): string {
  return key.slice(0, SCOPE_CHARS);
}

export function pairKey(
  scope: string,
  passage: HashablePassageContent & { readonly id: string },
  metadataKeys?: readonly string[],
): string {
  return scope + contentHash(passage, metadataKeys) + passage.id;
}
