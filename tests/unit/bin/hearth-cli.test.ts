/**
 * The `hearth` command and the package's postinstall, run as a site runs them: `node bin/…` in a
 * child process, from a package folder laid out as the published hearth-llm is (bin/ and a small
 * files/ tree), copying into a site's public folder in a temporary directory.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  age,
  exists,
  fakePackage,
  fakeSite,
  FILES,
  hearth,
  node,
  postinstall,
  REPO,
  snapshot,
  tempDir,
  VERSION,
  writeTree,
} from './fixtures';

/** Whether `dir` or a folder above it holds a package.json. */
function packageJsonAbove(dir: string): boolean {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'package.json'))) return true;
    if (dirname(at) === at) return false;
  }
}

describe('hearth init', () => {
  it('copies hearth-sw.js and hearth/ into the public folder byte for byte and marks hearth/ with the version', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run).toMatchObject({ code: 0, stderr: '' });
    for (const [path, text] of Object.entries(FILES)) {
      expect(await readFile(join(site, 'public', path), 'utf8')).toBe(text);
    }
    expect(JSON.parse(await readFile(join(site, 'public/hearth/.hearth-llm'), 'utf8'))).toEqual({
      version: VERSION,
    });
    expect(run.stdout).toContain("Hearth's files are in public/");
    expect(run.stdout).toContain('public/hearth/ is Hearth');
    expect(run.stdout).toContain("import { startHearth } from 'hearth-llm'");
  });

  it('makes the public folder when it does not exist', async () => {
    const pkg = await fakePackage();
    const site = await tempDir();

    const run = await hearth(pkg, ['init', 'deep/public'], site);

    expect(run.code).toBe(0);
    expect(await readFile(join(site, 'deep/public/hearth-sw.js'), 'utf8')).toBe(
      FILES['hearth-sw.js'],
    );
  });

  it('run a second time, rewrites no file, keeps every mtime and changes nothing in the public folder', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await hearth(pkg, ['init', 'public'], site);
    await age(join(site, 'public'));
    const before = await snapshot(join(site, 'public'));

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('0 written, 0 updated, 0 removed, 4 unchanged');
    expect(await snapshot(join(site, 'public'))).toEqual(before);
  });

  it('after an upgrade, updates changed files, removes from hearth/ the files the new version no longer has and touches nothing of the site', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await hearth(pkg, ['init', 'public'], site);
    const siteBefore = await snapshot(join(site, 'public/other'));
    const indexBefore = await readFile(join(site, 'public/index.html'));
    await rm(join(pkg, 'files/hearth/sub'), { recursive: true });
    await writeFile(join(pkg, 'files/hearth/hearth.js'), 'export const v2 = true;\n');
    await writeFile(
      join(pkg, 'package.json'),
      JSON.stringify({ version: '2.0.0', type: 'module' }),
    );

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('0 written, 1 updated, 1 removed, 2 unchanged');
    expect(await exists(join(site, 'public/hearth/sub'))).toBe(false);
    expect(await readFile(join(site, 'public/hearth/hearth.js'), 'utf8')).toBe(
      'export const v2 = true;\n',
    );
    expect(await readFile(join(site, 'public/hearth/.hearth-llm'), 'utf8')).toBe(
      '{"version":"2.0.0"}\n',
    );
    expect(await snapshot(join(site, 'public/other'))).toEqual(siteBefore);
    expect(await readFile(join(site, 'public/index.html'))).toEqual(indexBefore);
    expect((await readdir(join(site, 'public'))).sort()).toEqual([
      'hearth',
      'hearth-sw.js',
      'index.html',
      'other',
    ]);
  });

  it('with --no-compat, leaves out hearth/wllama-compat/ and removes the one an earlier init copied', async () => {
    const pkg = await fakePackage();
    const fresh = await fakeSite();
    const upgraded = await fakeSite();
    await hearth(pkg, ['init', 'public'], upgraded);

    const runs = [
      await hearth(pkg, ['init', 'public', '--no-compat'], fresh),
      await hearth(pkg, ['init', 'public', '--no-compat'], upgraded),
    ];

    for (const [run, site] of [
      [runs[0], fresh],
      [runs[1], upgraded],
    ] as const) {
      expect(run?.code).toBe(0);
      expect(await exists(join(site, 'public/hearth/wllama-compat'))).toBe(false);
      expect(await exists(join(site, 'public/hearth/hearth.js'))).toBe(true);
    }
    expect(runs[1]?.stdout).toContain('1 removed');
  });

  it('refuses a non-empty public/hearth/ that hearth init did not write, with exit code 1, and leaves the public folder untouched', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await writeTree(site, { 'public/hearth/mine.js': 'the site’s own\n' });
    const before = await snapshot(join(site, 'public'));

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^hearth: .*--force/);
    expect(await snapshot(join(site, 'public'))).toEqual(before);
  });

  it('with --force, takes over a foreign public/hearth/ and removes the files that are not Hearth’s', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();
    await writeTree(site, { 'public/hearth/mine.js': 'the site’s own\n' });

    const run = await hearth(pkg, ['init', 'public', '--force'], site);

    expect(run.code).toBe(0);
    expect(await exists(join(site, 'public/hearth/mine.js'))).toBe(false);
    expect(await exists(join(site, 'public/hearth/.hearth-llm'))).toBe(true);
  });

  it.each([
    ['two spaces', '  '],
    ['a tab', '\t'],
    ['four spaces', '    '],
  ])(
    'with --save, records the folder in package.json and keeps its other fields, its indentation of %s and its final newline',
    async (_, indent) => {
      const pkg = await fakePackage();
      const manifest = { name: 'site', private: true, scripts: { build: 'vite build' } };
      const site = await fakeSite(`${JSON.stringify(manifest, null, indent)}\n`);

      const run = await hearth(pkg, ['init', 'public', '--save'], site);

      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(await readFile(join(site, 'package.json'), 'utf8')).toBe(
        `${JSON.stringify({ ...manifest, 'hearth-llm': { publicDir: 'public' } }, null, indent)}\n`,
      );
    },
  );

  it('with --save --no-compat run in a subfolder, records the folder relative to the nearest package.json, with compat: false', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite('{"name":"site"}');
    await mkdir(join(site, 'web'));

    const run = await hearth(pkg, ['init', 'static', '--save', '--no-compat'], join(site, 'web'));

    expect(run.code).toBe(0);
    expect(await readFile(join(site, 'package.json'), 'utf8')).toBe(
      '{"name":"site","hearth-llm":{"publicDir":"web/static","compat":false}}',
    );
  });

  // The site is made under tmpdir(): a package.json above it would be found, and the case is
  // then not one this machine can make (said as a skip, not passed without a check).
  it.skipIf(packageJsonAbove(tmpdir()))(
    'with --save and no package.json above, exits 1 before copying anything',
    async () => {
      const pkg = await fakePackage();
      const site = await fakeSite();

      const run = await hearth(pkg, ['init', 'public', '--save'], site);

      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^hearth: --save found no package\.json/);
      expect(await exists(join(site, 'public/hearth'))).toBe(false);
    },
  );

  it.each([
    [['init'], /^hearth: init needs the public folder/],
    [['init', 'a', 'b'], /^hearth: init takes one folder/],
    [['init', 'public', '--bogus'], /^hearth: Unknown option '--bogus'/],
    [['bogus'], /^hearth: unknown command 'bogus'/],
    [[], /^hearth: say which command/],
  ])('given %j, exits 2 with a usage message on stderr', async (args, message) => {
    const pkg = await fakePackage();
    const site = await fakeSite();

    const run = await hearth(pkg, args, site);

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain('Usage: hearth');
    expect(await exists(join(site, 'public/hearth'))).toBe(false);
  });

  it('exits 1 naming the package when the package has no files/ folder', async () => {
    const pkg = await fakePackage();
    await rm(join(pkg, 'files'), { recursive: true });
    const site = await fakeSite();

    const run = await hearth(pkg, ['init', 'public'], site);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^hearth: .*reinstall/);
  });
});

