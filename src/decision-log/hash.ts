/**
 * Hashes the log writes: sha256 hex of UTF-8 text (what `sha256sum` prints, so people can match a
 * passage or query they hold against the log), and a stable hash of a policy with the scorer
 * declarations it was compiled against (keys sorted, so equal policies hash equal).
 */
import { createHash } from 'node:crypto';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
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
