/**
 * @module
 * The relay's key in the tab: its fingerprint, which the confirmation shows and the tab checks the
 * relay's key against (relay/config.js prints the same), and how long the key stays an issued key
 * of the API: for as long as a tab is paired with it, no longer. A paired tab holds a shared Web
 * Lock named after the key's id; a tab that ended its pairing removes the key unless another tab
 * holds it (two relays with one key file), and each pairing removes the relay keys that no tab
 * holds — those of tabs that were closed or died paired, which had no moment to remove their own.
 */

/** `4a5b-…`: four groups of four hex digits, as relay/config.js writes them. */
export const FINGERPRINT_PATTERN = /^[0-9a-f]{4}(?:-[0-9a-f]{4}){3}$/;

/** The name of an issued key registered for the relay at `relay` (a WebSocket address). */
export function relayKeyName(relay: string): string {
  return `Relay at ${new URL(relay).host}`;
}

/** Whether an issued key's name is one a pairing gave it. */
export const isRelayKeyName = (name: string): boolean => /^Relay at \S+$/.test(name);

/** The first 8 bytes of the key's SHA-256, as four groups of hex: `3f9a-c21e-77b0-d4e5`. */
export async function keyFingerprint(key: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key)),
  );
  const hex = Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join('');
  return (hex.match(/.{4}/g) ?? []).join('-');
}

/** The Web Lock a tab paired with the relay's key `id` holds. */
const lockName = (id: string) => `hearth:relay-key:${id}`;

/** The page's Web Locks, where it has them. */
const locks = (): LockManager | undefined =>
  (globalThis.navigator as Navigator | undefined)?.locks ?? undefined;

/**
 * Holds the key `id` as one in use by this tab until the returned function is called (it resolves
 * once the lock is let go), or the tab goes (the browser lets go of a gone page's locks).
 */
export async function holdRelayKey(id: string): Promise<() => Promise<void>> {
  const manager = locks();
  if (!manager) return async () => undefined;
  let released: Promise<unknown> = Promise.resolve();
  const release = await new Promise<() => void>((held) => {
    released = manager.request(lockName(id), { mode: 'shared' }, () => new Promise<void>(held));
  });
  return async () => {
    release();
    await released;
  };
}

/**
 * Runs `remove` for the key `id` unless a tab holds it, and says whether it ran. Without Web Locks
 * nobody can tell: this tab's own key goes (`own`), another's stays.
 */
export async function removeUnheld(
  id: string,
  own: boolean,
  remove: () => Promise<void>,
): Promise<boolean> {
  const manager = locks();
  if (!manager) {
    if (own) await remove();
    return own;
  }
  return manager.request(lockName(id), { ifAvailable: true }, async (lock) => {
    if (lock === null) return false;
    await remove();
    return true;
  });
}
