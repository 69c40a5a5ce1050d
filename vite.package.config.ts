/**
 * The `hearth-llm` package's builds (scripts/package.mjs runs them, one `mode` each):
 * - `loader`: `files/hearth/` — the loader `hearth.js`, the engine worker and its helper, llama.cpp's
 *   and WebLLM's code, the compatibility build. Built with a relative base, so every file finds
 *   the others beside it wherever the site serves the folder (`/`, `/repo/`, `/a/b/`).
 * - `sw`: `files/hearth-sw.js`, a classic script, so that a site's own worker can
 *   `importScripts` it.
 * - `entry`: `lib/index.js`, the bundled entry, which imports the copied loader at run time.
 * File names carry no hash: the package's file list is checked in (package/files.txt), and the
 * service worker keeps each build's files in a cache of that build's (sw/hearth-worker.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin, type UserConfig } from 'vite';
import { hearthCatalog } from './scripts/catalog-plugin.ts';
import { llamaCompat } from './scripts/llama-compat-plugin.ts';

const { version } = JSON.parse(
  readFileSync(new URL('./package.json', import.meta.url), 'utf8'),
) as { version: string };

/** Where the package is staged: build/package/, or HEARTH_PACKAGE_OUT's package/ (runs side by side). */
const OUT = `${process.env.HEARTH_PACKAGE_OUT ?? fileURLToPath(new URL('./build', import.meta.url))}/package/`;
/** The catalogue's self-hosted models, as the app's (none unless a file is given). */
const SELF_HOSTED =
  process.env.HEARTH_MODELS_FILE ?? fileURLToPath(new URL('./public/models.json', import.meta.url));
const names = { entryFileNames: '[name].js', chunkFileNames: '[name].js' };

/**
 * Puts `banner` first in every script the build writes, after minification (which would drop a
 * comment given to the bundler as `output.banner` in some outputs).
 */
function bannerPlugin(banner: string): Plugin {
  return {
    name: 'hearth-build-banner',
    enforce: 'post',
    generateBundle(_options, bundle) {
      for (const file of Object.values(bundle)) {
        if (file.type === 'chunk') file.code = `${banner}\n${file.code}`;
      }
    },
  };
}

export default defineConfig(({ mode }): UserConfig => {
  // One id for the three builds: the loader, its workers and hearth-sw.js are checked against it.
  process.env.VITE_HEARTH_BUILD =
    process.env.HEARTH_BUILD ?? `${version}+${Date.now().toString(36)}`;
  process.env.VITE_HEARTH_PACKAGE_VERSION = version;
  // `npm run bench`'s build of the app has the bench's hooks in its engine worker.
  process.env.VITE_HEARTH_BENCH = process.env.HEARTH_BENCH === '1' ? '1' : '';
  const shared: UserConfig = { configFile: false, publicDir: false, logLevel: 'warn' };
  // Every script's first line names its build: the service worker serves a build's files only
  // while the server has that build (sw/hearth-files.ts), and reads it there.
  const banner = bannerPlugin(`/*! hearth-llm build ${process.env.VITE_HEARTH_BUILD} */`);
  if (mode === 'loader') {
    return {
      ...shared,
      base: './',
      worker: {
        format: 'es',
        plugins: () => [hearthCatalog(SELF_HOSTED), banner],
        rollupOptions: { output: { ...names, assetFileNames: '[name][extname]' } },
      },
      plugins: [hearthCatalog(SELF_HOSTED), llamaCompat(), banner],
      build: {
        target: 'es2022',
        // HEARTH_LOADER_OUT: the chat app's build of the same folder (scripts/hearth-files-plugin.ts).
        outDir: process.env.HEARTH_LOADER_OUT ?? `${OUT}files/hearth`,
        emptyOutDir: true,
        assetsInlineLimit: 0,
        rollupOptions: {
          input: { hearth: fileURLToPath(new URL('./src/site/hearth.ts', import.meta.url)) },
          preserveEntrySignatures: 'strict',
          output: { ...names, assetFileNames: '[name][extname]' },
        },
      },
    };
  }
  if (mode === 'sw') {
    // The loader build's file list (scripts/package.mjs): without it the worker would serve none.
    if (!process.env.VITE_HEARTH_FILES) {
      throw new Error(
        'vite.package.config.ts: the sw build needs VITE_HEARTH_FILES (npm run package)',
      );
    }
    return {
      ...shared,
      plugins: [hearthCatalog(SELF_HOSTED), banner],
      build: {
        target: 'es2022',
        outDir: `${OUT}files`,
        emptyOutDir: false,
        lib: {
          entry: fileURLToPath(new URL('./sw/hearth-sw.ts', import.meta.url)),
          formats: ['iife'],
          name: 'hearthServiceWorker',
          fileName: () => 'hearth-sw.js',
        },
      },
    };
  }
  if (mode === 'entry') {
    return {
      ...shared,
      build: {
        target: 'es2022',
        outDir: `${OUT}lib`,
        emptyOutDir: true,
        minify: false,
        lib: {
          entry: fileURLToPath(new URL('./src/site/index.ts', import.meta.url)),
          formats: ['es'],
          fileName: () => 'index.js',
        },
      },
    };
  }
  throw new Error(`vite.package.config.ts: unknown mode ${mode} (loader, sw or entry)`);
});
