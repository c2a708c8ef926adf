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
 */
import { contentHash, scopeHash, type HashablePassageContent } from './hash.js';

/** Bump when the key layout or any hashing rule changes: older snapshots are then refused. */
export const KEY_SCHEMA_VERSION = 2;

export { scopeHash };

export function pairKey(
  scope: string,
  passage: HashablePassageContent & { readonly id: string },
  metadataKeys?: readonly string[],
): string {
  return scope + contentHash(passage, metadataKeys) + passage.id;
}
