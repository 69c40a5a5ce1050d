/**
 * @module
 * The site's project, as `hearth init --save` and the postinstall see it: its package.json's
 * `"hearth-llm"` field, whether this copy of the package is installed in it, and whether a folder
 * is inside it once links are resolved.
 */
import { lstat, readFile, realpath, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errorMessage, InitError } from './init.js';
import { isFile, missing } from './write.js';

/** The package.json's fields `hearth init --save` writes and postinstall reads. */
export const CONFIG_FIELD = 'hearth-llm';

/**
 * The nearest package.json from `cwd` upward, or undefined when there is none.
 * @param {string} cwd
 * @returns {Promise<string | undefined>}
 */
export async function findPackageJson(cwd) {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (await isFile(file)) return file;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Records `publicDir` in `packageJson`'s `"hearth-llm"` field, keeping the rest of the file,
 * its indentation, its line endings and its final newline. Returns whether the file changed.
 * @param {string} packageJson
 * @param {string} publicDir
 * @param {boolean} compat
 */
export async function saveConfig(packageJson, publicDir, compat) {
  const text = await readFile(packageJson, 'utf8');
  /** @type {unknown} */
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InitError(
      `${packageJson} is not JSON (${errorMessage(error)}); fix it, then run this again.`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InitError(`${packageJson} holds no JSON object; fix it, then run this again.`);
  }
  const manifest = /** @type {Record<string, unknown>} */ (parsed);
  const previous = manifest[CONFIG_FIELD];
  /** @type {Record<string, unknown>} */
  const config = typeof previous === 'object' && previous !== null ? { ...previous } : {};
  // Forward slashes on every platform: the file is shared between machines.
  config.publicDir = relative(dirname(packageJson), resolve(publicDir)).split(sep).join('/') || '.';
  if (compat) delete config.compat;
  else config.compat = false;
  manifest[CONFIG_FIELD] = config;

  // A file kept on one line stays on one line.
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? (text.trim().includes('\n') ? '  ' : '');
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  let json = JSON.stringify(manifest, null, indent).replace(/\n/g, newline);
  if (/\r?\n$/.test(text)) json += newline;
  if (json === text) return false;
  await writeFile(packageJson, json);
  return true;
}

/**
 * Whether the package at `packageRoot`, named `name`, is installed in the project at `project`:
 * under its node_modules/ (npm's, pnpm's `.pnpm/` and npm's linked `.store/` included) or linked
 * there by name (`npm install <folder>`, `pnpm link`), or so under the root of the workspace the
 * project is in. A one-off `npx`/`npm exec` (the npm cache's `_npx/`) and a global install are
 * not, whatever folder they were run from.
 * @param {string} packageRoot
 * @param {string} name
 * @param {string} project
 */
export async function installedIn(packageRoot, name, project) {
  const self = await realpathOrSelf(packageRoot);
  for (const root of await dependencyRoots(await realpathOrSelf(project))) {
    const modules = await realpathOrSelf(join(root, 'node_modules'));
    if ((await realpathOrSelf(join(modules, name))) === self) return true;
    const path = relative(modules, self);
    if (isBelow(path) && !path.split(sep).includes('_npx')) return true;
  }
  return false;
}

/**
 * Where `project`'s dependencies may be installed: the project, and the nearest workspace root
 * above it (a package.json with `workspaces`, or a pnpm-workspace.yaml).
 * @param {string} project
 */
async function dependencyRoots(project) {
  for (let dir = dirname(project); ; dir = dirname(dir)) {
    if (await isFile(join(dir, 'pnpm-workspace.yaml'))) return [project, dir];
    const manifest = await readFile(join(dir, 'package.json'), 'utf8').catch(() => undefined);
    if (manifest !== undefined && hasWorkspaces(manifest)) return [project, dir];
    if (dirname(dir) === dir) return [project];
  }
}

/** @param {string} text */
function hasWorkspaces(text) {
  try {
    return /** @type {{ workspaces?: unknown } | null} */ (JSON.parse(text))?.workspaces != null;
  } catch {
    return false;
  }
}

/**
 * Whether `path` is `project` or inside it once the links of its existing part are resolved;
 * false where that cannot be told (a link that leads nowhere).
 * @param {string} path
 * @param {string} project
 */
export async function isInsideProject(path, project) {
  /** @type {string[]} */
  const rest = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    const real = await realpath(at).catch(missing);
    if (real !== undefined) {
      const inside = relative(await realpathOrSelf(project), join(real, ...rest.reverse()));
      return inside === '' || isBelow(inside);
    }
    // A dangling link: where it would lead is not known.
    if (await lstat(at).catch(missing)) return false;
    if (dirname(at) === at) return false;
    rest.push(basename(at));
  }
}

/**
 * Whether a path `relative` gave leads below its base.
 * @param {string} path
 */
function isBelow(path) {
  return path !== '' && path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path);
}

/**
 * `path` with its links resolved, or as given where it cannot be.
 * @param {string} path
 */
export async function realpathOrSelf(path) {
  return realpath(path).catch(() => path);
}
