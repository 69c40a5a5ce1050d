/**
 * `hearth init` against what may already sit where its files go (issue 46, items 4–6): a marker
 * that is a link or a folder, files that are hard links to files elsewhere, and a `hearth-sw.js`
 * that is a folder or the site's own worker. Each case is built in real temporary folders and
 * run through the real command.
 */
import {
  link,
  lstat,
  mkdir,
  readFile,
  readdir,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BANNER,
  exists,
  fakePackage,
  fakeSite,
  FILES,
  hearth,
  snapshot,
  tempDir,
  writeTree,
} from './fixtures';

const MARKER = 'public/hearth/.hearth-llm';

describe('hearth init and the marker', () => {
  it('refuses a marker that is a link to a file elsewhere, and leaves the file it points at as it was', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await hearth(pkg, ['init', 'public'], site);
    const elsewhere = await tempDir();
    await writeFile(join(elsewhere, 'notes.txt'), 'not Hearth’s\n');
    await writeFile(
      join(pkg, 'package.json'),
      JSON.stringify({ version: '2.0.0', type: 'module' }),
    );
    await rm(join(site, MARKER));
    await symlink(join(elsewhere, 'notes.txt'), join(site, MARKER));
    const before = await snapshot(join(site, 'public'));

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^hearth: .*\.hearth-llm is a link, not the file hearth init writes/,
    );
    expect(run.stderr).toContain('--force');
    expect(await readFile(join(elsewhere, 'notes.txt'), 'utf8')).toBe('not Hearth’s\n');
    expect(await snapshot(join(site, 'public'))).toEqual(before);
  });

  it('never takes over a folder of the site’s own files that holds a marker link, and deletes none of them', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    const elsewhere = await tempDir();
    await writeFile(join(elsewhere, 'marker'), '{"version":"0.0.1"}\n');
    await writeTree(site, { 'public/hearth/my-own.css': 'body { color: red }\n' });
    await symlink(join(elsewhere, 'marker'), join(site, MARKER));
    const before = await snapshot(join(site, 'public'));

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^hearth: /);
    expect(await readFile(join(site, 'public/hearth/my-own.css'), 'utf8')).toBe(
      'body { color: red }\n',
    );
    expect(await readFile(join(elsewhere, 'marker'), 'utf8')).toBe('{"version":"0.0.1"}\n');
    expect(await snapshot(join(site, 'public'))).toEqual(before);
  });

  it('refuses a marker that is a folder', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await writeTree(site, { 'public/hearth/.hearth-llm/kept.txt': 'mine\n' });
    const before = await snapshot(join(site, 'public'));

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^hearth: .*\.hearth-llm/);
    expect(await snapshot(join(site, 'public'))).toEqual(before);
  });

  it('with --force, replaces a marker link by a file of its own and leaves the link’s target as it was', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    const elsewhere = await tempDir();
    await writeFile(join(elsewhere, 'notes.txt'), 'not Hearth’s\n');
    await mkdir(join(site, 'public/hearth'));
    await symlink(join(elsewhere, 'notes.txt'), join(site, MARKER));

    const run = await hearth(pkg, ['init', 'public', '--force'], site);

    expect(run.code).toBe(0);
    expect(await readFile(join(elsewhere, 'notes.txt'), 'utf8')).toBe('not Hearth’s\n');
    expect((await lstat(join(site, MARKER))).isFile()).toBe(true);
    expect(await readFile(join(site, MARKER), 'utf8')).toBe('{"version":"1.2.3"}\n');
  });
});

