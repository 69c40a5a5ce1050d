/**
 * @module
 * The relay's config file: its API key, made at first start and kept from then on, so that the
 * callers configured with it go on working across restarts. Only the user may read the file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** @typedef {{ key: string }} RelayConfig */

/** Keys look like the app's issued keys: `hk-` and 32 base64url characters. */
const KEY_PATTERN = /^hk-[A-Za-z0-9_-]{32}$/;

/**
 * Where the config lives: `$HEARTH_RELAY_CONFIG`, or `hearth/relay.json` in the user's config
 * directory (`$XDG_CONFIG_HOME`, `%APPDATA%` on Windows, `~/.config` otherwise).
 * @param {NodeJS.ProcessEnv} env
 */
export function defaultConfigFile(env = process.env) {
  if (env.HEARTH_RELAY_CONFIG) return env.HEARTH_RELAY_CONFIG;
  const base =
    env.XDG_CONFIG_HOME ||
    (process.platform === 'win32' && env.APPDATA) ||
    join(homedir(), '.config');
  return join(base, 'hearth', 'relay.json');
}

/** A new key, as random as the app's own issued keys. */
export function newKey() {
  return `hk-${randomBytes(24).toString('base64url')}`;
}

/**
 * A short fingerprint of `key` for people to compare, never the key itself: the first 8 bytes of
 * its SHA-256 as four groups of hex (`3f9a-c21e-77b0-d4e5`). The relay prints it beside its key
 * and puts it in its pairing link; the tab's confirmation shows the one of the link, and the tab
 * refuses a relay whose key does not have it (src/relay-tab/relay-keys.ts makes it the same way).
 * @param {string} key
 */
export function keyFingerprint(key) {
  const hex = createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 16);
  return /** @type {string[]} */ (hex.match(/.{4}/g)).join('-');
}

/**
 * Reads the config at `file`, making it (and its directory) on first start. A file that exists
 * but cannot be used is an error, never silently replaced: callers hold the key it has.
 * @param {string} file
 * @returns {Promise<RelayConfig>}
 */
export async function loadConfig(file) {
  let text;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'ENOENT') throw error;
    const config = { key: newKey() };
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    // `wx`: two relays starting at once must not give out two different keys.
    await writeFile(file, `${JSON.stringify(config, null, 2)}\n`, {
      mode: 0o600,
      flag: 'wx',
    }).catch(async (/** @type {NodeJS.ErrnoException} */ raced) => {
      if (raced.code !== 'EEXIST') throw raced;
    });
    return loadConfig(file);
  }
  /** @type {unknown} */
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not JSON; fix it, or remove it to make a new key.`);
  }
  const key = /** @type {{ key?: unknown }} */ (parsed)?.key;
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
    throw new Error(`${file} holds no valid "key" (hk-…); fix it, or remove it to make a new key.`);
  }
  // A file copied in by hand may be readable by others: it holds a secret.
  if (process.platform !== 'win32') await chmod(file, 0o600);
  return { key };
}
