/**
 * @module
 * What a download does with a failure: retry it (a broken connection, a server error), or give up
 * at once (a missing file, a file that is not what it should be, a full disk, a cancel).
 */
import { OpenAIError } from '../../protocol/errors';

/** A failure that retrying cannot mend. */
export class Permanent extends Error {}

/** Whether the device's storage is full (Chromium: a `QuotaExceededError` DOMException). */
export const isQuotaError = (err: unknown): boolean =>
  err instanceof DOMException
    ? err.name === 'QuotaExceededError'
    : err instanceof Error && err.name === 'QuotaExceededError';

/** Whether trying again may help. */
export function transient(err: unknown): boolean {
  return !(err instanceof Permanent || err instanceof OpenAIError || isQuotaError(err));
}

/**
 * A model host that could not be reached through every retry: the download fails with
 * `download_unreachable`, the network's failure rather than the engine's (`engine_error`).
 */
export class Unreachable extends Error {}

/**
 * Whether `err` is the network's failure: fetch's `TypeError` (offline, DNS, refused, reset), or
 * the `NetworkError` with which Chromium's `Cache.put` rejects a body whose connection broke (the
 * way a download sees the network drop midway).
 */
export function isNetworkFailure(err: unknown): boolean {
  return err instanceof TypeError || (err instanceof Error && err.name === 'NetworkError');
}

/** A network failure said in words (most often the device is offline); other errors as they are. */
export function unreachable(url: string, err: unknown): unknown {
  if (!isNetworkFailure(err) || !(err instanceof Error)) return err;
  return new Unreachable(
    `could not reach ${new URL(url).host} (${err.message}): the device may be offline, or the server down`,
  );
}

/** Waits `ms`, or until `signal` aborts (then throws its reason). */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
  signal.throwIfAborted();
}
