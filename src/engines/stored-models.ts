/**
 * @module
 * What both on-device engines keep of "which models are on the device": reads that run one after
 * another, so that an older one never overwrites what a newer one found, each asking of every
 * model at once (one by one, a catalogue of a hundred models is a second of cache lookups).
 */

/** Reads that run one after another, each after those asked for before it. */
export class SerialReads {
  readonly #read: () => Promise<void>;
  #done: Promise<void> = Promise.resolve();

  constructor(read: () => Promise<void>) {
    this.#read = read;
  }

  /** Reads again, after the reads asked for before (a failed one does not stop it). */
  refresh(): Promise<void> {
    this.#done = this.#done.catch(() => undefined).then(this.#read);
    return this.#done;
  }

  /** Resolves once the reads asked for so far are done. */
  settled(): Promise<void> {
    return this.#done.catch(() => undefined);
  }
}

/** The ids of `entries` that `stored` finds, in their order; a lookup that fails finds nothing. */
export async function storedIds<Entry extends { id: string }>(
  entries: readonly Entry[],
  stored: (entry: Entry) => Promise<boolean>,
): Promise<string[]> {
  const found = await Promise.all(entries.map((entry) => stored(entry).catch(() => false)));
  return entries.filter((_, i) => found[i]).map((entry) => entry.id);
}
