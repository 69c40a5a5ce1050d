#!/usr/bin/env node
/**
 * @module
 * hearth-llm's postinstall: where the site that installs it recorded its public folder
 * (`hearth init <dir> --save`), copies this version's files there, so that an upgrade never leaves
 * the site serving files of the version before. Sites that recorded nothing hear nothing, and so
 * does an install that is not the site's own (a one-off `npx`, a global install, run from the
 * site's folder). It never fails the install: a failure is a warning that names the command to
 * run by hand.
 */
import { readFile } from 'node:fs/promises';
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
  // It is that folder whatever was installed: `npx hearth-llm@<old>`, `npm exec --package=<tgz>`
  // or `npm i -g hearth-llm` run there set it too.
  const site = process.env.INIT_CWD;
  if (!site) return;
  // Imported here, not above: a broken copy of the package must end in the warning, not in a
  // failed install.
  const { displayDir, init, PACKAGE_ROOT } = await import('./init.js');
  const { CONFIG_FIELD, installedIn, isInsideProject } = await import('./project.js');
  // Only this site's own copy of hearth-llm copies into it; not one in the npm cache (npx), the
  // global prefix, or hearth-llm's own folder (developing it).
  if (!(await installedIn(PACKAGE_ROOT, await packageName(PACKAGE_ROOT), site))) return;

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
  // A folder outside the project is written only when named on the command line.
  if (!(await isInsideProject(target, site))) {
    throw new Error(
      `"${CONFIG_FIELD}".publicDir in ${join(site, 'package.json')} is ${target}, outside the ` +
        `project (links resolved); the postinstall copies only inside it.`,
    );
  }
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
 * The package's name in its package.json: the name it is installed under.
 * @param {string} packageRoot
 */
async function packageName(packageRoot) {
  try {
    const { name } = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8'));
    return typeof name === 'string' ? name : 'hearth-llm';
  } catch {
    return 'hearth-llm';
  }
}
