/**
 * Idle-time refinement: pairs the router had to answer below the best tier (shed for lack of
 * budget, or cancelled at the deadline) are remembered per query; whenever the best tier sits idle,
 * the router sends a small batch of them — those of the query shed most often — to that tier
 * through the cache, so the next requests for the query get the better score from the cache.
 *
 * It only uses capacity nobody is waiting for: a submission starts only when the tier has nothing
 * outstanding or pending, and is small (default 8 pairs), so a foreground request arriving just
 * after waits at most for one small batch, which the cost model sees as pairs ahead. Without a
 * cache it would be pure waste and is never enabled.
 */
import type { Passage } from '../types.js';

export interface BackgroundFillOptions {
  /** Pairs per background submission (one query each). Default 8. */
  readonly maxPairsPerSubmission?: number;
  /** Queries remembered at most (least recently shed forgotten first). Default 512. */
  readonly maxQueries?: number;
  /** Pairs remembered per query at most. Default 64. */
  readonly maxPairsPerQuery?: number;
}

interface Entry {
  readonly query: string;
  readonly passages: Map<string, Passage>;
  /** How many requests shed pairs of this query (popularity). */
  count: number;
}

export class BackgroundFillQueue {
  private readonly entries = new Map<string, Entry>();
  readonly maxPairsPerSubmission: number;
  private readonly maxQueries: number;
  private readonly maxPairsPerQuery: number;

  constructor(options: BackgroundFillOptions = {}) {
    this.maxPairsPerSubmission = options.maxPairsPerSubmission ?? 8;
    this.maxQueries = options.maxQueries ?? 512;
    this.maxPairsPerQuery = options.maxPairsPerQuery ?? 64;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Remembers pairs of one request answered below the best tier. */
  note(query: string, passages: readonly Passage[]): void {
    if (passages.length === 0) return;
    let entry = this.entries.get(query);
    if (entry === undefined) {
      entry = { query, passages: new Map(), count: 0 };
      if (this.entries.size >= this.maxQueries) {
        const oldest = this.entries.keys().next().value as string;
        this.entries.delete(oldest);
      }
    } else this.entries.delete(query); // re-insert: most recently shed last
    this.entries.set(query, entry);
    entry.count++;
    for (const p of passages) {
      if (entry.passages.size >= this.maxPairsPerQuery) break;
      entry.passages.set(p.id, p);
    }
  }

  /** Takes up to maxPairsPerSubmission pairs of the most popular remembered query. */
  take(): { query: string; passages: Passage[] } | undefined {
    let best: Entry | undefined;
    for (const entry of this.entries.values()) if (best === undefined || entry.count > best.count) best = entry;
    if (best === undefined) return undefined;
    const passages: Passage[] = [];
    for (const [id, p] of best.passages) {
      passages.push(p);
      best.passages.delete(id);
      if (passages.length >= this.maxPairsPerSubmission) break;
    }
    if (best.passages.size === 0) this.entries.delete(best.query);
    return { query: best.query, passages };
  }
}

/** What the background fill needs from the router. */
export interface BackgroundFillDeps {
  /** The best tier has work outstanding or pending (from any caller). */
  readonly bestTierBusy: () => boolean;
  /** The passages of `passages` the best tier's cache entry lacks (synchronous L1 probe). */
  readonly uncached: (query: string, passages: readonly Passage[]) => Passage[];
  /** Sends one batch to the best tier through the cache; settles when it is done. */
  readonly submit: (query: string, passages: readonly Passage[]) => Promise<unknown>;
  /** Counts a submission of `pairs` pairs. */
  readonly counted: (pairs: number) => void;
}

/** How many remembered entries a pump looks at to find pairs not yet cached. */
const TAKE_TRIES = 4;

/**
 * Drives the queue: whenever pumped and the best tier is idle, sends one small batch of
 * remembered pairs through the cache. One submission at a time; re-pumped on its completion.
 */
export class BackgroundFill {
  private running = false;
  private closed = false;

  constructor(
    private readonly queue: BackgroundFillQueue,
    private readonly deps: BackgroundFillDeps,
  ) {}

  /** Remembers pairs of one request answered below the best tier. */
  note(query: string, passages: readonly Passage[]): void {
    this.queue.note(query, passages);
  }

  pump(): void {
    if (this.closed) return;
    try {
      this.pumpUnsafe();
    } catch {
      // Background work is best effort: it never fails a caller or the process.
      this.running = false;
    }
  }

  private pumpUnsafe(): void {
    if (this.running || this.deps.bestTierBusy()) return;
    let work: { query: string; passages: Passage[] } | undefined;
    // Skip pairs that reached the cache meanwhile (scored by a later request or an earlier batch).
    for (let tries = 0; tries < TAKE_TRIES; tries++) {
      const next = this.queue.take();
      if (next === undefined) return;
      const missing = this.deps.uncached(next.query, next.passages);
      if (missing.length > 0) {
        work = { query: next.query, passages: missing };
        break;
      }
    }
    if (work === undefined) return;
    this.running = true;
    this.deps.counted(work.passages.length);
    this.deps.submit(work.query, work.passages).then(
      () => {
        this.running = false;
        this.pump();
      },
      () => {
        this.running = false;
      },
    );
  }

  /** Stops sending (pairs remembered so far are dropped with the router). */
  close(): void {
    this.closed = true;
  }
}
