/** The build id, set by vite.config.ts: the same string in the page, the worker and the service worker. */
declare const __HEARTH_BUILD__: string;
