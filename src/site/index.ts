/**
 * @module
 * `hearth-llm` for bundled sites: `startHearth` imports the loader that `npx hearth init` copied
 * into the site (`{base}hearth/hearth.js`) and starts it. The loader and its workers are never
 * bundled: workers and WebAssembly inside `node_modules` break bundlers, and the copied files are
 * what the service worker serves and caches. The package's own version is checked against the
 * copied loader's, so a forgotten `npx hearth init` after an upgrade is one clear error.
 */
import { HearthError } from './errors';
import type { Hearth, StartHearthOptions } from './types';

export type * from './types';
export { HearthError, type HearthErrorCode, type HearthErrorOptions } from './errors';

/** This package's version. */
export const PACKAGE_VERSION: string = import.meta.env.VITE_HEARTH_PACKAGE_VERSION;
/** This package's build: the copied loader must be of the same (one `npm run package` makes both). */
const BUILD: string = import.meta.env.VITE_HEARTH_BUILD;

interface Loader {
  VERSION: string;
  startHearth(options?: StartHearthOptions): Promise<Hearth>;
}

/**
 * Starts Hearth on this page (see `StartHearthOptions`). `base` is the folder that holds
 * `hearth-sw.js` and `hearth/` — `import.meta.env.BASE_URL` in a Vite site; `'/'` by default.
 */
export async function startHearth(options: StartHearthOptions = {}): Promise<Hearth> {
  const base = new URL(options.base ?? '/', location.href);
  const folder = new URL('hearth/', base.href.endsWith('/') ? base : `${base.href}/`);
  const url = new URL('hearth.js', folder).href;
  // Under Hearth's service worker a build's files are at hearth/@<build>/, whichever build the
  // worker runs (sw/hearth-files.ts): asked for by its build, the loader and everything it loads
  // are of this bundle's build, as long as the site serves it or the device keeps it. A worker
  // that does not know that address (one of an older release, or none yet) answers the plain one.
  const named = new URL(`@${encodeURIComponent(BUILD)}/hearth.js`, folder).href;
  let loader: Loader | undefined;
  if (navigator.serviceWorker?.controller) {
    loader = await (import(/* @vite-ignore */ /* webpackIgnore: true */ named) as Promise<Loader>)
      .then((module) => (module.VERSION === BUILD ? module : undefined))
      .catch(() => undefined);
  }
  try {
    loader ??= (await import(/* @vite-ignore */ /* webpackIgnore: true */ url)) as Loader;
  } catch (err) {
    throw new HearthError(
      'uncontrolled',
      `Hearth's loader ${url} could not be loaded (${String(err)}). ` +
        'Serve it with the Vite plugin (`hearth-llm/vite`) or copy it into your public folder ' +
        'with `npx hearth init <your public folder>`, and pass `base` when the site is not ' +
        'served from the root.',
      { cause: err },
    );
  }
  if (loader.VERSION !== BUILD) {
    throw new HearthError(
      'version_mismatch',
      `This page's hearth-llm is version ${PACKAGE_VERSION} (build ${BUILD}), but the site ` +
        `serves Hearth's files of build ${loader.VERSION} at ${folder.pathname}, and this ` +
        "device does not keep this page's build: reload the page if the site was just " +
        'deployed; if it persists, the bundle and the files come from two builds (use the Vite ' +
        'plugin, or run `npx hearth init <your public folder>` and build again).',
    );
  }
  return loader.startHearth({ ...options, base: base.href });
}
