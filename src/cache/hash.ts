/**
 * Non-cryptographic hashing for cache keys and snapshot checksums: XXH64 via xxhash-wasm.
 *
 * Measured against @node-rs/xxhash (XXH64, XXH3-64/128), hash-wasm (XXH64, XXH3) and node:crypto
 * (md5, sha1, sha256) on 64/600/3000-character strings, xxhash-wasm's h64ToString was the fastest
 * at every length (see docs/cache.md and bench/cache.ts), and it has no native install step.
 *
 * Keys are not a security boundary: a caller who can choose passage text can already choose the
 * scores it gets. The hashes guard against accidental collisions, where 64 bits per passage
 * content (with the passage id kept verbatim beside it) and 128 bits per scorer+query scope keep
 * the chance of serving one pair's score for another far below any hardware error rate.
 */
import xxhashFactory from 'xxhash-wasm';

// One instance per process; the wasm module is ~2 KB and instantiates in well under a millisecond.
const xxhash = await xxhashFactory();

/** Seeds separate hash domains so equal input strings in different roles never share a hash. */
const SEED_SCOPE_A = 0x5c0be_a11n;
const SEED_SCOPE_B = 0x9e3779b97f4a7c15n;
const SEED_TEXT_ONLY = 0x7e47_0001n;
const SEED_TITLE_TEXT = 0x7e47_0002n;
const SEED_FEATURES_RECORD = 0xfea7_0001n;
const SEED_FEATURES_F32 = 0xfea7_0002n;
const SEED_FEATURES_F64 = 0xfea7_0003n;
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
  readonly features?: Readonly<Record<string, number>> | Float32Array | readonly number[];
}

/**
 * 64-bit hash of everything in a passage that a built-in tier reads: title, text and, when
 * present, caller-supplied features (the trees tier scores them). An absent title and an empty
 * title hash differently. Metadata is not hashed (no tier reads it).
 */
export function contentHash(passage: HashablePassageContent): string {
  const { title, text, features } = passage;
  if (features === undefined) {
    return title === undefined
      ? xxhash.h64ToString(text, SEED_TEXT_ONLY)
      : xxhash.h64ToString(`${title.length}:${title}\u0000${text}`, SEED_TITLE_TEXT);
  }
  const base =
    title === undefined
      ? xxhash.h64(text, SEED_TEXT_ONLY)
      : xxhash.h64(`${title.length}:${title}\u0000${text}`, SEED_TITLE_TEXT);
  return featuresHash(features, base).toString(16).padStart(16, '0');
}

function featuresHash(
  features: Readonly<Record<string, number>> | Float32Array | readonly number[],
  base: bigint,
): bigint {
  if (features instanceof Float32Array) {
    return xxhash.h64Raw(
      new Uint8Array(features.buffer, features.byteOffset, features.byteLength),
      (base ^ SEED_FEATURES_F32) & MASK_64,
    );
  }
  if (Array.isArray(features)) {
    const f64 = Float64Array.from(features as readonly number[]);
    return xxhash.h64Raw(new Uint8Array(f64.buffer), (base ^ SEED_FEATURES_F64) & MASK_64);
  }
  // Named features: order-independent (tiers look them up by name), exact float64 text of each value.
  const record = features as Readonly<Record<string, number>>;
  const names = Object.keys(record).sort();
  let serialized = '';
  for (const name of names) serialized += `${name.length}:${name}=${String(record[name])};`;
  return xxhash.h64(serialized, (base ^ SEED_FEATURES_RECORD) & MASK_64);
}