describe('hearth init and hard links', () => {
  it('updates a file that is a hard link by replacing it, never writing into the other name’s file', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await hearth(pkg, ['init', 'public'], site);
    const elsewhere = await tempDir();
    const names = {
      'public/hearth/hearth.js': 'kept-loader.js',
      'public/hearth-sw.js': 'kept-sw.js',
      [MARKER]: 'kept-marker',
    };
    const kept: Record<string, string> = {};
    for (const [path, name] of Object.entries(names)) {
      await link(join(site, path), join(elsewhere, name));
      kept[name] = await readFile(join(elsewhere, name), 'utf8');
    }
    await writeFile(join(pkg, 'files/hearth/hearth.js'), 'export const v2 = true;\n');
    await writeFile(join(pkg, 'files/hearth-sw.js'), `${BANNER}\n// v2\n`);
    await writeFile(
      join(pkg, 'package.json'),
      JSON.stringify({ version: '2.0.0', type: 'module' }),
    );

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(0);
    for (const [name, text] of Object.entries(kept)) {
      expect(await readFile(join(elsewhere, name), 'utf8')).toBe(text);
    }
    expect(await readFile(join(site, 'public/hearth/hearth.js'), 'utf8')).toBe(
      'export const v2 = true;\n',
    );
    expect(await readFile(join(site, 'public/hearth-sw.js'), 'utf8')).toBe(`${BANNER}\n// v2\n`);
    expect(await readFile(join(site, MARKER), 'utf8')).toBe('{"version":"2.0.0"}\n');
    for (const path of Object.keys(names)) expect((await stat(join(site, path))).nlink).toBe(1);
    // No temporary file is left behind.
    expect((await readdir(join(site, 'public'))).sort()).toEqual([
      'hearth',
      'hearth-sw.js',
      'index.html',
      'other',
    ]);
  });
});

describe('hearth init and what sits at hearth-sw.js', () => {
  it('refuses a folder named hearth-sw.js on a first init, exits 1 saying what to do, and writes nothing', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await writeTree(site, { 'public/hearth-sw.js/keep.txt': 'the site’s own\n' });
    const before = await snapshot(join(site, 'public'));

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^hearth: .*hearth-sw\.js.*folder/);
    expect(run.stderr).toContain('--force');
    expect(await snapshot(join(site, 'public'))).toEqual(before);
  });

  it('refuses the site’s own hearth-sw.js, exits 1 saying what to do, and leaves it as it was', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await writeTree(site, { 'public/hearth-sw.js': 'self.addEventListener("push", () => {});\n' });
    const before = await snapshot(join(site, 'public'));

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^hearth: .*hearth-sw\.js.*not Hearth/);
    expect(run.stderr).toContain('--force');
    expect(await snapshot(join(site, 'public'))).toEqual(before);
  });

  it('refuses a hearth-sw.js that is a link, even to a worker of Hearth’s', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    const elsewhere = await tempDir();
    await writeFile(join(elsewhere, 'sw.js'), FILES['hearth-sw.js'] ?? '');
    await symlink(join(elsewhere, 'sw.js'), join(site, 'public/hearth-sw.js'));

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^hearth: .*hearth-sw\.js/);
    expect(await exists(join(site, 'public/hearth'))).toBe(false);
  });

  it('updates a hearth-sw.js of another build of Hearth’s', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await writeTree(site, { 'public/hearth-sw.js': '/*! hearth-llm build 0.9.0+old */\nold();\n' });

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(0);
    expect(await readFile(join(site, 'public/hearth-sw.js'), 'utf8')).toBe(FILES['hearth-sw.js']);
  });

  it('with --force, replaces the site’s own hearth-sw.js and a folder of that name', async () => {
    const pkg = await fakePackage();
    const [own, folder] = [await fakeSite(), await fakeSite()];
    await writeTree(own, { 'public/hearth-sw.js': 'mine();\n' });
    await writeTree(folder, { 'public/hearth-sw.js/keep.txt': 'mine\n' });

    for (const site of [own, folder]) {
      const run = await hearth(pkg, ['init', 'public', '--force'], site);

      expect(run.code).toBe(0);
      expect(await readFile(join(site, 'public/hearth-sw.js'), 'utf8')).toBe(FILES['hearth-sw.js']);
    }
  });

  it('says in init --help that a hearth-sw.js of the site’s own is refused without --force', async () => {
    const pkg = await fakePackage();

    const run = await hearth(pkg, ['init', '--help'], pkg);

    expect(run.stdout).not.toMatch(/Nothing\s+else in <public-dir> is touched/);
    expect(run.stdout).toMatch(/--force[\s\S]*hearth-sw\.js/);
  });
});
