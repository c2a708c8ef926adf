/**
 * msgpack encoding of one cache entry, shared by the Redis L2 and snapshot files. The layout is
 * a 3-element array [ENTRY_FORMAT, scoredAt, result] with plain msgpack maps (no msgpackr record
 * extension), so any msgpack reader can inspect what the cache wrote.
 */
import type { Packr } from 'msgpackr';
import { requirePackage } from '../util/optional-package.js';
import { toCacheableResult, type CacheEntry } from './entry.js';

export const ENTRY_FORMAT = 1;

let instance: Packr | undefined;

/** The shared msgpack codec, created at first use so importing the cache does not load msgpackr. */
export function packr(): Packr {
  if (instance === undefined) {
    const { Packr: PackrClass } = requirePackage<typeof import('msgpackr')>('msgpackr', 'the score cache codec');
    instance = new PackrClass({ useRecords: false, moreTypes: false, mapsAsObjects: true });
  }
  return instance;
}

export function encodeEntry(entry: CacheEntry): Buffer {
  return packr().pack([ENTRY_FORMAT, entry.scoredAt, entry.result]);
}

/** The decoded entry, or undefined when the bytes are not an entry this version wrote. Never throws. */
export function decodeEntry(bytes: Uint8Array): CacheEntry | undefined {
  let decoded: unknown;
  try {
    decoded = packr().unpack(bytes);
  } catch {
    return undefined;
  }
  return entryFromTuple(decoded);
}

/** Validates a decoded [format, scoredAt, result] tuple. */
export function entryFromTuple(decoded: unknown): CacheEntry | undefined {
  if (!Array.isArray(decoded) || decoded.length !== 3 || decoded[0] !== ENTRY_FORMAT) return undefined;
  const scoredAt = decoded[1];
  if (typeof scoredAt !== 'number' || !Number.isFinite(scoredAt)) return undefined;
  const result = toCacheableResult(decoded[2]);
  return result === undefined ? undefined : { result, scoredAt };
}
