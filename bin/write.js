/**
 * @module
 * How `hearth init` writes into a site's folder: never through what sits at a name. Each file is
 * written whole to a new temporary file beside it and renamed over the name, so a symbolic link
 * there is replaced, not followed, and a hard link's other names keep their bytes; a run cut
 * short leaves the old file or the new one, never half of one.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Makes `to` a new file holding `from` (a file's path, or bytes): written to a temporary file in
 * `to`'s folder, then renamed over `to`. `to` must not be a folder.
 * @param {string} to
 * @param {string | Buffer} from
 */
export async function replaceFile(to, from) {
  // A name nothing else has: made with O_EXCL, so even a link planted at it is never followed.
  const temp = join(dirname(to), `.${basename(to)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    if (typeof from === 'string') await copyFile(from, temp, constants.COPYFILE_EXCL);
    else await writeFile(temp, from, { flag: 'wx' });
    await rename(temp, to);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** @param {string} path */
export async function isFile(path) {
  return (await stat(path).catch(missing))?.isFile() ?? false;
}

/** @param {string} path */
export async function isDirectory(path) {
  return (await stat(path).catch(missing))?.isDirectory() ?? false;
}

/**
 * A `catch` handler that turns "no such file" into `undefined` and rethrows the rest.
 * @param {unknown} error
 * @returns {undefined}
 */
export function missing(error) {
  if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT') return undefined;
  throw error;
}
