#!/usr/bin/env node
/**
 * @module
 * hearth-llm's postinstall: where the site that installs it recorded its public folder
 * (`hearth init <dir> --save`), copies this version's files there, so that an upgrade never leaves
 * the site serving files of the version before. Sites that recorded nothing hear nothing. It never
 * fails the install: a failure is a warning that names the command to run by hand.
 */
import { readFile, realpath } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** What to tell the user when the copy fails: the command that does it by hand. */
let byHand = 'npx hearth init <public-dir>';

try {
  await main();
} catch (error) {
  console.warn(
    `hearth-llm: could not update Hearth's files: ${error instanceof Error ? error.message : String(error)}\n` +
      `hearth-llm: run it by hand: ${byHand}`,
  );
}

async function main() {
  // npm and pnpm set INIT_CWD to the folder the install ran in: the site's, not this package's.
  const site = process.env.INIT_CWD;
  if (!site) return;
  // Imported here, not above: a broken copy of the package must end in the warning, not in a
  // failed install.
  const { CONFIG_FIELD, displayDir, init, PACKAGE_ROOT } = await import('./init.js');
  // `npm install` in hearth-llm's own folder (developing it) has no site to copy into.
  if ((await realpathOrSelf(site)) === (await realpathOrSelf(PACKAGE_ROOT))) return;

  let text;
  try {
    text = await readFile(join(site, 'package.json'), 'utf8');
  } catch {
    return;
  }
  /** @type {unknown} */
  let manifest;
  try {
    manifest = JSON.parse(text);
  } catch {
    // npm has said so already: it could not install from it otherwise.
    return;
  }
  const config = /** @type {Record<string, unknown> | null} */ (manifest)?.[CONFIG_FIELD];
  if (config === undefined) return;
  const { publicDir, compat } = /** @type {{ publicDir?: unknown, compat?: unknown }} */ (
    config ?? {}
  );
  if (typeof publicDir !== 'string' || publicDir === '') {
    throw new Error(
      `"${CONFIG_FIELD}".publicDir in ${join(site, 'package.json')} names no folder.`,
    );
  }
  const shell = /[\s"'$`\\]/.test(publicDir) ? JSON.stringify(publicDir) : publicDir;
  byHand = `npx hearth init ${shell}${compat === false ? ' --no-compat' : ''}`;

  const target = resolve(site, publicDir);
  const result = await init({ publicDir: target, compat: compat !== false });
  const shown = displayDir(target, site);
  const changes = [
    result.written && `${result.written} written`,
    result.updated && `${result.updated} updated`,
    result.removed && `${result.removed} removed`,
  ].filter(Boolean);
  console.log(
    changes.length > 0
      ? `hearth-llm: updated Hearth's files in ${shown} to ${result.version} (${changes.join(', ')}).`
      : `hearth-llm: Hearth's files in ${shown} are up to date (${result.version}).`,
  );
}

/**
 * `path` with its links resolved, or as given where it cannot be.
 * @param {string} path
 */
async function realpathOrSelf(path) {
  return realpath(path).catch(() => path);
}
