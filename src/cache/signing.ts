/**
 * Signed L2 entries. With a signing key, every value the cache writes to Redis carries an
 * HMAC-SHA256 over the entry's Redis key and its encoded bytes, and every value read back is
 * checked (constant-time) before it is decoded: a value that is unsigned, signed with another key,
 * moved to another key or altered in any byte is dropped. So only a process holding the key (this
 * deployment's replicas) can put a score in front of the gate; write access to Redis alone cannot.
 *
 * Layout of a signed value: [0xc1, SIGNATURE_VERSION, 32-byte MAC, msgpack entry]. 0xc1 is a byte
 * msgpack never uses, so a reader without a key finds no entry in a signed value (it counts it
 * invalid) instead of mistaking the MAC for data.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { CacheSigningKeyError } from './errors.js';

/** Shortest signing key accepted, in bytes (a string counts its UTF-8 bytes). */
export const MIN_SIGNING_KEY_BYTES = 16;
export const SIGNATURE_VERSION = 1;
const MARKER = 0xc1;
const MAC_BYTES = 32;
const HEADER_BYTES = 2 + MAC_BYTES;
// Domain separation: these MACs can never be confused with another use of the same key.
const DOMAIN = Buffer.from(`relevance-gate/score-cache/l2-entry@${SIGNATURE_VERSION}\u0000`, 'utf8');

/** A signing key: a string (its UTF-8 bytes) or bytes; at least MIN_SIGNING_KEY_BYTES either way. */
export type CacheSigningKey = string | Uint8Array;

/** Validates a signing key and holds it as a KeyObject. Throws CacheSigningKeyError; never echoes the key. */
export function signingKeyObject(value: unknown, name = 'redis.signingKey'): KeyObject {
  let bytes: Buffer;
  if (typeof value === 'string') bytes = Buffer.from(value, 'utf8');
  else if (value instanceof Uint8Array)
    bytes = Buffer.from(value); // a copy: later changes to the caller's buffer do not apply
  else throw new CacheSigningKeyError('type', `${name} must be a string or a Buffer, got ${describe(value)}`);
  if (bytes.length < MIN_SIGNING_KEY_BYTES) {
    throw new CacheSigningKeyError(
      'too-short',
      `${name} must be at least ${MIN_SIGNING_KEY_BYTES} bytes, got ${bytes.length} (use a random secret, e.g. 32 bytes base64)`,
    );
  }
  const key = createSecretKey(bytes);
  bytes.fill(0);
  return key;
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/** Signs and verifies L2 values under one key. */
export class EntrySigner {
  constructor(private readonly key: KeyObject) {}

  /** The value to store under `redisKey`: header, MAC, then `payload`. */
  sign(redisKey: string, payload: Uint8Array): Buffer {
    const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
    out[0] = MARKER;
    out[1] = SIGNATURE_VERSION;
    this.mac(redisKey, payload).copy(out, 2);
    out.set(payload, HEADER_BYTES);
    return out;
  }

  /**
   * The payload of `stored` when it was signed with this key for exactly `redisKey`; undefined
   * when it is unsigned, truncated, of another signature version, or its MAC does not match.
   */
  verify(redisKey: string, stored: Buffer): Buffer | undefined {
    if (stored.length <= HEADER_BYTES || stored[0] !== MARKER || stored[1] !== SIGNATURE_VERSION) return undefined;
    const payload = stored.subarray(HEADER_BYTES);
    const expected = this.mac(redisKey, payload);
    return timingSafeEqual(expected, stored.subarray(2, HEADER_BYTES)) ? payload : undefined;
  }

  /** HMAC-SHA256 of DOMAIN, the key's UTF-8 byte length (u32 BE: key and value bytes cannot trade places), the key, the payload. */
  private mac(redisKey: string, payload: Uint8Array): Buffer {
    const keyLength = Buffer.byteLength(redisKey, 'utf8');
    const head = Buffer.allocUnsafe(DOMAIN.length + 4 + keyLength);
    DOMAIN.copy(head, 0);
    head.writeUInt32BE(keyLength, DOMAIN.length);
    head.write(redisKey, DOMAIN.length + 4, 'utf8');
    return createHmac('sha256', this.key).update(head).update(payload).digest();
  }
}
