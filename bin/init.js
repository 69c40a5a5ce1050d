/**
 * @module
 * `hearth init`: copies Hearth's service worker and its `hearth/` folder from the package into a
 * site's public folder, and keeps them matching the installed version. `hearth.js` (the command)
 * and `postinstall.js` (the re-copy on upgrade) both call it.
 */
import { copyFile, lstat, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's root folder: this file is `<root>/bin/init.js`. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The service worker's file name, in `files/` and in the site's public folder. */
export const SW_FILE = 'hearth-sw.js';

/** Hearth's own folder, in `files/` and in the site's public folder. */
export const HEARTH_DIR = 'hearth';

/** The marker that says `hearth/` was written by `hearth init`, and by which version. */
export const MARKER_FILE = '.hearth-llm';

/** llama.cpp's compatibility build, under `hearth/`: the part `--no-compat` leaves out. */
export const COMPAT_DIR = 'wllama-compat';

/** A failure the user can act on (exit code 1); its message says what to do. */
export class InitError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'InitError';
  }
}

/**
 * @typedef {object} InitOptions
 * @property {string} publicDir The site's public folder (made if missing).
 * @property {boolean} [compat] Whether to copy `hearth/wllama-compat/` (default true).
 * @property {boolean} [force] Take over a non-empty `hearth/` that has no marker.
 * @property {string} [packageRoot] The package to copy from (default: this file's package).
 */

/**
 * @typedef {object} InitResult
 * @property {string} version The package version now in the marker.
 * @property {boolean} first Whether `hearth/` had no marker before this run.
 * @property {number} files Files now in `hearth/` (the marker not counted).
 * @property {number} bytes Their total size, in bytes.
 * @property {number} written Files that did not exist (`hearth-sw.js` included).
 * @property {number} updated Files whose bytes changed.
 * @property {number} unchanged Files left as they were, mtimes included.
 * @property {number} removed Files removed from `hearth/`: the new version no longer has them.
 */

/**
 * The package's version, from its package.json.
 * @param {string} [packageRoot]
 */
export async function packageVersion(packageRoot = PACKAGE_ROOT) {
  const file = join(packageRoot, 'package.json');
  /** @type {unknown} */
  let parsed;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new InitError(`cannot read ${file} (${errorMessage(error)}); reinstall hearth-llm.`);
  }
  const version = /** @type {{ version?: unknown }} */ (parsed)?.version;
  if (typeof version !== 'string') {
    throw new InitError(`${file} has no version; reinstall hearth-llm.`);
  }
  return version;
}

/**
 * Copies Hearth's files into `publicDir` and makes `publicDir/hearth/` match the package: only
 * `hearth-sw.js` and `hearth/` are written, files are rewritten only where their bytes differ,
 * and files of `hearth/` that the package no longer has are removed.
 * @param {InitOptions} options
 * @returns {Promise<InitResult>}
 */
export async function init({
  publicDir,
  compat = true,
  force = false,
  packageRoot = PACKAGE_ROOT,
}) {
  const version = await packageVersion(packageRoot);
  const source = join(packageRoot, 'files');
  const sourceSw = join(source, SW_FILE);
  const sourceHearth = join(source, HEARTH_DIR);
  // Read the whole package first: a broken install must fail before anything is written.
  if (!(await isFile(sourceSw)) || !(await isDirectory(sourceHearth))) {
    throw new InitError(
      `this copy of hearth-llm has no ${join('files', SW_FILE)} or ${join('files', HEARTH_DIR)}${sep} (${packageRoot}); reinstall it.`,
    );
  }
  /** @type {Map<string, 'file' | 'dir'>} */
  const wanted = new Map();
  await listTree(sourceHearth, '', wanted, (path) => compat || !isUnder(path, COMPAT_DIR));

  const target = resolve(publicDir);
  const targetHearth = join(target, HEARTH_DIR);
  const first = await checkOwnership(targetHearth, force);

  const result = { version, first, files: 0, bytes: 0, written: 0, updated: 0, unchanged: 0 };
  await mkdir(targetHearth, { recursive: true });
  // The marker goes first: a run cut short leaves a folder the next run may finish, not a
  // folder it would refuse as someone else's.
  await syncBytes(Buffer.from(`${JSON.stringify({ version })}\n`), join(targetHearth, MARKER_FILE));

  for (const [path, kind] of wanted) {
    const to = join(targetHearth, path);
    if (kind === 'dir') {
      await makeDirectory(to);
      continue;
    }
    const from = join(sourceHearth, path);
    result[await syncFile(from, to)]++;
    result.files++;
    result.bytes += (await stat(from)).size;
  }
  const removed = await removeExtra(targetHearth, wanted);
  // The worker last: a page that loads it mid-copy should find the files it asks for.
  result[await syncFile(sourceSw, join(target, SW_FILE))]++;
  return { ...result, removed };
}

/**
 * Whether `dir` may be written: missing, empty, or marked as written by `hearth init`. Returns
 * whether this is the first init into it (no marker yet).
 * @param {string} dir
 * @param {boolean} force
 */
