/**
 * The Vite fixture sites (sites/make.mjs makes them with the plain one): the site that installs the
 * packed `hearth-llm` and uses its Vite plugin beside vite-plugin-pwa, its variant whose worker
 * waits, and each one's older build. Plain JavaScript with JSDoc types, as make.mjs.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { npm, OLD_BUILD, renameBuild, VITE_SITE } from './make.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The Vite site: `base: '/repo/'`, Hearth's files from the package's Vite plugin
 * (`hearth-llm/vite`: served by `vite dev`, written by `vite build`; no `init`, no `public/`), its
 * own service worker made by vite-plugin-pwa (Workbox `generateSW`, in dev too) that precaches
 * the site's pages and imports `hearth-sw.js`, and a page that calls
 * `startHearth({ registerWorker: false })` from the package's bundled entry. Vite, vite-plugin-pwa
 * and `openai` resolve from this repository's node_modules (the site's folder is under it);
 * `hearth-llm` from the site's own, where `npm i <tgz>` put it.
 * @param {string} tarball
 * @param {string} site the site's project folder
 */
export function makeViteSite(tarball, site = VITE_SITE) {
  rmSync(site, { recursive: true, force: true });
  mkdirSync(join(site, 'src'), { recursive: true });
  writeFileSync(
    join(site, 'package.json'),
    `${JSON.stringify({ name: 'vite-site', private: true, type: 'module' }, null, 2)}\n`,
  );
  npm(site, ['install', tarball]);
  writeFileSync(
    join(site, 'vite.config.js'),
    `import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { hearth } from 'hearth-llm/vite';

export default defineConfig({
  base: '/repo/',
  logLevel: 'warn',
  build: { rollupOptions: { input: ['index.html', 'about.html'] } },
  plugins: [
    hearth({ compat: false }),
    VitePWA({
      manifest: false,
      // vite dev: vite-plugin-pwa makes its worker there only when asked; with no
      // navigateFallback, its dev worker precaches nothing, which Workbox refuses (a 500 for the
      // worker) unless its warnings are suppressed.
      devOptions: { enabled: true, suppressWarnings: true },
      workbox: {
        // Hearth answers {base}v1/ and serves hearth/ first; the site's precache has the rest
        // (the plugin writes Hearth's files after vite-plugin-pwa has globbed the output).
        importScripts: ['hearth-sw.js'],
        globPatterns: ['**/*.{js,html}'],
        navigateFallback: null,
        clientsClaim: true,
        skipWaiting: true,
      },
    }),
  ],
});
`,
  );
  /**
   * @param {string} title
   * @param {string} script
   */
  const html = (title, script) => `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>${title}</title><link rel="icon" href="data:," /></head>
  <body><h1>${title}</h1><script type="module" src="${script}"></script></body>
</html>
`;
  writeFileSync(join(site, 'index.html'), html('Vite site', '/src/main.js'));
  writeFileSync(join(site, 'about.html'), html('About', '/src/about.js'));
  writeFileSync(join(site, 'src/about.js'), `document.title = 'About (loaded)';\n`);
  writeFileSync(
    join(site, 'src/main.js'),
    `import { registerSW } from 'virtual:pwa-register';
import OpenAI from 'openai';
import { startHearth } from 'hearth-llm';

// The site's own worker, which imports Hearth's; Hearth is told not to register one.
registerSW({ immediate: true });
window.OpenAI = OpenAI;
window.hearthStarted = startHearth({ base: import.meta.env.BASE_URL, registerWorker: false }).then(
  (hearth) => (window.hearth = hearth),
  (error) => {
    window.hearthError = { name: error.name, code: error.code, message: error.message };
    throw error;
  },
);
`,
  );
  viteBuild(site);
}

/**
 * The Vite site with vite-plugin-pwa's defaults for its worker, which waits to take over until
 * the tabs of the one before are closed (no `skipWaiting`, no `clientsClaim`), built.
 * @param {string} site the Vite site's project, made
 * @param {string} dest where the variant goes
 */
export function makeWaitingViteSite(site, dest) {
  rmSync(dest, { recursive: true, force: true });
  cpSync(site, dest, { recursive: true, filter: (path) => !path.startsWith(join(site, 'dist')) });
  const config = join(dest, 'vite.config.js');
  const waiting = readFileSync(config, 'utf8').replace(
    /\n\s*clientsClaim: true,\n\s*skipWaiting: true,/,
    '',
  );
  if (waiting.includes('skipWaiting')) throw new Error('the Vite site still skips waiting');
  writeFileSync(config, waiting);
  viteBuild(dest);
}

/** @param {string} site a Vite project to build */
function viteBuild(site) {
  execFileSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build'], {
    cwd: site,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * The Vite site as it was before an upgrade: the same project with `hearth-llm` of build
 * `OLD_BUILD` (`renameBuild`), built again, so that its bundle, its precache manifest and its
 * worker are all that build's.
 * @param {string} site the Vite site's project, made with the package of build `build`
 * @param {string} older where the older project goes
 * @param {string} build
 */
export function makeOlderViteSite(site, older, build) {
  rmSync(older, { recursive: true, force: true });
  cpSync(site, older, { recursive: true, filter: (path) => !path.startsWith(join(site, 'dist')) });
  renameBuild(join(older, 'node_modules', 'hearth-llm'), build, OLD_BUILD);
  viteBuild(older);
}
