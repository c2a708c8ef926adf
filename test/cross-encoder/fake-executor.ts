/**
 * A fake PairBatchExecutor for batcher tests: "tokenizes" a pair into a length derived from the
 * text and ids that encode the pair's identity, and "infers" a logit that is a pure function of
 * the ids, so any mix-up between pairs or requests shows up as a wrong value.
 */
import type {
  InferBatch,
  InferOutput,
  PairBatchExecutor,
  TokenizedChunk,
} from '../../src/tiers/cross-encoder/batcher.js';

export function pairKey(query: string, passage: string): number {
  let h = 2166136261;
  const s = `${query}\u0001${passage}`;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) % 2_147_483_647;
}

/** Token length the fake tokenizer gives a pair: words of both sides + 3 specials, capped. */
export function fakeLength(query: string, passage: string, maxLength = 512): number {
  const words = (s: string) => (s.trim() === '' ? 0 : s.trim().split(/\s+/).length);
  return Math.min(maxLength, words(query) + words(passage) + 3);
}

/** The logit the fake model gives a pair (what every test expects back). */
export function expectedLogit(query: string, passage: string, signal = 0): number {
  return pairKey(query, passage) / 1000 + signal * 0.5 - 300;
}

export interface RecordedBatch {
  readonly lengths: number[];
  readonly keys: number[];
  readonly startedAt: number;
}

export interface FakeExecutorOptions {
  readonly signals?: number;
  /** ms per padded token of a batch (simulated run time). */
  readonly msPerToken?: number;
  readonly tokenizeDelayMs?: number;
  /** When set, infer waits until release() is called. */
  readonly manual?: boolean;
  readonly failWhen?: (keys: number[]) => boolean;
}

export class FakeExecutor implements PairBatchExecutor {
  readonly batches: RecordedBatch[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: FakeExecutorOptions = {}) {}

  async tokenize(query: string, passages: readonly string[]): Promise<TokenizedChunk> {
    await new Promise((r) => setTimeout(r, this.options.tokenizeDelayMs ?? 0));
    const lengths = new Int32Array(passages.map((p) => fakeLength(query, p)));
    const offsets = new Int32Array(passages.length);
    let total = 0;
    passages.forEach((_, i) => {
      offsets[i] = total;
      total += lengths[i];
    });
    const ids = new Int32Array(total);
    const typeIds = new Int32Array(total);
    passages.forEach((p, i) => {
      // First token carries the pair's identity, the rest a pattern the fake checks.
      ids[offsets[i]] = pairKey(query, p);
      for (let t = 1; t < lengths[i]; t++) ids[offsets[i] + t] = 1000 + t;
      typeIds[offsets[i] + lengths[i] - 1] = 1;
    });
    return { ids, typeIds, lengths, offsets };
  }

  async infer(batch: InferBatch): Promise<InferOutput> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const lengths = Array.from(batch.lengths);
      const keys: number[] = [];
      let pos = 0;
      for (const len of lengths) {
        keys.push(batch.ids[pos]);
        for (let t = 1; t < len; t++) {
          if (batch.ids[pos + t] !== 1000 + t) throw new Error('token ids corrupted in transit');
        }
        if (batch.typeIds && batch.typeIds[pos + len - 1] !== 1) throw new Error('type ids corrupted in transit');
        pos += len;
      }
      if (pos !== batch.ids.length) throw new Error('ids length does not match lengths');
      this.batches.push({ lengths, keys, startedAt: performance.now() });
      if (this.options.manual) await new Promise<void>((r) => this.waiting.push(r));
      const padded = Math.max(...lengths) * lengths.length;
      const ms = padded * (this.options.msPerToken ?? 0);
      await new Promise((r) => setTimeout(r, ms));
      if (this.options.failWhen?.(keys)) throw new Error('simulated worker failure');
      const k = this.options.signals ?? 1;
      const logits = new Float64Array(lengths.length * k);
      keys.forEach((key, i) => {
        for (let s = 0; s < k; s++) logits[i * k + s] = key / 1000 + s * 0.5 - 300;
      });
      return { logits, runMs: Math.max(ms, 0.01) };
    } finally {
      this.inFlight--;
    }
  }

  /** Lets every batch waiting in manual mode finish. */
  release(): void {
    for (const r of this.waiting.splice(0)) r();
  }

  get pendingManual(): number {
    return this.waiting.length;
  }

  /** Keys of every pair that was run. */
  ranKeys(): Set<number> {
    return new Set(this.batches.flatMap((b) => b.keys));
  }
}
