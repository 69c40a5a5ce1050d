/**
 * Fixture sites made from the packed `hearth-llm` tarball, as a developer makes theirs: `npm i
 * <tgz>` into a project of its own (not a workspace link), `npx hearth init public`, and pages
 * that call `startHearth()`. Made by the e2e global setup, under tests/e2e/.cache/sites/.
 *
 * The plain site has two pages in different folders and no bundler: each imports
 * `hearth/hearth.js` and the stock `openai` SDK (its browser bundle, as a `<script>`).
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPENAI_BUNDLE } from '../helpers';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Apart per e2e port, so that runs side by side do not share sites or packages. */
const PORT = process.env.E2E_PORT ?? '4179';
export const SITES_DIR = join(ROOT, `tests/e2e/.cache/sites-${PORT}`);
/** The plain site's project; its public folder is what the static server serves. */
export const PLAIN_SITE = join(SITES_DIR, 'plain');
export const PLAIN_PUBLIC = join(PLAIN_SITE, 'public');

/** Runs `npm run package` and returns the tarball's path (its last line of output). */
export function packTarball(): string {
  const out = execFileSync('npm', ['run', '--silent', 'package'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, HEARTH_PACKAGE_OUT: join(SITES_DIR, 'build') },
  });
  return resolve(ROOT, out.trim().split('\n').at(-1)!.trim());
}

/** The newest modification time of the files under `paths` (folders walked). */
function newest(paths: string[]): number {
  let latest = 0;
  for (const path of paths) {
    const stat = statSync(path);
    if (!stat.isDirectory()) latest = Math.max(latest, stat.mtimeMs);
    else latest = Math.max(latest, newest(readdirSync(path).map((name) => join(path, name))));
  }
  return latest;
}

/** What the package is made of: a site made after the last change to any of it is current. */
const PACKAGE_SOURCES = [
  'src',
  'sw',
  'bin',
  'relay',
  'package',
  'scripts/package.mjs',
  'vite.package.config.ts',
  'package.json',
  'tests/e2e/sites',
].map((path) => join(ROOT, path));

/** Makes the sites again unless they were made after every change to their sources. */
export function makeSites(): void {
  const stamp = join(SITES_DIR, '.made');
  if (existsSync(stamp) && statSync(stamp).mtimeMs > newest(PACKAGE_SOURCES)) return;
  const tarball = packTarball();
  makePlainSite(tarball);
  makeViteSite(tarball);
  writeFileSync(stamp, tarball);
}

/** A page of the plain site: the SDK as a script, then Hearth started from the copied loader. */
function page(title: string, loader: string, sdk: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${title}</title>
    <!-- No icon: the browser would ask for /favicon.ico, outside the site's folder. -->
    <link rel="icon" href="data:," />
    <script src="${sdk}"></script>
  </head>
  <body>
    <h1>${title}</h1>
    <script type="module">
      import { startHearth } from '${loader}';
      const isolate = new URLSearchParams(location.search).has('isolate');
      // Kept for the tests: the promise, then its value or its error.
      window.hearthStarted = startHearth({ isolate }).then(
        (hearth) => (window.hearth = hearth),
        (error) => {
          window.hearthError = { name: error.name, code: error.code, message: error.message };
          throw error;
        },
      );
    </script>
  </body>
</html>
`;
}

function npm(cwd: string, args: string[]): void {
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Makes the plain site from `tarball`. */
export function makePlainSite(tarball: string): void {
  rmSync(PLAIN_SITE, { recursive: true, force: true });
  mkdirSync(join(PLAIN_PUBLIC, 'docs'), { recursive: true });
  writeFileSync(
    join(PLAIN_SITE, 'package.json'),
    `${JSON.stringify({ name: 'plain-site', private: true }, null, 2)}\n`,
  );
  npm(PLAIN_SITE, ['install', tarball]);
  execFileSync('npx', ['--no-install', 'hearth', 'init', 'public'], {
    cwd: PLAIN_SITE,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  cpSync(OPENAI_BUNDLE, join(PLAIN_PUBLIC, 'openai.js'));
  // An image the tests load from another origin (localhost, not 127.0.0.1), served without CORP.
  writeFileSync(
    join(PLAIN_PUBLIC, 'pixel.svg'),
    '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1"/></svg>\n',
  );
  writeFileSync(join(PLAIN_PUBLIC, 'index.html'), page('Home', './hearth/hearth.js', 'openai.js'));
  writeFileSync(
    join(PLAIN_PUBLIC, 'docs', 'index.html'),
    page('Docs', '../hearth/hearth.js', '../openai.js'),
  );
}

/** The Vite site's project, built into `dist/` for `/repo/`. */
export const VITE_SITE = join(SITES_DIR, 'vite');
export const VITE_DIST = join(VITE_SITE, 'dist');

/**
 * The Vite site: `base: '/repo/'`, its own service worker made by vite-plugin-pwa (Workbox
 * `generateSW`) that precaches the site's pages and imports `hearth-sw.js`, and a page that
 * calls `startHearth({ registerWorker: false })` from the package's bundled entry. Vite, the
 * plugin and `openai` resolve from this repository's node_modules (the site's folder is under
 * it); `hearth-llm` from the site's own, where `npm i <tgz>` put it.
 */
export function makeViteSite(tarball: string): void {
  rmSync(VITE_SITE, { recursive: true, force: true });
  mkdirSync(join(VITE_SITE, 'src'), { recursive: true });
  writeFileSync(
    join(VITE_SITE, 'package.json'),
    `${JSON.stringify({ name: 'vite-site', private: true, type: 'module' }, null, 2)}\n`,
  );
  npm(VITE_SITE, ['install', tarball]);
  execFileSync('npx', ['--no-install', 'hearth', 'init', 'public', '--no-compat'], {
    cwd: VITE_SITE,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  writeFileSync(
    join(VITE_SITE, 'vite.config.js'),
    `import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';

export default defineConfig({
  base: '/repo/',
  logLevel: 'warn',
  build: { rollupOptions: { input: ['index.html', 'about.html'] } },
  plugins: [
    VitePWA({
      injectRegister: false,
      manifest: false,
      workbox: {
        // Hearth answers {base}v1/ and serves hearth/ first; the site's precache has the rest.
        importScripts: ['hearth-sw.js'],
        globPatterns: ['**/*.{js,html}'],
        globIgnores: ['hearth/**', 'hearth-sw.js'],
        navigateFallback: null,
        clientsClaim: true,
        skipWaiting: true,
      },
    }),
  ],
});
`,
  );
  const html = (title: string, script: string) => `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>${title}</title><link rel="icon" href="data:," /></head>
  <body><h1>${title}</h1><script type="module" src="${script}"></script></body>
</html>
`;
  writeFileSync(join(VITE_SITE, 'index.html'), html('Vite site', '/src/main.js'));
  writeFileSync(join(VITE_SITE, 'about.html'), html('About', '/src/about.js'));
  writeFileSync(join(VITE_SITE, 'src/about.js'), `document.title = 'About (loaded)';\n`);
  writeFileSync(
    join(VITE_SITE, 'src/main.js'),
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
  execFileSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build'], {
    cwd: VITE_SITE,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
