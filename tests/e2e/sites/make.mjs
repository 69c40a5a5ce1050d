/**
 * Fixture sites made from the packed `hearth-llm` tarball (the Vite ones in vite-sites.mjs), as a
 * developer makes theirs: `npm i <tgz>` into a project of its own (not a workspace link), `npx
 * hearth init public`, and pages that call `startHearth()`. Made by the e2e global setup, under
 * tests/e2e/.cache/sites/ (once for the runs on every port: they only read them), and by the
 * bench (bench/site.mjs) in a folder of its own: one way for both. Plain JavaScript with JSDoc
 * types, so that the bench (Node, no build) runs it as it is and TypeScript checks it.
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
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeOlderViteSite, makeViteSite, makeWaitingViteSite } from './vite-sites.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Apart per e2e port, so that runs side by side do not share bundles or what a test writes. */
const PORT = process.env.E2E_PORT ?? '4179';
/**
 * Where global-setup writes the browser bundle of the `openai` SDK (helpers.ts names the same
 * file for the tests that inject it).
 */
export const OPENAI_BUNDLE = new URL(`../.cache/openai-${PORT}/openai.js`, import.meta.url);
/**
 * The sites the tests serve, made once for runs on any port (`npm test`'s lanes, side by side,
 * share them: making them costs each about 20 CPU-seconds). The tests only read them.
 */
export const SITES_DIR = join(ROOT, 'tests/e2e/.cache/sites');
/** What a run's tests make from the sites (altered copies): apart per e2e port. */
export const SITES_SCRATCH = join(ROOT, `tests/e2e/.cache/sites-${PORT}`);

/**
 * The folders of the sites made under `dir`.
 * @param {string} dir
 */
export function sitesIn(dir) {
  const plain = join(dir, 'plain');
  const vite = join(dir, 'vite');
  return {
    /** The plain site's project. */
    plain,
    /** Its public folder: what the static server serves. */
    plainPublic: join(plain, 'public'),
    /** The Vite site's project. */
    vite,
    /** Its build for `/repo/`. */
    viteDist: join(vite, 'dist'),
    /** The same site built with an older build of Hearth (`OLD_BUILD`), for upgrades. */
    viteOldDist: join(dir, 'vite-old', 'dist'),
    /**
     * The same site whose worker waits to take over (vite-plugin-pwa's defaults: no
     * `skipWaiting`, no `clientsClaim`), new and older.
     */
    viteWaitsDist: join(dir, 'vite-waits', 'dist'),
    viteWaitsOldDist: join(dir, 'vite-waits-old', 'dist'),
  };
}

const TEST_SITES = sitesIn(SITES_DIR);
/** The plain site's project; its public folder is what the static server serves. */
export const PLAIN_SITE = TEST_SITES.plain;
export const PLAIN_PUBLIC = TEST_SITES.plainPublic;
/** The Vite site's project, built into `dist/` for `/repo/`. */
export const VITE_SITE = TEST_SITES.vite;
export const VITE_DIST = TEST_SITES.viteDist;
export const VITE_OLD_DIST = TEST_SITES.viteOldDist;
export const VITE_WAITS_DIST = TEST_SITES.viteWaitsDist;
export const VITE_WAITS_OLD_DIST = TEST_SITES.viteWaitsOldDist;
/** The build id the older builds of the fixture sites carry. */
export const OLD_BUILD = '0.0.1+old';

/**
 * Runs `npm run package` with a build id of its own in `HEARTH_BUILD` (written beside the sites,
 * `builtAs` reads it: the sites' `hearth.version` must say it), and returns the tarball's path
 * (its last line of output).
 * @param {string} dir the sites' folder, under which the package is staged and packed
 * @returns {string}
 */
