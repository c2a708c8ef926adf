/**
 * The content-hash slice of the native addon (native/src/hash/hash_binding.cc): XXH64 over a JS
 * string in a canonical form of its code units (one byte per unit when all are ≤ 0xFF, else
 * UTF-16LE, domain-separated), checked once against the schema this build expects.
 * `nativeHash()` returns undefined when the addon is missing or stale; src/cache/hash.ts then
 * computes the same hashes in JS (slower, identical keys).
 */
import { loadAddon } from './addon.js';

export const HASH_ALGORITHM = 'xxh64-latin1-or-utf16le';
export const HASH_SCHEMA_VERSION = 1;

export interface HashAddon {
  /** 16 hex digits: XXH64 of text, seeded by the title's hash when a title is given. */
  hashContent(text: string, title?: string | null): string;
  /** 16 hex digits: the canonical string hash with the 64-bit seed (hi, lo). */
  hashString(input: string, seedHi: number, seedLo: number): string;
  /** 16 hex digits: XXH64 of the bytes with the 64-bit seed (hi, lo). */
  hashBytes(bytes: Uint8Array, seedHi: number, seedLo: number): string;
  hashSchema(): { algorithm: string; version: number };
}

let resolved: HashAddon | null | undefined;

/** The addon's hash functions, or undefined when the addon is unavailable or has none of this schema. */
export function nativeHash(): HashAddon | undefined {
  if (resolved !== undefined) return resolved ?? undefined;
  try {
    const addon = loadAddon() as Partial<HashAddon>;
    const schema = typeof addon.hashSchema === 'function' ? addon.hashSchema() : undefined;
    resolved =
      schema?.algorithm === HASH_ALGORITHM &&
      schema.version === HASH_SCHEMA_VERSION &&
      typeof addon.hashContent === 'function'
        ? (addon as HashAddon)
        : null;
  } catch {
    resolved = null;
  }
  return resolved ?? undefined;
}