describe('hearth', () => {
  it('--version prints the version in the package’s package.json', async () => {
    const pkg = await fakePackage();

    const run = await hearth(pkg, ['--version'], pkg);

    expect(run).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('--help and init --help print their usage and exit 0', async () => {
    const pkg = await fakePackage();

    const [top, init] = [
      await hearth(pkg, ['--help'], pkg),
      await hearth(pkg, ['init', '--help'], pkg),
    ];

    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^Usage: hearth <command>/);
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/^Usage: hearth init <public-dir>/);
  });

  it('relay --help prints what node relay/cli.js --help prints, with the same exit code', async () => {
    // The repo's own bin/ and relay/ sit side by side as they do in the package.
    const [viaHearth, direct] = [
      await node(join(REPO, 'bin/hearth.js'), ['relay', '--help'], { cwd: REPO }),
      await node(join(REPO, 'relay/cli.js'), ['--help'], { cwd: REPO }),
    ];

    expect(direct.stdout).toMatch(/^Usage: hearth-relay/);
    expect(viaHearth).toEqual(direct);
  });

  it('relay passes its flags on: a bad --port exits 2 with the relay’s own message', async () => {
    const run = await node(join(REPO, 'bin/hearth.js'), ['relay', '--port', 'x'], { cwd: REPO });

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^hearth-relay: --port must be a port number/);
  });
});

