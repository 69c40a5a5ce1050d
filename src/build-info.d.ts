interface ImportMetaEnv {
  /** The build id, set by vite.config.ts: the same string in the page and the service worker. */
  readonly VITE_HEARTH_BUILD: string;
  /** GGUF parts' size in a test build (the e2e tests make it small); unset in real builds. */
  readonly VITE_HEARTH_GGUF_PART_BYTES?: string;
  /** The e2e build's shorter stall limit (ms) for streams without a token. */
  readonly VITE_HEARTH_STALL_MS?: string;
  /** '1' in `npm run bench`'s build (HEARTH_BENCH=1), which has the bench's hooks; else ''. */
  readonly VITE_HEARTH_BENCH: string;
  /** The version of `hearth-llm`, in the package's bundled entry (src/site/index.ts). */
  readonly VITE_HEARTH_PACKAGE_VERSION: string;
  /**
   * `hearth-sw.js`'s build only: the files under `hearth/` it caches when it installs, a JSON
   * list (scripts/package.mjs).
   */
  readonly VITE_HEARTH_CORE_FILES?: string;
  /**
   * `hearth-sw.js`'s build only: every file of the build's `hearth/`, a JSON list (the only ones
   * it serves from and keeps in its cache; scripts/package.mjs).
   */
  readonly VITE_HEARTH_FILES?: string;
  /** The app's image files, a JSON list of paths under the base (`["icons/icon-192.png"]`). */
  readonly VITE_HEARTH_APP_IMAGES?: string;
}
