interface ImportMetaEnv {
  /** The build id, set by vite.config.ts: the same string in the page and the service worker. */
  readonly VITE_HEARTH_BUILD: string;
}
