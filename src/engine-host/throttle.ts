/**
 * @module
 * Runs a task at most once per interval however often it is requested, and always once after
 * the last request, so that the final state is never lost.
 */

/** A trailing-edge throttle. */
export class Throttle {
  readonly #intervalMs: number;
  readonly #settleMs: number;
  readonly #task: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pending = false;
  #lastRun = -Infinity;

  /**
   * @param settleMs how long a request after a quiet spell waits before the task runs, so that
   *   a burst of changes runs it once at its end rather than once at its start and again at the
   *   end of the interval
   */
  constructor(intervalMs: number, task: () => void, settleMs = 0) {
    this.#intervalMs = intervalMs;
    this.#settleMs = settleMs;
    this.#task = task;
  }

  /** Asks for the task to run: after the settle time, and at most once per interval. */
  request(): void {
    this.#pending = true;
    if (this.#timer !== undefined) return;
    const wait = Math.max(this.#settleMs, this.#lastRun + this.#intervalMs - Date.now());
    this.#timer = setTimeout(() => this.#run(), wait);
  }

  #run(): void {
    this.#timer = undefined;
    if (!this.#pending) return;
    this.#pending = false;
    this.#lastRun = Date.now();
    this.#task();
  }
}