export function packTarball(dir = SITES_DIR) {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const build = `${version}+sites${Date.now().toString(36)}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '.build'), build);
  const out = execFileSync('npm', ['run', '--silent', 'package'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, HEARTH_PACKAGE_OUT: join(dir, 'build'), HEARTH_BUILD: build },
  });
  const last = out.trim().split('\n').at(-1);
  if (!last) throw new Error('npm run package printed no tarball');
  return resolve(ROOT, last.trim());
}

/**
 * The build id the sites under `dir` were packed with.
 * @param {string} [dir]
 */
export function builtAs(dir = SITES_DIR) {
  return readFileSync(join(dir, '.build'), 'utf8');
}

/**
 * The newest modification time of the files under `paths` (folders walked).
 * @param {string[]} paths
 * @returns {number}
 */
function newest(paths) {
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

/**
 * Makes the sites again unless they were made after every change to their sources.
 * @param {object} [options]
 * @param {string} [options.dir] where (the e2e tests' folder of this port by default)
 * @param {boolean} [options.vite] the Vite site too (the bench needs only the plain one)
 * @param {string | URL} [options.openaiBundle] the SDK's browser bundle the plain site serves
 */
export function makeSites({ dir = SITES_DIR, vite = true, openaiBundle = OPENAI_BUNDLE } = {}) {
  const stamp = join(dir, '.made');
  withLock(`${dir}.lock`, () => {
    if (existsSync(stamp) && statSync(stamp).mtimeMs > newest(PACKAGE_SOURCES)) return;
    // The stamp bears the time the sources were read, not when the sites were done: a source
    // changed meanwhile makes them again next time.
    const started = new Date();
    const tarball = packTarball(dir);
    const sites = sitesIn(dir);
    makePlainSite(tarball, sites.plain, openaiBundle);
    if (vite) {
      makeViteSite(tarball, sites.vite);
      const build = builtAs(dir);
      makeOlderViteSite(sites.vite, dirname(sites.viteOldDist), build);
      const waits = dirname(sites.viteWaitsDist);
      makeWaitingViteSite(sites.vite, waits);
      makeOlderViteSite(waits, dirname(sites.viteWaitsOldDist), build);
    }
    writeFileSync(stamp, tarball);
    utimesSync(stamp, started, started);
  });
}

/**
 * Runs `work` holding `lock`, a file that names the process holding it: the test runs of two
 * ports that start at once (`npm run test:e2e`'s lanes) make the sites once, the second waiting
 * for the first and then finding them made. A lock whose process is gone (a run killed midway) is
 * taken over.
 * @param {string} lock
 * @param {() => void} work
 */
function withLock(lock, work) {
  mkdirSync(dirname(lock), { recursive: true });
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
    }
    if (!alive(Number(readFileSync(lock, 'utf8')))) rmSync(lock, { force: true });
    else Atomics.wait(pause, 0, 0, 250);
  }
  try {
    work();
  } finally {
    rmSync(lock, { force: true });
  }
}

/**
 * Whether the process `pid` is running (a lock file read while it was being written holds no
 * number yet: its writer is alive).
 * @param {number} pid
 */
function alive(pid) {
  if (!pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/**
 * A page of the plain site: the SDK as a script, then Hearth started from the copied loader.
 * @param {string} title
 * @param {string} loader
 * @param {string} sdk
 */
function page(title, loader, sdk) {
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
      const query = new URLSearchParams(location.search);
      // For the bench: when startHearth() was called (performance.now(), ms since navigation).
      window.hearthT0 = performance.now();
      // Kept for the tests: the promise, then its value or its error.
      window.hearthStarted = startHearth({ isolate: query.has('isolate') }).then(
        (hearth) => (window.hearth = hearth),
        (error) => {
          window.hearthError = { name: error.name, code: error.code, message: error.message };
          throw error;
        },
      );
      // ?bench (bench/site.mjs): asks hearth/echo through the SDK as soon as Hearth has started,
      // from the page itself, so that no round trip of the driver's is timed.
      if (query.has('bench')) {
        window.hearthBench = window.hearthStarted.then(async (hearth) => {
          const startedAt = performance.now();
          const client = new OpenAI({
            baseURL: hearth.baseURL,
            apiKey: 'sk-site',
            dangerouslyAllowBrowser: true,
          });
          const reply = await client.chat.completions.create({
            model: 'hearth/echo',
            messages: [{ role: 'user', content: 'first reply' }],
          });
          const repliedAt = performance.now();
          const content = reply.choices[0].message.content;
          return { t0: window.hearthT0, startedAt, repliedAt, content };
        });
      }
    </script>
  </body>
</html>
`;
}

/**
 * @param {string} cwd
 * @param {string[]} args
 */
export function npm(cwd, args) {
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * Makes the plain site from `tarball`.
 * @param {string} tarball
 * @param {string} site the site's project folder
 * @param {string | URL} openaiBundle the SDK's browser bundle, served as `openai.js`
 */
export function makePlainSite(tarball, site = PLAIN_SITE, openaiBundle = OPENAI_BUNDLE) {
  const publicDir = join(site, 'public');
  rmSync(site, { recursive: true, force: true });
  mkdirSync(join(publicDir, 'docs'), { recursive: true });
  writeFileSync(
    join(site, 'package.json'),
    `${JSON.stringify({ name: 'plain-site', private: true }, null, 2)}\n`,
  );
  npm(site, ['install', tarball]);
  execFileSync('npx', ['--no-install', 'hearth', 'init', 'public'], {
    cwd: site,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  cpSync(openaiBundle, join(publicDir, 'openai.js'));
  // An image the tests load from another origin (localhost, not 127.0.0.1), served without CORP.
  writeFileSync(
    join(publicDir, 'pixel.svg'),
    '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1"/></svg>\n',
  );
  writeFileSync(join(publicDir, 'index.html'), page('Home', './hearth/hearth.js', 'openai.js'));
  writeFileSync(
    join(publicDir, 'docs', 'index.html'),
    page('Docs', '../hearth/hearth.js', '../openai.js'),
  );
}

/**
 * Makes the Hearth files under `dir` an older build: every script that names build `from` names
 * `to` instead — the bytes `HEARTH_BUILD=<to> npm run package` writes (the build id is the only
 * difference), without a second package build.
 * @param {string} dir
 * @param {string} from
 * @param {string} to
 */
export function renameBuild(dir, from, to) {
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!name.endsWith('.js')) continue;
    const file = join(dir, name);
    const text = readFileSync(file, 'utf8');
    if (text.includes(from)) writeFileSync(file, text.replaceAll(from, to));
  }
}
