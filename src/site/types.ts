/**
 * @module
 * The public types of `hearth-llm`: what `startHearth` takes and gives, the same from the
 * bundled entry (`import { startHearth } from 'hearth-llm'`) and from `{base}hearth/hearth.js`.
 */

/** Options of `startHearth`. */
export interface StartHearthOptions {
  /**
   * The folder that holds `hearth-sw.js` and `hearth/` (what `npx hearth init` wrote), as a URL
   * or a path: `'/'`, `'/repo/'`, `import.meta.env.BASE_URL`. It is the service worker's scope,
   * and the API answers under it (`{base}v1/`). Default: the folder above `hearth/hearth.js`
   * when the loader is imported from there; `'/'` for the bundled entry.
   */
  base?: string;
  /**
   * Register `{base}hearth-sw.js` (default). `false` when the site's own service worker
   * composes Hearth with `importScripts('hearth-sw.js')` and registers itself.
   */
  registerWorker?: boolean;
  /**
   * Make the pages of the scope cross-origin isolated (COOP and COEP added by the worker), so
   * that llama.cpp runs on several threads. A first visit reloads once to gain it. Off by
   * default: isolation stops cross-origin resources without CORS or CORP from loading.
   */
  isolate?: boolean;
  /** Told of every change of `hearth.status`. */
  onStatus?: (status: HearthStatus) => void;
}

/**
 * This page's part in the engine election. One page of the install hosts the engine (`host`),
 * the others wait to take over (`waiting`); `refused`: this page's code is of another build than
 * the service worker's; `stopped`: `hearth.stop()` was called.
 */
export interface HearthStatus {
  role: 'starting' | 'waiting' | 'host' | 'refused' | 'stopped';
  /** Why, for `refused`. */
  detail?: string;
}

/** What `startHearth` resolves with. */
export interface Hearth {
  /** The absolute `{base}v1/openai`: the `openai` SDK's `baseURL`. */
  readonly baseURL: string;
  /** The absolute `{base}v1/`: Hearth's own routes (`{base}v1/hearth/status`, …) lie under it. */
  readonly apiURL: string;
  /** The build of the loader and its worker (they are checked against each other). */
  readonly version: string;
  /** Whether this page is cross-origin isolated (llama.cpp then runs several threads). */
  readonly crossOriginIsolated: boolean;
  /** This page's part in the engine election now. */
  readonly status: HearthStatus;
  /**
   * Withdraws this page from the election, ending its engine if it hosts one (another page of
   * the install, if any, takes over). The API keeps answering other pages.
   */
  stop(): Promise<void>;
}

/** Why `startHearth` failed: `code` for code, `message` for people. */
export interface HearthErrorFields {
  code: 'unsupported' | 'uncontrolled' | 'version_mismatch';
}
