/**
 * @module
 * A push-to-pull queue: producers `push` as fast as they like, one consumer iterates. It is the
 * buffer that lets a slow reader fall behind without ever holding the producer back; it is
 * bounded only by what the producer pushes (one reply).
 */

/** An unbounded single-consumer async queue. */
export class Channel<T> implements AsyncIterableIterator<T> {
  #items: T[] = [];
  // Reading from a moving head keeps `next()` O(1) for long replies (an array `shift` is O(n)).
  #head = 0;
  #waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  #closed = false;
  #error: { value: unknown } | undefined;
  readonly #onReturn: (() => void) | undefined;

  /** `onReturn` runs when the consumer stops early (`break` or `return()`). */
  constructor(onReturn?: () => void) {
    this.#onReturn = onReturn;
  }

  /** Whether the channel has ended (closed, failed or returned). */
  get ended(): boolean {
    return this.#closed || this.#error !== undefined;
  }

  /** Items pushed but not yet read. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    if (this.ended) return;
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter.resolve({ done: false, value: item });
    } else {
      this.#items.push(item);
    }
  }

  /** Ends the channel after what is buffered. */
  close(): void {
    if (this.ended) return;
    this.#closed = true;
    this.#settleWaiter();
  }

  /** Ends the channel with an error, after what is buffered. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.#error = { value: error };
    this.#settleWaiter();
  }

  #settleWaiter(): void {
    const waiter = this.#waiter;
    if (!waiter || this.size > 0) return;
    this.#waiter = undefined;
    if (this.#error) waiter.reject(this.#error.value);
    else waiter.resolve({ done: true, value: undefined });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.size > 0) {
      const value = this.#items[this.#head] as T;
      this.#items[this.#head] = undefined as T;
      this.#head += 1;
      if (this.#head === this.#items.length) {
        this.#items = [];
        this.#head = 0;
      }
      return Promise.resolve({ done: false, value });
    }
    if (this.#error) return Promise.reject(this.#error.value);
    if (this.#closed) return Promise.resolve({ done: true, value: undefined });
    if (this.#waiter) return Promise.reject(new Error('Channel has a single consumer.'));
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    const wasOpen = !this.ended;
    this.#items = [];
    this.#head = 0;
    this.#closed = true;
    this.#settleWaiter();
    if (wasOpen) this.#onReturn?.();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
