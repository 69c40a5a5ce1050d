/**
 * @module
 * A push-to-pull queue: producers `push`, one consumer iterates. It holds no limit of its own:
 * a producer that must not run ahead waits for room (`whenBelow`), and a watcher told of every
 * item taken or dropped can count what is held and hand credit back (the bridge does both).
 */

/** What the owner of a channel is told of its items. */
export interface ChannelWatch<T> {
  /** An item reached the consumer. */
  onTake?: (item: T) => void;
  /** Items left unread were thrown away (`return`, `discard`). */
  onDrop?: (items: readonly T[]) => void;
}

/** A single-consumer async queue. */
export class Channel<T> implements AsyncIterableIterator<T> {
  #items: T[] = [];
  // Reading from a moving head keeps `next()` O(1) for long replies (an array `shift` is O(n)).
  #head = 0;
  #waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  #closed = false;
  #error: { value: unknown } | undefined;
  readonly #onReturn: (() => void) | undefined;
  readonly #watch: ChannelWatch<T>;
  /** A producer waiting for the buffer to shrink (`whenBelow`). */
  #room: { below: number; resolve: () => void } | undefined;

  /** `onReturn` runs when the consumer stops early (`break` or `return()`). */
  constructor(onReturn?: () => void, watch: ChannelWatch<T> = {}) {
    this.#onReturn = onReturn;
    this.#watch = watch;
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
      this.#watch.onTake?.(item);
      waiter.resolve({ done: false, value: item });
    } else {
      this.#items.push(item);
    }
  }

  /**
   * Resolves once fewer than `below` items wait to be read, or the channel has ended: a producer
   * that awaits it never runs more than `below` items ahead of its reader. One producer at a time.
   */
  whenBelow(below: number): Promise<void> {
    if (this.size < below || this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      this.#room = { below, resolve };
    });
  }

  #settleRoom(): void {
    const room = this.#room;
    if (room && (this.size < room.below || this.ended)) {
      this.#room = undefined;
      room.resolve();
    }
  }

  /** Ends the channel after what is buffered. */
  close(): void {
    if (this.ended) return;
    this.#closed = true;
    this.#settleWaiter();
    this.#settleRoom();
  }

  /** Ends the channel with an error, after what is buffered. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.#error = { value: error };
    this.#settleWaiter();
    this.#settleRoom();
  }

  /**
   * Throws away what is buffered and ends the channel with `error`, for the next read; a channel
   * that had ended with items still unread ends with `error` instead.
   */
  discard(error: unknown): void {
    if (this.ended && this.size === 0) return;
    this.#drop();
    this.#closed = false;
    this.#error = { value: error };
    this.#settleWaiter();
    this.#settleRoom();
  }

  #drop(): void {
    const dropped = this.#items.slice(this.#head);
    this.#items = [];
    this.#head = 0;
    if (dropped.length > 0) this.#watch.onDrop?.(dropped);
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
      this.#watch.onTake?.(value);
      this.#settleRoom();
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
    this.#drop();
    this.#closed = true;
    this.#settleWaiter();
    this.#settleRoom();
    if (wasOpen) this.#onReturn?.();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
