// Finds a Chromium for the browser tests: CHROMIUM_PATH, then the system's, then Playwright's.
import { existsSync } from 'node:fs';

const SYSTEM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

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

export const NO_CHROMIUM_HELP = `No Chromium was found for the browser tests. Either:
  - install one: on Debian or Ubuntu, apt-get install -y chromium
  - point CHROMIUM_PATH at a Chromium or Chrome binary
  - or, where the network allows it, npx playwright install chromium`;

/**
 * The path of a Chromium binary, or undefined. A CHROMIUM_PATH that does not exist is an error,
 * not a reason to look elsewhere.
 * @returns {Promise<string | undefined>}
 */
export async function findChromium() {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv))
      throw new Error(`CHROMIUM_PATH is set to ${fromEnv}, which does not exist.`);
    return fromEnv;
  }
  const system = SYSTEM_PATHS.find((p) => existsSync(p));
  if (system) return system;
  try {
    const { chromium } = await import('playwright-core');
    const own = chromium.executablePath();
    if (own && existsSync(own)) return own;
  } catch {
    // playwright-core missing or without a browser: nothing more to try.
  }
  return undefined;
}

// Run directly (`node scripts/find-chromium.mjs`): print the path, or the help and fail.
if (import.meta.url === `file://${process.argv[1]}`) {
  const found = await findChromium();
  if (found) console.log(found);
  else {
    console.error(NO_CHROMIUM_HELP);
    process.exit(1);
  }
}
