/**
 * @module
 * Runs a task at most once per interval however often it is requested, and always once after
 * the last request, so that the final state is never lost.
 */

/** A trailing-edge throttle. */
export class Throttle {
  readonly #intervalMs: number;
  readonly #task: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pending = false;
  #lastRun = -Infinity;

  constructor(intervalMs: number, task: () => void) {
    this.#intervalMs = intervalMs;
    this.#task = task;
  }

  /** Asks for the task to run: now if it has not run for an interval, else at the end of it. */
  request(): void {
    this.#pending = true;
    if (this.#timer !== undefined) return;
    const wait = Math.max(0, this.#lastRun + this.#intervalMs - Date.now());
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
