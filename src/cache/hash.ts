/**
 * Non-cryptographic hashing for cache keys and snapshot checksums.
 *
 * Passage content (the per-pair part of every key, on the all-hit path): XXH64 in the native addon
 * (native/src/hash) over a canonical form of the string's code units: one byte per unit when every
 * unit is ≤ 0xFF (Latin-1 content), else UTF-16LE, the two domain-separated by the seed. No UTF-8
 * encoding, no copy into WASM memory; measured side by side in bench/cache.ts. Hashing code units
 * makes the key a function of the exact string (the former UTF-8 path replaced lone surrogates
 * with U+FFFD, so distinct strings shared a key). Without the addon the same hashes are computed
 * in JS (`contentHashFallback`): slower, identical keys.
 *
 * Scope (scorer + query, memoised per call) and snapshot checksums: XXH64 via xxhash-wasm.
 *
 * Keys are not a security boundary: a caller who can choose passage text can already choose the
 * scores it gets. The hashes guard against accidental collisions, where 64 bits per passage
 * content (with the passage id kept verbatim beside it) and 128 bits per scorer+query scope keep
 * the chance of serving one pair's score for another far below any hardware error rate.
 */
import xxhashFactory from 'xxhash-wasm';
import { InvalidArgumentError } from '../errors.js';
import { nativeHash } from '../native/hash.js';

// One instance per process; the wasm module is ~2 KB and instantiates in well under a millisecond.
const xxhash = await xxhashFactory();

/** Seeds separate hash domains so equal input strings in different roles never share a hash. */
const SEED_SCOPE_A = 0x5c0be_a11n;
const SEED_SCOPE_B = 0x9e3779b97f4a7c15n;
// Content seeds: must match native/src/hash/hash_binding.cc.
const SEED_TEXT_ONLY = 0x7e47_0000_0000_0001n;
const SEED_TITLE = 0x7e47_0000_0000_0002n;
const SEED_TITLE_TEXT = 0x7e47_0000_0000_0003n;
const SEED_FEATURES_RECORD = 0xfea7_0001n;
const SEED_FEATURES_F32 = 0xfea7_0002n;
const SEED_FEATURES_F64 = 0xfea7_0003n;
const SEED_METADATA = 0x3e7a_0001n;
const MASK_64 = (1n << 64n) - 1n;

/** XXH64 of a string's UTF-8 bytes, 16 lower-case hex characters. */
export function hash64Hex(input: string, seed = 0n): string {
  return xxhash.h64ToString(input, seed);
}

/** XXH64 of raw bytes as a bigint. */
export function hash64Bytes(bytes: Uint8Array, seed = 0n): bigint {
  return xxhash.h64Raw(bytes, seed);
}

/**
 * 128-bit scope hash (two independently seeded XXH64) of a scorer id and a normalised query.
 * The scorer id is length-prefixed so no (scorer, query) pair can spell another's input.
 */
export function scopeHash(scorerId: string, normalizedQuery: string, normalizationTag: string): string {
  const input = `${scorerId.length}:${scorerId}\u0000${normalizationTag.length}:${normalizationTag}\u0000${normalizedQuery}`;
  return xxhash.h64ToString(input, SEED_SCOPE_A) + xxhash.h64ToString(input, SEED_SCOPE_B);
}

export interface HashablePassageContent {
  readonly text: string;
  readonly title?: string;
  readonly features?: Readonly<Record<string, number>> | Float32Array | Float64Array | readonly number[];
  readonly metadata?: Readonly<Record<string, unknown>>;
}

const LATIN1_DOMAIN = 0x4c6174696e31n; // "Latin1": must match native/src/hash/hash_binding.cc
const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/** The canonical string hash in JS (the fallback of the native one, same values). */
export function stringHashFallback(s: string, seed: bigint): bigint {
  return BEYOND_LATIN1.test(s)
    ? xxhash.h64Raw(Buffer.from(s, 'utf16le'), seed)
    : xxhash.h64Raw(Buffer.from(s, 'latin1'), seed ^ LATIN1_DOMAIN);
}

/** The content hash in JS: identical to native `hashContent` (tested side by side). */
export function contentHashFallback(text: string, title: string | undefined): string {
  const seed = title === undefined ? SEED_TEXT_ONLY : stringHashFallback(title, SEED_TITLE) ^ SEED_TITLE_TEXT;
  return stringHashFallback(text, seed).toString(16).padStart(16, '0');
}

type TextHash = (text: string, title: string | undefined) => string;

/**
 * The content hash in use, resolved on first call (the addon loads then, not when the package is
 * imported): the native one, or the JS fallback when the addon is missing or stale.
 */
let textHash: TextHash = (text, title) => {
  const native = nativeHash();
  textHash = native === undefined ? contentHashFallback : (t, ti) => native.hashContent(t, ti);
  return textHash(text, title);
};

/** Whether content hashes come from the native addon (false: the JS fallback, same values). */
export function nativeContentHash(): boolean {
  return nativeHash() !== undefined;
}

/**
 * 64-bit hash (16 hex digits) of everything in a passage that the scorer reads: title, text,
 * caller-supplied features when present (the fast-path tier scores them), and the values of the
 * metadata keys the scorer declares (`Scorer.metadataKeys`; other metadata is not hashed). An
 * absent title and an empty title hash differently; an absent key hashes like `null`.
 */
export function contentHash(passage: HashablePassageContent, metadataKeys?: readonly string[]): string {
  const { title, text, features } = passage;
  let hash = textHash(text, title);
  if (features !== undefined) hash = toHex(featuresHash(features, BigInt(`0x${hash}`)));
  if (metadataKeys !== undefined && metadataKeys.length > 0) {
    const metadata = passage.metadata ?? {};
    const values = metadataKeys.map((key) => [key, Object.hasOwn(metadata, key) ? metadata[key] : null]);
    hash = xxhash.h64ToString(serializeMetadata(values), (BigInt(`0x${hash}`) ^ SEED_METADATA) & MASK_64);
  }
  return hash;
}

/** Exact JSON of the read metadata values (bigints tagged); a value JSON cannot hold (a cycle) is a typed error. */
function serializeMetadata(values: unknown): string {
  try {
    return JSON.stringify(values, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  } catch (cause) {
    throw new InvalidArgumentError('passage metadata read by the scorer must be JSON-serialisable', { cause });
  }
}

function toHex(value: bigint): string {
  return value.toString(16).padStart(16, '0');
}

function featuresHash(
  features: Readonly<Record<string, number>> | Float32Array | Float64Array | readonly number[],
  base: bigint,
): bigint {
  if (features instanceof Float32Array) {
    return xxhash.h64Raw(
      new Uint8Array(features.buffer, features.byteOffset, features.byteLength),
      (base ^ SEED_FEATURES_F32) & MASK_64,
    );
  }
  if (Array.isArray(features) || ArrayBuffer.isView(features)) {
    // Any other dense row (array, Float64Array, integer typed arrays) hashes as its float64 values.
    const f64 = Float64Array.from(features as ArrayLike<number>);
    return xxhash.h64Raw(new Uint8Array(f64.buffer), (base ^ SEED_FEATURES_F64) & MASK_64);
  }
  // Named features: order-independent (tiers look them up by name), exact float64 text of each value.
  const record = features as Readonly<Record<string, number>>;
  const names = Object.keys(record).sort();
  let serialized = '';
  for (const name of names) serialized += `${name.length}:${name}=${String(record[name])};`;
  return xxhash.h64(serialized, (base ^ SEED_FEATURES_RECORD) & MASK_64);
}
