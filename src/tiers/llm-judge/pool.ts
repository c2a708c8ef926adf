/**
 * The bounded pool of in-flight HTTP calls: at most `concurrency` run at once; the rest wait in a
 * FIFO queue of at most `maxQueued` (beyond it: OverloadedError, never an unbounded queue). A
 * waiter leaves the queue when its AbortSignal fires (AbortedError) or its deadline passes
 * (DeadlineExceededError), so a queue of hopeless work never delays live work. Retries re-enter
 * at the front (they already waited their turn once).
 */
import { DeadlineExceededError, OverloadedError } from '../../errors.js';
import { abortError, MAX_TIMER_DELAY_MS } from './timing.js';

interface Waiter {
  readonly grant: () => void;
  readonly reject: (error: Error) => void;
  done: boolean;
}

export class CallPool {
  active = 0;
  /** Highest `active` ever seen (stats; the bound's proof). */
  maxActive = 0;
  private readonly queue: Waiter[] = [];
  private head = 0;
  /** Live waiters (the queue array may still hold ones that left). */
  private waiting = 0;

  constructor(
    readonly concurrency: number,
    readonly maxQueued: number,
    private readonly clock: () => number,
  ) {}

  get queued(): number {
    return this.waiting;
  }

  /** Resolves with a release function once a slot is free. */
  acquire(signal: AbortSignal | undefined, deadline: number | undefined, front = false): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (deadline !== undefined && this.clock() >= deadline)
      return Promise.reject(new DeadlineExceededError('the deadline passed before a call slot was free'));
    if (this.active < this.concurrency && this.queued === 0) return Promise.resolve(this.take());
    if (this.queued >= this.maxQueued)
      return Promise.reject(
        new OverloadedError(`the LLM judge has ${this.queued} calls queued (maxQueuedRequests ${this.maxQueued})`),
      );
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const cleanup = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        done: false,
        grant: () => {
          cleanup();
          resolve(this.take());
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      };
      const leave = (error: Error): void => {
        if (waiter.done) return;
        waiter.done = true;
        this.waiting--;
        waiter.reject(error);
        this.compact();
      };
      const onAbort = (): void => leave(abortError(signal as AbortSignal));
      signal?.addEventListener('abort', onAbort, { once: true });
      if (deadline !== undefined && deadline - this.clock() <= MAX_TIMER_DELAY_MS) {
        timer = setTimeout(
          () => leave(new DeadlineExceededError('the deadline passed while waiting for a call slot')),
          Math.max(0, deadline - this.clock()),
        );
      }
      this.waiting++;
      if (front && this.head > 0) this.queue[--this.head] = waiter;
      else if (front) this.queue.unshift(waiter);
      else this.queue.push(waiter);
    });
  }

  private take(): () => void {
    this.active++;
    if (this.active > this.maxActive) this.maxActive = this.active;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.next();
    };
  }

  private next(): void {
    while (this.active < this.concurrency && this.head < this.queue.length) {
      const waiter = this.queue[this.head];
      this.queue[this.head++] = undefined as unknown as Waiter;
      if (waiter.done) continue;
      waiter.done = true;
      this.waiting--;
      waiter.grant();
    }
    this.compact();
  }

  /** Drops finished waiters from the front and reclaims space now and then. */
  private compact(): void {
    while (this.head < this.queue.length && (this.queue[this.head] === undefined || this.queue[this.head].done))
      this.head++;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}
