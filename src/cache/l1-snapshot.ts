/**
 * Snapshots of the L1: which entries `snapshot()` saves (unexpired, least to most recently used)
 * and which a warm start loads (trusted, unexpired, not older than what L1 holds, most recent
 * first while they fit). The file format and its validation are snapshot.ts's.
 */
import { InvalidArgumentError } from '../errors.js';
import { estimatePackedBytes } from './entry-size.js';
import type { EntryPolicy } from './entry-policy.js';
import { SnapshotError } from './errors.js';
import type { L1Cache } from './l1-cache.js';
import { packEntry, type PackedEntry } from './packed-entry.js';
import {
  decodeSnapshot,
  encodeSnapshot,
  readSnapshotFile,
  readSnapshotFileSync,
  writeSnapshotFile,
  type SnapshotEntry,
} from './snapshot.js';

export interface WarmStartReport {
  readonly path: string;
  readonly createdAt: number;
  readonly loaded: number;
  readonly skippedExpired: number;
  /** Least recently used entries left out because the snapshot holds more than maxBytes. */
  readonly skippedOverBudget: number;
  /** Entries already in L1 with a newer score. */
  readonly skippedNewer: number;
  /** Entries refused: scored in the future, or without any of the required signals. */
  readonly skippedInvalid: number;
}

export interface SnapshotReport {
  readonly path: string;
  readonly entries: number;
  readonly fileBytes: number;
}

export class L1Snapshots {
  constructor(
    private readonly l1: L1Cache,
    private readonly policy: EntryPolicy,
    private readonly clock: () => number,
  ) {}

  /** Writes the unexpired L1 entries, LRU order, to `path` atomically. Throws SnapshotError('io') on write failure. */
  async save(path: string): Promise<SnapshotReport> {
    checkPath(path);
    const now = this.clock();
    const entries: SnapshotEntry[] = [];
    for (const [key, entry] of this.l1.entriesOldestFirst())
      if (!this.policy.isExpired(entry, now)) entries.push({ key, entry });
    const bytes = encodeSnapshot(entries, now);
    await writeSnapshotFile(path, bytes);
    return { path, entries: entries.length, fileBytes: bytes.length };
  }

  /** Loads the snapshot at `path` into L1. Throws SnapshotError, leaving L1 unchanged, when the file is refused. */
  async load(path: string): Promise<WarmStartReport> {
    checkPath(path);
    return this.insert(decodeSnapshot(await readSnapshotFile(path), path), path);
  }

  /** As load(), synchronously, for the `fromSnapshot` option: a refused file is returned, not thrown. */
  loadSync(path: string): WarmStartReport | SnapshotError {
    try {
      return this.insert(decodeSnapshot(readSnapshotFileSync(path), path), path);
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error;
      return error;
    }
  }

  /** Inserts decoded entries, most recent first until maxBytes is reached, keeping LRU order. */
  private insert(snapshot: { createdAt: number; entries: SnapshotEntry[] }, path: string): WarmStartReport {
    const now = this.clock();
    const store = this.l1.store;
    const selected: Array<{ readonly key: string; readonly packed: PackedEntry }> = [];
    // Per shard: a shard over its share would evict what this load just inserted.
    const budgets = store.freeBytesPerShard();
    let skippedExpired = 0;
    let skippedOverBudget = 0;
    let skippedNewer = 0;
    let skippedInvalid = 0;
    for (let i = snapshot.entries.length - 1; i >= 0; i--) {
      const item = snapshot.entries[i];
      if (!this.policy.isTrusted(item.entry, now)) {
        skippedInvalid++;
        continue;
      }
      if (this.policy.isExpired(item.entry, now)) {
        skippedExpired++;
        continue;
      }
      const existing = this.l1.peek(item.key);
      if (existing !== undefined && existing.scoredAt >= item.entry.scoredAt) {
        skippedNewer++;
        continue;
      }
      const packed = packEntry(item.entry);
      const size = estimatePackedBytes(item.key, packed);
      const shard = store.shardIndexOf(item.key);
      if (size > budgets[shard]) {
        skippedOverBudget++;
        continue;
      }
      budgets[shard] -= size;
      selected.push({ key: item.key, packed });
    }
    for (let i = selected.length - 1; i >= 0; i--) this.l1.setPacked(selected[i].key, selected[i].packed);
    return {
      path,
      createdAt: snapshot.createdAt,
      loaded: selected.length,
      skippedExpired,
      skippedOverBudget,
      skippedNewer,
      skippedInvalid,
    };
  }
}

function checkPath(path: string): void {
  if (typeof path !== 'string' || path.length === 0)
    throw new InvalidArgumentError('snapshot path must be a non-empty string');
}
