/**
 * Hashes the log writes: the query's sha256 hex of UTF-8 text (what `sha256sum` prints, so a
 * judgments file can name queries by it), each passage's 64-bit content hash (the score cache's
 * XXH64, native: a sha256 per passage was most of a record's CPU), and a stable hash of a policy
 * with the scorer declarations it was compiled against (keys sorted, so equal policies hash equal).
 */
import * as crypto from 'node:crypto';
import { contentHash } from '../cache/hash.js';

// The one-shot digest (Node ≥ 20.12) skips the Hash object a createHash call allocates.
const oneShot = typeof crypto.hash === 'function' ? crypto.hash : undefined;

export function sha256Hex(text: string): string {
  return oneShot === undefined
    ? crypto.createHash('sha256').update(text, 'utf8').digest('hex')
    : oneShot('sha256', text, 'hex');
}

/**
 * A passage's `hash` in the log (format version 2): 16 hex digits of XXH64 over the text's code
 * units, as the score cache keys a passage without a title (src/cache/hash.ts: native, with an
 * identical JS fallback). Call it on a passage you hold to find it in the log.
 */
export function passageHash(text: string): string {
  return contentHash({ text });
}

/** Functions cannot be written to a log: they become this marker, and the record is not replayable. */
export const FUNCTION_MARKER = '[function]';

/** JSON with object keys sorted at every level; functions become FUNCTION_MARKER, undefined is left out. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalValue(value));
}

/** The value canonicalJson writes: a plain JSON tree with sorted keys. */
export function canonicalValue(value: unknown): unknown {
  if (typeof value === 'function') return FUNCTION_MARKER;
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : canonicalValue(v)));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = canonicalValue(v);
    }
    return out;
  }
  return value;
}

/** Whether a value holds a function anywhere (thresholdFn, a predicate rule). */
export function holdsFunction(value: unknown): boolean {
  if (typeof value === 'function') return true;
  if (Array.isArray(value)) return value.some(holdsFunction);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(holdsFunction);
  return false;
}

/** The first 16 hex digits of sha256 over the canonical JSON: the policy's version in the log. */
export function policyHashOf(value: unknown): string {
  return sha256Hex(canonicalJson(value)).slice(0, 16);
}
