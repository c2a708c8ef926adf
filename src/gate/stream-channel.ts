/**
 * A single-consumer async queue: the producer pushes items as they are decided, the consumer
 * pulls with for-await. Stopping the iteration early (break/return) calls `onReturn` so the
 * producer can cancel the rest of the work.
 */
export class StreamChannel<T> implements AsyncIterableIterator<T> {
  private readonly buffer: T[] = [];
  private head = 0;
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private rejectWaiting: ((error: unknown) => void) | undefined;
  private closed = false;
  private failure: { error: unknown } | undefined;

  constructor(private readonly onReturn: () => void) {}

  push(item: T): void {
    if (this.closed) return;
    const resolve = this.waiting;
    if (resolve !== undefined) {
      this.waiting = undefined;
      this.rejectWaiting = undefined;
      resolve({ value: item, done: false });
    } else this.buffer.push(item);
  }

  close(error?: { error: unknown }): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = error;
    const resolve = this.waiting;
    const reject = this.rejectWaiting;
    this.waiting = undefined;
    this.rejectWaiting = undefined;
    if (error !== undefined && reject !== undefined) reject(error.error);
    else resolve?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.head < this.buffer.length) {
      const value = this.buffer[this.head];
      this.buffer[this.head++] = undefined as T; // release the reference
      return Promise.resolve({ value, done: false });
    }
    if (this.closed) {
      if (this.failure !== undefined) {
        const { error } = this.failure;
        this.failure = undefined;
        return Promise.reject(error);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.rejectWaiting = reject;
    });
  }

  return(): Promise<IteratorResult<T>> {
    if (!this.closed) {
      this.closed = true;
      this.onReturn();
    }
    this.buffer.length = 0;
    this.head = 0;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
