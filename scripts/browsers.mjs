// Finds the browsers the tests drive — Chromium and Firefox — and, asked to, gets the missing
// ones: BROWSER_PATH from the environment, then the system's, then Playwright's own; failing all
// three, Playwright's download (where the network allows), then the system's package manager
// (where this user may run it). Only when all of that fails does it stop, saying what to run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * @typedef {'chromium' | 'firefox'} BrowserName
 * @typedef {object} Found
 * @property {string} path the binary
 * @property {'env' | 'system' | 'playwright'} source where it was found: Playwright's own Firefox
 *   is a patched build driven by its own protocol; a stock Firefox is driven over WebDriver BiDi
 */

/**
 * Each browser: its variable, where systems put it, its Debian package and name; for Chromium also
 * where its headless shell is (Debian's `chromium-headless-shell`, which `.ci/run` installs): the
 * same engine without the desktop browser around it, as Playwright itself runs headless tests.
 * The browser suites take about a sixth less CPU in it, and pass in either.
 * @type {Record<BrowserName, { env: string, system: string[], apt: string, label: string, headless?: string[] }>}
 */
const BROWSERS = {
  chromium: {
    env: 'CHROMIUM_PATH',
    headless: ['/usr/bin/chromium-headless-shell'],
    system: [
      '/usr/bin/chromium',
      '/usr/bin/chromium-browser',
      '/usr/bin/google-chrome',
      '/usr/bin/google-chrome-stable',
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    ],
    apt: 'chromium',
    label: 'Chromium',
  },
  firefox: {
    env: 'FIREFOX_PATH',
    system: [
      '/usr/bin/firefox-esr',
      '/usr/bin/firefox',
      '/Applications/Firefox.app/Contents/MacOS/firefox',
    ],
    apt: 'firefox-esr',
    label: 'Firefox',
  },
};

/**
 * Flags known to work headless on machines without a GPU or the internet (notes/toolchain.md):
 * without the background-networking ones, Chromium's attempts to reach Google flood a closed
 * network.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/**
 * What to run when a browser cannot be found.
 * @param {BrowserName} name
 */
export function browserHelp(name) {
  const { env, apt, label } = BROWSERS[name];
  return `No ${label} was found for the browser tests. Either:
  - install one: on Debian or Ubuntu, apt-get install -y ${apt}
  - point ${env} at a ${label} binary
  - or, where the network allows it, npx playwright install ${name}`;
}

/**
 * Where the browser is, or undefined. A BROWSER_PATH that does not exist is an error, not a
 * reason to look elsewhere.
 * @param {BrowserName} name
 * @param {{ headless?: boolean }} [options] `headless`: Chromium's headless shell where the system
 *   has it (for the browser suites, which run headless), else the browser
 * @returns {Promise<Found | undefined>}
 */
export async function findBrowser(name, { headless = false } = {}) {
  const { env, system, headless: shell } = BROWSERS[name];
  const fromEnv = process.env[env];
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`${env} is set to ${fromEnv}, which does not exist.`);
    return { path: fromEnv, source: 'env' };
  }
  const onSystem = [...(headless && shell ? shell : []), ...system].find((p) => existsSync(p));
  if (onSystem) return { path: onSystem, source: 'system' };
  try {
    const playwright = await import('playwright-core');
    const own = playwright[name].executablePath();
    if (own && existsSync(own)) return { path: own, source: 'playwright' };
  } catch {
    // playwright-core missing or without this browser: nothing more to try.
  }
  return undefined;
}

/** The path of a Chromium binary, or undefined (for the bench and scripts, which need no more). */
export async function findChromium() {
  return (await findBrowser('chromium'))?.path;
}

/**
 * Runs a command, its output shown; true when it succeeded.
 * @param {string} command
 * @param {string[]} args
 * @param {number} timeoutMs
 */
function run(command, args, timeoutMs) {
  console.error(`$ ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', timeout: timeoutMs });
  return result.status === 0;
}

/** How this user may run apt-get: directly (root), through sudo without a password, or not. */
function aptGet() {
  if (spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) return undefined;
  if (process.getuid?.() === 0) return ['apt-get'];
  if (spawnSync('sudo', ['-n', 'true']).status === 0) return ['sudo', '-n', 'apt-get'];
  return undefined;
}

/**
 * Those of `names` that cannot be found.
 * @param {BrowserName[]} names
 */
async function absent(names) {
  /** @type {BrowserName[]} */
  const missing = [];
  for (const name of names) if (!(await findBrowser(name))) missing.push(name);
  return missing;
}

/**
 * Gets the browsers that are missing: Playwright's download, then apt-get.
 * @param {BrowserName[]} names
 * @returns {Promise<BrowserName[]>} those still missing
 */
export async function installBrowsers(names) {
  let missing = await absent(names);
  if (missing.length === 0) return [];
  console.error(`Getting ${missing.join(' and ')} for the browser tests.`);
  // Playwright's CDN is unreachable on many closed networks: give it two minutes, not for ever.
  run('npx', ['--no-install', 'playwright', 'install', ...missing], 120_000);
  missing = await absent(missing);
  const apt = aptGet();
  if (missing.length > 0 && apt) {
    const [command = 'apt-get', ...prefix] = apt;
    const packages = missing.map((name) => BROWSERS[name].apt);
    // Their recommendations (printing, codecs, udev…) headless tests never use: 27 packages, not 149.
    const install = () =>
      run(
        command,
        [...prefix, 'install', '-y', '-qq', '--no-install-recommends', ...packages],
        600_000,
      );
    if (!install() && run(command, [...prefix, 'update', '-qq'], 300_000)) install();
  }
  return absent(missing);
}

// `node scripts/browsers.mjs [--install] [chromium] [firefox]`: print where each browser is, or
// (with --install) get the missing ones; fail with what to run when one cannot be had.
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  /** @type {BrowserName[]} */
  const names = [];
  for (const a of args) if (a === 'chromium' || a === 'firefox') names.push(a);
  const wanted = names.length > 0 ? names : /** @type {BrowserName[]} */ (['chromium', 'firefox']);
  const left = args.includes('--install') ? await installBrowsers(wanted) : await absent(wanted);
  for (const name of wanted) {
    const found = await findBrowser(name, { headless: true });
    if (found) console.log(`${name}: ${found.path}`);
  }
  if (left.length > 0) {
    for (const name of left) console.error(browserHelp(name));
    process.exit(1);
  }
}
