/**
 * @module
 * The relay's log: what a caller sends made printable, and refusals at a bounded rate, since
 * anyone on this machine can cause thousands of them.
 */

/**
 * `text` with its control characters (C0, DEL, C1; not the line's own spaces) written as `\xNN`,
 * so that nothing a caller sends can act on the terminal that shows the log.
 * @param {string} text
 */
export function printable(text) {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- control characters are what it finds
    /[\u0000-\u001f\u007f-\u009f]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** Lines logged at most `limit` a window; the rest counted, and said in one line after it. */
export class RateLimitedLog {
  #log;
  #limit;
  #windowMs;
  #count = 0;
  #dropped = 0;
  /** @type {ReturnType<typeof setTimeout> | null} */
  #timer = null;

  /**
   * @param {(line: string) => void} log
   * @param {number} [limit]
   * @param {number} [windowMs]
   */
  constructor(log, limit = 10, windowMs = 10_000) {
    this.#log = log;
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  /** @param {string} line */
  note(line) {
    if (this.#timer === null) {
      this.#timer = setTimeout(() => this.#flush(), this.#windowMs);
      this.#timer.unref();
    }
    if (this.#count < this.#limit) {
      this.#count += 1;
      this.#log(line);
    } else {
      this.#dropped += 1;
    }
  }

  #flush() {
    if (this.#dropped > 0) {
      this.#log(`… and ${this.#dropped} more like it in ${this.#windowMs / 1000} s, not shown.`);
    }
    this.#count = 0;
    this.#dropped = 0;
    this.#timer = null;
  }

  /** Says what was held back, and stops. */
  close() {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#flush();
  }
}
