/**
 * @module
 * What the relay takes on at once, and the count of the request bodies it holds.
 */

/**
 * The relay's limits (see `RelayOptions` in relay.js for each).
 * @typedef {object} Limits
 * @property {number} maxConnections
 * @property {number} maxRequests
 * @property {number} maxBodyBytes
 * @property {number} headersTimeoutMs
 * @property {number} requestTimeoutMs
 * @property {number} keepAliveTimeoutMs
 * @property {number} reconnectGraceMs
 */

/** @type {Limits} */
export const DEFAULT_LIMITS = {
  maxConnections: 128,
  maxRequests: 64,
  maxBodyBytes: 128 * 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  reconnectGraceMs: 10_000,
};

/**
 * The bytes of request bodies the relay holds, against its cap: a body counts from its first
 * byte read until the WebSocket has handed its last to the operating system (its send callback),
 * not only while it is read, since until then the relay holds it in memory all the same. Bodies go
 * as binary messages, so what is counted is what is held: no base64 or JSON copy beside it.
 */
export class BodyBudget {
  #limit;
  #held = 0;

  /** @param {number} limit */
  constructor(limit) {
    this.#limit = limit;
  }

  /** Bytes held now. */
  get held() {
    return this.#held;
  }

  /** Bytes that may still be taken. */
  get room() {
    return this.#limit - this.#held;
  }

  /**
   * A new claim on the budget, empty; `take` adds to it, `release` gives all of it back, once.
   */
  claim() {
    let taken = 0;
    let released = false;
    return {
      /**
       * Takes `bytes` more if they fit, and says whether they did (nothing is taken if not).
       * @param {number} bytes
       */
      take: (bytes) => {
        if (released || bytes > this.room) return false;
        taken += bytes;
        this.#held += bytes;
        return true;
      },
      /** Gives back what this claim took; later calls do nothing. */
      release: () => {
        if (released) return;
        released = true;
        this.#held -= taken;
        taken = 0;
      },
    };
  }
}
