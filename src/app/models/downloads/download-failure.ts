/**
 * @module
 * A failed download said in words people read: the model's name rather than its id, and, when
 * the model's host could not be reached (offline, on a plane, behind a firewall), that plainly
 * rather than the browser's "Failed to fetch". Whether the host was unreachable is returned too,
 * so that the views can point to what works without the network. Pure: the Models view, the
 * first-run card and their tests use it alike.
 */
import type { CatalogModel } from '../../shared/api-client';
import { describeModel } from '../model-info';

/** What the views say about a failed download. */
export interface DownloadFailure {
  /** One or two sentences, naming the model. */
  text: string;
  /** Whether the model's host could not be reached: the network, not the model, is at fault. */
  unreachable: boolean;
}

/**
 * Codes that mean a host did not answer at all: a model's host during its download (the engine
 * host's `download_unreachable`), a server the user added, or the hub.
 */
const UNREACHABLE_CODES = new Set([
  'download_unreachable',
  'upstream_unavailable',
  'upstream_timeout',
]);

/**
 * What a failed fetch says, by browser: Chromium's `Failed to fetch`, Firefox's `NetworkError
 * when attempting to fetch resource.`, Safari's `Load failed`; the engine host words them as
 * `could not reach <host> (…)`, and says `The device is offline` when the browser knows it is.
 */
const NETWORK =
  /failed to fetch|networkerror|network error|load failed|could not reach|device is offline|ERR_INTERNET_DISCONNECTED|ERR_NAME_NOT_RESOLVED/i;

/** The host the engine host names in `could not reach <host> (…)`. */
const REACHED = /could not reach ([^\s(:]+)/i;

/** The engine host's prefix, which names the model by its id: the text names it by its name. */
const PREFIX = /^Downloading \S+ failed:\s*/;

/** `text` as the end of a sentence. */
const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

/** What to say about `model`'s download, which failed with `error`. */
export function describeDownloadFailure(
  model: CatalogModel,
  error: { code?: string | null; message: string },
): DownloadFailure {
  const { name } = describeModel(model);
  const message = error.message.trim();
  if (UNREACHABLE_CODES.has(error.code ?? '') || NETWORK.test(message)) {
    const host = REACHED.exec(message)?.[1];
    return {
      text: `${name} could not be downloaded: the model host${host ? ` (${host})` : ''} can't be reached — are you offline?`,
      unreachable: true,
    };
  }
  if (error.code === 'storage_full') {
    return {
      text: `${name} does not fit: this device's storage is full. What it had stored was removed to free the space.`,
      unreachable: false,
    };
  }
  const detail = message.replace(PREFIX, '');
  return {
    text: detail
      ? `${name} could not be downloaded: ${sentence(detail)}`
      : `${name} could not be downloaded.`,
    unreachable: false,
  };
}