describe('postinstall', () => {
  it('copies the files into the folder the site recorded, honouring compat: false, and prints one line', async () => {
    const site = await fakeSite(
      JSON.stringify({ 'hearth-llm': { publicDir: 'public', compat: false } }),
    );
    const pkg = await fakePackage({}, join(site, 'node_modules/hearth-llm'));

    const run = await postinstall(pkg, site);

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).toMatch(/^hearth-llm: updated Hearth's files in public\//);
    expect(await readFile(join(site, 'public/hearth/hearth.js'), 'utf8')).toBe(
      FILES['hearth/hearth.js'],
    );
    expect(await exists(join(site, 'public/hearth/wllama-compat'))).toBe(false);
  });

  it('does nothing and prints nothing for a site that recorded no folder', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite('{"name":"site"}');
    const before = await snapshot(site);

    const run = await postinstall(pkg, site);

    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await snapshot(site)).toEqual(before);
  });

  it('does nothing and prints nothing where INIT_CWD has no package.json', async () => {
    const pkg = await fakePackage();
    const site = await fakeSite();

    const run = await postinstall(pkg, site);

    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await exists(join(site, 'public/hearth'))).toBe(false);
  });

  it('does nothing and prints nothing when INIT_CWD is the package’s own folder', async () => {
    const pkg = await fakePackage({ 'hearth-llm': { publicDir: 'public' } });

    const run = await postinstall(pkg, pkg);

    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await exists(join(pkg, 'public'))).toBe(false);
  });

  it('exits 0 with a warning naming npx hearth init when the recorded folder cannot be written', async () => {
    const site = await fakeSite(JSON.stringify({ 'hearth-llm': { publicDir: 'blocked' } }));
    const pkg = await fakePackage({}, join(site, 'node_modules/hearth-llm'));
    await writeFile(join(site, 'blocked'), 'a file where the folder should be\n');

    const run = await postinstall(pkg, site);

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^hearth-llm: could not update Hearth's files/);
    expect(run.stderr).toContain('npx hearth init blocked');
    expect(await readFile(join(site, 'blocked'), 'utf8')).toBe(
      'a file where the folder should be\n',
    );
  });
});
