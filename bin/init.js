/**
 * @module
 * `hearth init`: copies Hearth's service worker and its `hearth/` folder from the package into a
 * site's public folder, and keeps them matching the installed version. `hearth.js` (the command)
 * and `postinstall.js` (the re-copy on upgrade) both call it.
 */
import { lstat, mkdir, open, readFile, readdir, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDirectory, isFile, missing, replaceFile } from './write.js';

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
 * @property {boolean} [force] Take over a non-empty `hearth/` that has no marker, and replace
 *   whatever is at `hearth-sw.js` that is not Hearth's.
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
 * `hearth-sw.js` and `hearth/` are written, files are rewritten only where their bytes differ
 * (replaced, never written through: see write.js), and files of `hearth/` that the package no
 * longer has are removed. A `hearth/` or `hearth-sw.js` that is not Hearth's is refused unless
 * `force`, before anything is written.
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
  if (!force) await checkWorker(join(target, SW_FILE));

  const result = { version, first, files: 0, bytes: 0, written: 0, updated: 0, unchanged: 0 };
  await mkdir(targetHearth, { recursive: true });
  // The marker goes first: a run cut short leaves a folder the next run may finish, not a
  // folder it would refuse as someone else's.
  await syncFile(Buffer.from(`${JSON.stringify({ version })}\n`), join(targetHearth, MARKER_FILE));

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
 * Whether `dir` may be written: missing, empty, or marked as written by `hearth init` (the
 * marker a file of its own, never a link). Returns whether this is the first init into it.
 * @param {string} dir
 * @param {boolean} force
 */
async function checkOwnership(dir, force) {
  const found = await lstat(dir).catch(missing);
  if (!found) return true;
  if (!found.isDirectory()) {
    throw new InitError(`${dir} exists and is not a folder; move it away, then run this again.`);
  }
  const markerPath = join(dir, MARKER_FILE);
  const marker = await lstat(markerPath).catch(missing);
  if (marker?.isFile()) return false;
  const entries = await readdir(dir);
  if (entries.length === 0 || force) return true;
  throw new InitError(
    marker
      ? `${markerPath} is ${kindOf(marker)}, not the file hearth init writes, so ${dir} is not ` +
          `taken as Hearth's. If that folder is Hearth's, delete ${MARKER_FILE} and run again ` +
          `with --force, which removes the files in it that are not Hearth's (move yours out first).`
      : `${dir} already holds files that hearth init did not write. Hearth needs that folder as its ` +
          `own (it removes what it did not put there): move those files away, or run again with --force.`,
  );
}

/** The build banner that starts each of Hearth's scripts (src/bridge/build-banner.ts). */
const BANNER = /^\/\*! hearth-llm build \S+ \*\//;

/**
 * Refuses a `hearth-sw.js` that is not Hearth's: anything but a file whose first line is
 * Hearth's build banner (a folder, a link, the site's own worker).
 * @param {string} file
 */
async function checkWorker(file) {
  const found = await lstat(file).catch(missing);
  if (!found) return;
  const what = found.isFile() ? await isHearthScript(file) : kindOf(found);
  if (what === true) return;
  throw new InitError(
    `${file} is ${what || "a file that is not Hearth's (its first line names no hearth-llm build)"}, ` +
      `where Hearth's service worker goes: Hearth needs that name. Move it away (rename your own ` +
      `worker), or run again with --force to replace it${found.isDirectory() ? ' and all it holds' : ''}.`,
  );
}

/**
 * Whether the file at `file` starts with Hearth's build banner.
 * @param {string} file
 */
async function isHearthScript(file) {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(256), 0, 256, 0);
    return BANNER.test(buffer.subarray(0, bytesRead).toString('latin1'));
  } finally {
    await handle.close();
  }
}

/**
 * What a thing that is not a plain file is, for a message.
 * @param {import('node:fs').Stats} found
 */
function kindOf(found) {
  if (found.isFile()) return 'a file';
  if (found.isDirectory()) return 'a folder';
  return found.isSymbolicLink() ? 'a link' : 'a special file';
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
 * Makes `to` a file holding `from` (a file's path, or bytes), writing only if its bytes differ.
 * @param {string | Buffer} from
 * @param {string} to
 * @returns {Promise<'written' | 'updated' | 'unchanged'>}
 */
async function syncFile(from, to) {
  const existing = await lstat(to).catch(missing);
  if (existing?.isFile()) {
    const size = typeof from === 'string' ? (await stat(from)).size : from.length;
    // Sizes first: most changed files differ in size, and reading both costs twice the bytes.
    const same =
      existing.size === size &&
      (typeof from === 'string' ? await readFile(from) : from).equals(await readFile(to));
    if (same) return 'unchanged';
  } else if (existing?.isDirectory()) {
    // A folder where the file goes: left by an older layout of hearth/, or taken with --force.
    await rm(to, { recursive: true, force: true });
  }
  // A link there is replaced by the rename, never written through.
  await replaceFile(to, from);
  return existing ? 'updated' : 'written';
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
