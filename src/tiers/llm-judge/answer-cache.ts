/**
 * The judge's own memory of answers, per question: a bounded LRU of settled answers and a bounded
 * map of answers being asked right now (in-flight dedupe: concurrent calls for the same pair and
 * question share one request). Keys hash the scorer's settings, the question, the query and the
 * passage content (title, text, marked metadata), so one answer is never served for another
 * question, wording, query or passage.
 */
import { createHash } from 'node:crypto';
import type { JudgeAnswer } from './logprobs.js';

export function answerKey(scope: string, questionFingerprint: string, queryJson: string, contentKey: string): string {
  return createHash('sha256')
    .update(`${scope}\0${questionFingerprint}\0${queryJson}\0${contentKey}`)
    .digest('base64url')
    .slice(0, 32);
}

export class AnswerCache {
  private readonly entries = new Map<string, JudgeAnswer>();
  private readonly inflight = new Map<string, Promise<JudgeAnswer | undefined>>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxInflight: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get inflightSize(): number {
    return this.inflight.size;
  }

  get(key: string): JudgeAnswer | undefined {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      // Refresh recency: Map iteration order is insertion order.
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, answer: JudgeAnswer): void {
    if (this.maxEntries === 0) return;
    this.entries.delete(key);
    this.entries.set(key, answer);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** The pending answer another call is asking for, if any. */
  pending(key: string): Promise<JudgeAnswer | undefined> | undefined {
    return this.inflight.get(key);
  }

  /** Registers a pending answer (no-op when the map is full: dedupe is best effort). */
  track(key: string, answer: Promise<JudgeAnswer | undefined>): void {
    if (this.inflight.size >= this.maxInflight || this.inflight.has(key)) return;
    this.inflight.set(key, answer);
    answer.then(
      () => {
        if (this.inflight.get(key) === answer) this.inflight.delete(key);
      },
      () => {
        if (this.inflight.get(key) === answer) this.inflight.delete(key);
      },
    );
  }

  clear(): void {
    this.entries.clear();
  }
}
