import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { hearthCatalog } from './scripts/catalog-plugin.ts';
import { hearthCsp } from './scripts/csp-plugin.ts';
import { hearthFiles } from './scripts/hearth-files-plugin.ts';

const { version } = JSON.parse(
  readFileSync(new URL('./package.json', import.meta.url), 'utf8'),
) as {
  version: string;
};

/** The self-hosted model catalogue, merged into the catalogue at build time. */
const SELF_HOSTED =
  process.env.HEARTH_MODELS_FILE ?? fileURLToPath(new URL('./public/models.json', import.meta.url));

/**
 * The app's own image files (under public/, as paths under the base): the only images a reply
 * may load (src/app/chat/markdown/outbound.ts). Self-hosted models and llama.cpp's build are not images.
 */
function appImages(): string[] {
  const root = fileURLToPath(new URL('./public/', import.meta.url));
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((path) => path.split('\\').join('/'))
    .filter((path) => /\.(png|svg|ico|jpe?g|gif|webp|avif)$/i.test(path))
    .filter((path) => !/^models\//.test(path))
    .sort();
}

/** Drops `accept-encoding` before `vite preview`'s compression sees it. */
function previewUncompressed(): Plugin {
  return {
    name: 'hearth-preview-uncompressed',
    // Called before preview adds its own middlewares, so this one runs first.
    configurePreviewServer(server) {
      server.middlewares.use((request, _response, next) => {
        delete request.headers['accept-encoding'];
        next();
      });
    },
  };
}

/** `HEARTH_BASE` as Vite wants it: `/` or `/sub/path/`. */
function basePath(raw = '/'): string {
  const trimmed = raw.trim().replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '/' : `/${trimmed}/`;
}

export default defineConfig(({ command }) => {
  // Page, engine worker and service worker are checked against each other by this id (DESIGN §1).
  const build =
    command === 'serve'
      ? 'dev'
      : (process.env.HEARTH_BUILD ?? `${version}+${Date.now().toString(36)}`);
  // Read as import.meta.env.VITE_HEARTH_BUILD, which Vite replaces in the page, the workers and
  // the service worker alike, in dev as in builds (a `define` global is not set in a dev worker).
  process.env.VITE_HEARTH_BUILD = build;
  process.env.VITE_HEARTH_PACKAGE_VERSION = version;
  // The bench build's hooks (src/engine-host/bench-hook.ts); '' elsewhere, so that they are left out.
  process.env.VITE_HEARTH_BENCH = process.env.HEARTH_BENCH === '1' ? '1' : '';
  process.env.VITE_HEARTH_APP_IMAGES = JSON.stringify(appImages());
  return {
    base: basePath(process.env.HEARTH_BASE),
    server: { host: '127.0.0.1', port: 5173, strictPort: true },
    preview: { host: '127.0.0.1', port: Number(process.env.PORT ?? 4173), strictPort: true },
    worker: { format: 'es', plugins: () => [hearthCatalog(SELF_HOSTED)] },
    // HEARTH_OUT_DIR lets two builds (e.g. the e2e tests' sub-path build) live side by side.
    build: {
      target: 'es2022',
      outDir: process.env.HEARTH_OUT_DIR ?? 'dist',
      rollupOptions: {
        // `npm run bench` builds its pages beside the app, so that they share its origin and scope.
        ...(process.env.HEARTH_BENCH === '1' && {
          input: {
            main: 'index.html',
            bench: 'bench/index.html',
            floor: 'bench/floor/index.html',
            realModel: 'bench/real-model.html',
          },
        }),
        // highlight.js and its grammars in one lazy chunk, not one per language: it is loaded
        // only for a reply with code, and the precache (which a first visit waits for) fetches
        // one file instead of seventeen.
        output: {
          codeSplitting: {
            groups: [{ name: 'highlight', test: /node_modules[\\/]highlight\.js/ }],
          },
        },
      },
    },
    plugins: [
      hearthCatalog(SELF_HOSTED),
      hearthCsp(SELF_HOSTED),
      // The package's hearth/ folder, which the app's pages start Hearth from as a site does.
      hearthFiles(build),
      // The browser tests' server sends files as they are: `vite preview` gzips every response
      // again (6 MB of WebLLM at each test's first visit), and that CPU is taken from the tests.
      ...(process.env.HEARTH_PREVIEW_UNCOMPRESSED === '1' ? [previewUncompressed()] : []),
      VitePWA({
        strategies: 'injectManifest',
        srcDir: 'sw',
        filename: 'sw.ts',
        // We register it ourselves with workbox-window (src/main.ts).
        injectRegister: false,
        manifest: false,
        injectManifest: {
          // wasm: llama.cpp's (wllama, ~10 MB), so that GGUF models run offline.
          globPatterns: ['**/*.{js,css,html,svg,png,ico,webmanifest,json,wasm}'],
          // Self-hosted models under public/models/ are downloaded on demand, not precached; so is
          // llama.cpp's compatibility build (18.7 MB), which only browsers that need it cache
          // (sw/llama-compat.ts).
          globIgnores: ['models/**', 'hearth/wllama-compat/**'],
          // The engine worker's chunk grows past Workbox's 2 MiB default once WebLLM is in it.
          maximumFileSizeToCacheInBytes: 16 * 1024 * 1024,
          // The service worker's own build needs the catalogue too.
          buildPlugins: { vite: [hearthCatalog(SELF_HOSTED)] },
        },
        devOptions: { enabled: true, type: 'module' },
      }),
    ],
  };
});