async function checkOwnership(dir, force) {
  const found = await lstat(dir).catch(missing);
  if (!found) return true;
  if (!found.isDirectory()) {
    throw new InitError(`${dir} exists and is not a folder; move it away, then run this again.`);
  }
  if (await isFile(join(dir, MARKER_FILE))) return false;
  const entries = await readdir(dir);
  if (entries.length > 0 && !force) {
    throw new InitError(
      `${dir} already holds files that hearth init did not write. Hearth needs that folder as its own ` +
        `(it removes what it did not put there): move those files away, or run again with --force.`,
    );
  }
  return true;
}

/**
 * Collects the files and folders under `root` into `into`, by their paths relative to `root`,
 * each folder before what it holds (the order they must be made in).
 * @param {string} root
 * @param {string} path
 * @param {Map<string, 'file' | 'dir'>} into
 * @param {(path: string) => boolean} keep
 */
async function listTree(root, path, into, keep) {
  const entries = await readdir(join(root, path), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const child = path ? join(path, entry.name) : entry.name;
    if (!keep(child)) continue;
    // A package may hold links where npm kept them; what counts is what they point at.
    const isDir =
      entry.isDirectory() || (entry.isSymbolicLink() && (await isDirectory(join(root, child))));
    into.set(child, isDir ? 'dir' : 'file');
    if (isDir) await listTree(root, child, into, keep);
  }
}

/**
 * Removes what `dir` holds beyond `wanted` and the marker; returns how many files went.
 * @param {string} dir
 * @param {Map<string, 'file' | 'dir'>} wanted
 * @param {string} [path]
 * @returns {Promise<number>}
 */
async function removeExtra(dir, wanted, path = '') {
  let removed = 0;
  for (const entry of await readdir(join(dir, path), { withFileTypes: true })) {
    const child = path ? join(path, entry.name) : entry.name;
    if (child === MARKER_FILE) continue;
    const kind = wanted.get(child);
    if (kind === 'dir' && entry.isDirectory()) {
      removed += await removeExtra(dir, wanted, child);
    } else if (kind === undefined) {
      removed += entry.isDirectory() ? await countFiles(join(dir, child)) : 1;
      await rm(join(dir, child), { recursive: true, force: true });
    }
  }
  return removed;
}

/**
 * Makes `to` a copy of `from`, writing only if its bytes differ.
 * @param {string} from
 * @param {string} to
 * @returns {Promise<'written' | 'updated' | 'unchanged'>}
 */
async function syncFile(from, to) {
  const existing = await lstat(to).catch(missing);
  if (existing?.isFile()) {
    const { size } = await stat(from);
    // Sizes first: most changed files differ in size, and reading both costs twice the bytes.
    if (existing.size === size && (await readFile(from)).equals(await readFile(to))) {
      return 'unchanged';
    }
    await copyFile(from, to);
    return 'updated';
  }
  // A folder or a link where the file goes was left by an older layout of hearth/.
  if (existing) await rm(to, { recursive: true, force: true });
  await copyFile(from, to);
  return existing ? 'updated' : 'written';
}

/**
 * Writes `bytes` to `to` unless it holds them already.
 * @param {Buffer} bytes
 * @param {string} to
 */
async function syncBytes(bytes, to) {
  const existing = await readFile(to).catch(missing);
  if (!existing?.equals(bytes)) await writeFile(to, bytes);
}

/**
 * Makes `to` a folder, replacing a file an older layout left there.
 * @param {string} to
 */
async function makeDirectory(to) {
  const existing = await lstat(to).catch(missing);
  if (existing?.isDirectory()) return;
  if (existing) await rm(to, { force: true });
  await mkdir(to);
}

/**
 * How many files `dir` holds, at any depth.
 * @param {string} dir
 * @returns {Promise<number>}
 */
async function countFiles(dir) {
  let count = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    count += entry.isDirectory() ? await countFiles(join(dir, entry.name)) : 1;
  }
  return count;
}

/**
 * Whether `path` is `dir` or inside it (both relative to the same folder).
 * @param {string} path
 * @param {string} dir
 */
function isUnder(path, dir) {
  return path === dir || path.startsWith(dir + sep);
}

/** @param {string} path */
async function isFile(path) {
  return (await stat(path).catch(missing))?.isFile() ?? false;
}

/** @param {string} path */
async function isDirectory(path) {
  return (await stat(path).catch(missing))?.isDirectory() ?? false;
}

/**
 * A `catch` handler that turns "no such file" into `undefined` and rethrows the rest.
 * @param {unknown} error
 * @returns {undefined}
 */
function missing(error) {
  if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT') return undefined;
  throw error;
}

/**
 * The message of a thrown value.
 * @param {unknown} error
 */
export function errorMessage(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * How a path is named to the user: relative to `cwd` where it is inside it, absolute elsewhere.
 * @param {string} path
 * @param {string} [cwd]
 */
export function displayPath(path, cwd = process.cwd()) {
  const absolute = resolve(cwd, path);
  const shown = relative(cwd, absolute);
  if (shown === '') return '.';
  const outside = shown === '..' || shown.startsWith(`..${sep}`) || isAbsolute(shown);
  return outside ? absolute : shown;
}

/**
 * A folder as `displayPath` names it, with a trailing separator so that `public/` reads as one.
 * @param {string} dir
 * @param {string} [cwd]
 */
export function displayDir(dir, cwd = process.cwd()) {
  return displayPath(dir, cwd) + sep;
}

/**
 * A size the way people read it: `31.2 MB`, `812.0 kB`, `96 B`.
 * @param {number} bytes
 */
export function formatBytes(bytes) {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

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
