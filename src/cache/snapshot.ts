/**
 * L1 snapshot files. Layout (little-endian):
 *
 *   offset  size  field
 *        0     8  magic "RGSCACHE"
 *        8     4  format version (1)
 *       12     4  flags (0; reserved)
 *       16     8  payload length in bytes (u64)
 *       24     8  XXH64 of the payload (seed 0)
 *       32     n  payload: msgpack map { keySchema, createdAt, entries: [[key, scoredAt, result], …] }
 *
 * entries run from least to most recently used, so loading them in order rebuilds the LRU order.
 * Files are written to a temporary name and renamed, so a crash never leaves half a snapshot
 * under the real name.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { ENTRY_FORMAT, entryFromTuple, packr } from './codec.js';
import type { CacheEntry } from './entry.js';
import { SnapshotError } from './errors.js';
import { hash64Bytes } from './hash.js';
import { KEY_SCHEMA_VERSION } from './keys.js';

const MAGIC = Buffer.from('RGSCACHE', 'latin1');
export const SNAPSHOT_FORMAT_VERSION = 1;
const HEADER_BYTES = 32;

export interface SnapshotEntry {
  readonly key: string;
  readonly entry: CacheEntry;
}

export function encodeSnapshot(entries: Iterable<SnapshotEntry>, createdAt: number): Buffer {
  const tuples: unknown[] = [];
  for (const { key, entry } of entries) tuples.push([key, entry.scoredAt, entry.result]);
  const payload = packr().pack({ keySchema: KEY_SCHEMA_VERSION, createdAt, entries: tuples });
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(SNAPSHOT_FORMAT_VERSION, 8);
  header.writeUInt32LE(0, 12);
  header.writeBigUInt64LE(BigInt(payload.length), 16);
  header.writeBigUInt64LE(hash64Bytes(payload), 24);
  return Buffer.concat([header, payload]);
}

/** Decodes and fully validates a snapshot; throws SnapshotError on anything unexpected. */
export function decodeSnapshot(bytes: Buffer, path: string): { createdAt: number; entries: SnapshotEntry[] } {
  if (bytes.length < MAGIC.length || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new SnapshotError('foreign', path, 'missing the RGSCACHE magic');
  }
  if (bytes.length < HEADER_BYTES)
    throw new SnapshotError('truncated', path, `${bytes.length} bytes is shorter than the ${HEADER_BYTES}-byte header`);
  const version = bytes.readUInt32LE(8);
  if (version !== SNAPSHOT_FORMAT_VERSION) {
    throw new SnapshotError(
      'unsupported-version',
      path,
      `format version ${version}; this build reads version ${SNAPSHOT_FORMAT_VERSION}`,
    );
  }
  const payloadLength = bytes.readBigUInt64LE(16);
  const actualLength = BigInt(bytes.length - HEADER_BYTES);
  if (payloadLength !== actualLength) {
    throw new SnapshotError(
      payloadLength > actualLength ? 'truncated' : 'malformed',
      path,
      `header says ${payloadLength} payload bytes, file has ${actualLength}`,
    );
  }
  const payload = bytes.subarray(HEADER_BYTES);
  if (hash64Bytes(payload) !== bytes.readBigUInt64LE(24))
    throw new SnapshotError('checksum', path, 'payload checksum mismatch');
  let decoded: unknown;
  try {
    decoded = packr().unpack(payload);
  } catch (cause) {
    throw new SnapshotError('malformed', path, 'payload is not valid msgpack', { cause });
  }
  if (decoded === null || typeof decoded !== 'object')
    throw new SnapshotError('malformed', path, 'payload is not a map');
  const { keySchema, createdAt, entries } = decoded as { keySchema?: unknown; createdAt?: unknown; entries?: unknown };
  if (keySchema !== KEY_SCHEMA_VERSION) {
    throw new SnapshotError(
      'malformed',
      path,
      `key schema ${String(keySchema)}; this build uses ${KEY_SCHEMA_VERSION} (keys would never match)`,
    );
  }
  if (typeof createdAt !== 'number' || !Number.isFinite(createdAt))
    throw new SnapshotError('malformed', path, 'createdAt is not a number');
  if (!Array.isArray(entries)) throw new SnapshotError('malformed', path, 'entries is not an array');
  const out: SnapshotEntry[] = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const tuple = entries[i] as unknown;
    if (!Array.isArray(tuple) || tuple.length !== 3 || typeof tuple[0] !== 'string') {
      throw new SnapshotError('malformed', path, `entry ${i} is not [key, scoredAt, result]`);
    }
    const entry = entryFromTuple([ENTRY_FORMAT, tuple[1], tuple[2]]);
    if (entry === undefined) throw new SnapshotError('malformed', path, `entry ${i} holds an invalid score`);
    out[i] = { key: tuple[0], entry };
  }
  return { createdAt, entries: out };
}

export async function writeSnapshotFile(path: string, bytes: Buffer): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(temporary, bytes);
    await rename(temporary, path);
  } catch (cause) {
    await unlink(temporary).catch(() => undefined);
    throw new SnapshotError('io', path, (cause as Error).message, { cause });
  }
}

export async function readSnapshotFile(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (cause) {
    throw ioError(path, cause);
  }
}

export function readSnapshotFileSync(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (cause) {
    throw ioError(path, cause);
  }
}

function ioError(path: string, cause: unknown): SnapshotError {
  const code = (cause as NodeJS.ErrnoException).code;
  return new SnapshotError(code === 'ENOENT' ? 'not-found' : 'io', path, (cause as Error).message, { cause });
}
