/**
 * @module
 * A response body read in pieces of chosen sizes: a stream of the next `n` bytes for one part,
 * then the next part's. The cache takes each part as a stream, so a part never sits whole in the
 * worker's memory.
 */

/** The bytes of `chunks`, joined. */
function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** A body that ended before the bytes it was to bring: retried, as a broken connection is. */
export class ShortBody extends Error {}

export class ByteSource {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  /** Bytes read from the body and not given out yet. */
  #held: Uint8Array | undefined;
  /**
   * Why reading the body failed, if it did (a broken connection: fetch's `TypeError`). A
   * `Cache.put` given a part then rejects with an error of its own (Chromium's `NetworkError`,
   * Firefox's `NS_ERROR_FAILURE`), which does not say that the network failed; this does.
   */
  failure: { error: unknown } | undefined;

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
  }

  /** Up to `max` bytes, or undefined at the end of the body. */
  async read(max: number): Promise<Uint8Array | undefined> {
    let chunk = this.#held;
    this.#held = undefined;
    while (!chunk?.byteLength) {
      const { done, value } = await this.#reader.read().catch((error: unknown) => {
        this.failure ??= { error };
        throw error;
      });
      if (done) return undefined;
      chunk = value;
    }
    if (chunk.byteLength <= max) return chunk;
    this.#held = chunk.subarray(max);
    return chunk.subarray(0, max);
  }

  /** The next `n` bytes (fewer at the end), left to be read again. */
  async peek(n: number): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    for (let have = 0; have < n;) {
      const chunk = await this.read(n - have);
      if (!chunk) break;
      chunks.push(chunk);
      have += chunk.byteLength;
    }
    if (this.#held) chunks.push(this.#held);
    this.#held = concat(chunks);
    return this.#held.subarray(0, Math.min(n, this.#held.byteLength));
  }

  /**
   * A stream of the next `n` bytes, telling `onBytes` of each chunk as the reader takes it; it
   * errors when the body ends first or fails (a broken connection), and so does a `Cache.put`
   * given it: a part is stored whole or not at all.
   */
  take(n: number, onBytes: (bytes: number) => void): ReadableStream<Uint8Array> {
    let left = n;
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          const chunk = await this.read(left);
          if (!chunk) throw new ShortBody(`the body ended ${left} bytes early`);
          left -= chunk.byteLength;
          onBytes(chunk.byteLength);
          controller.enqueue(chunk);
          if (left === 0) controller.close();
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** Reads past the next `n` bytes (a part stored already). */
  async skip(n: number): Promise<void> {
    for (let left = n; left > 0;) {
      const chunk = await this.read(left);
      if (!chunk) throw new ShortBody(`the body ended ${left} bytes early`);
      left -= chunk.byteLength;
    }
  }

  /** Lets the rest of the body go (and its connection). */
  close(): void {
    this.#reader.cancel().catch(() => undefined);
  }
}
