/**
 * @module
 * What the tests of the `hearth` command and the postinstall share: a package folder laid out as
 * the published hearth-llm is (the repo's bin/ and a small files/ tree), site folders in
 * temporary directories, and `node bin/…` run in a child process, as a site runs it.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanups } from '../cleanups';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const VERSION = '1.2.3';

/** The first line of the fake package's scripts, as the package build writes it. */
export const BANNER = `/*! hearth-llm build ${VERSION}+test */`;

/** The files/ tree of the fake package, by path under files/. */
export const FILES: Record<string, string> = {
  'hearth-sw.js': `${BANNER}\nself.addEventListener("fetch", () => {});\n`,
  'hearth/hearth.js': 'export function startHearth() {}\n',
  'hearth/sub/x.js': 'export const x = 1;\n',
  'hearth/wllama-compat/3.13.0/wllama.js': 'export const wllama = "compat";\n',
};

/** A new temporary folder, removed after the test. */
export async function tempDir() {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-cli-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes `files` (path → text) under `root`. */
export async function writeTree(root: string, files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/**
 * A package folder as published: the repo's bin/, a files/ tree and a package.json; at `at`
 * (a path where an installer would put it), or in a temporary folder of its own.
 */
export async function fakePackage(manifest: Record<string, unknown> = {}, at?: string) {
  const root = at ?? join(await tempDir(), 'hearth-llm');
  await cp(join(REPO, 'bin'), join(root, 'bin'), { recursive: true });
  await writeTree(join(root, 'files'), FILES);
  await writeFile(
    join(root, 'package.json'),
    JSON.stringify({ name: 'hearth-llm', version: VERSION, type: 'module', ...manifest }),
  );
  return root;
}

/** A site folder with its own files in public/, beside where Hearth's go. */
export async function fakeSite(manifest?: string) {
  const site = await tempDir();
  await writeTree(site, {
    'public/index.html': '<!doctype html><title>site</title>\n',
    'public/other/data.json': '{"site":true}\n',
  });
  if (manifest !== undefined) await writeFile(join(site, 'package.json'), manifest);
  return site;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <script> ...args` and resolves with its exit code and output, whatever the code. */
export function node(
  script: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
) {
  // npm sets INIT_CWD for the test run itself: only the postinstall tests pass one on.
  const { INIT_CWD: _, ...env } = process.env;
  return new Promise<Run>((done) => {
    execFile(
      process.execPath,
      [script, ...args],
      { cwd: options.cwd, env: { ...env, ...options.env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

export const hearth = (pkg: string, args: string[], cwd: string) =>
  node(join(pkg, 'bin', 'hearth.js'), args, { cwd });

/** The package's postinstall as npm runs it: in the package's folder, with INIT_CWD. */
export const postinstall = (pkg: string, initCwd: string) =>
  node(join(pkg, 'bin', 'postinstall.js'), [], { cwd: pkg, env: { INIT_CWD: initCwd } });

/** Every file and folder under `root`: its kind, mtime and, for files, a hash of its bytes. */
export async function snapshot(root: string) {
  const entries: Record<string, string> = {};
  async function walk(dir: string) {
    for (const name of (await readdir(dir)).sort()) {
      const path = join(dir, name);
      const info = await lstat(path);
      const hash = info.isFile()
        ? createHash('sha256')
            .update(await readFile(path))
            .digest('hex')
        : info.isDirectory()
          ? 'dir'
          : 'other';
      entries[relative(root, path)] = `${hash} ${info.mtimeMs}`;
      if (info.isDirectory()) await walk(path);
    }
  }
  await walk(root);
  return entries;
}

/** Sets every mtime under `root` to one long ago, so that a rewrite cannot go unseen. */
export async function age(root: string) {
  const then = new Date('2001-01-01T00:00:00Z');
  for (const path of Object.keys(await snapshot(root))) await utimes(join(root, path), then, then);
  await utimes(root, then, then);
}

export const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );
