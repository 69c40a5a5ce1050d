/**
 * Where the postinstall copies (issue 46, item 7): only when this copy of hearth-llm is installed
 * in the project that INIT_CWD names (its node_modules/, or its workspace root's), in whatever
 * layout the installer uses; never for a one-off `npx`/`npm exec` or a global install run from a
 * site's folder; and never into a folder outside the project.
 */
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  exists,
  fakePackage,
  fakeSite,
  FILES,
  hearth,
  postinstall,
  snapshot,
  tempDir,
  writeTree,
} from './fixtures';

const CONFIG = JSON.stringify({ name: 'site', 'hearth-llm': { publicDir: 'public' } });

/** A link at `path` to `target`, its folder made first. */
async function linkAt(target: string, path: string) {
  await mkdir(dirname(path), { recursive: true });
  await symlink(target, path, 'dir');
}

describe('postinstall, installed elsewhere than the project', () => {
  it.each([
    [
      'a one-off npm exec / npx (the npm cache’s _npx folder)',
      'npm-cache/_npx/3f2a9c1d0b7e4a55/node_modules/hearth-llm',
    ],
    ['a global install (under the global prefix)', 'prefix/lib/node_modules/hearth-llm'],
  ])(
    'for %s run from a site that records a folder, touches nothing of the site and prints nothing',
    async (_, layout) => {
      const site = await fakeSite(CONFIG);
      // The site's own install of hearth-llm, which a one-off run must not stand for.
      await fakePackage({ version: '0.9.0' }, join(site, 'node_modules/hearth-llm'));
      const pkg = await fakePackage({}, join(await tempDir(), layout));
      const before = await snapshot(site);

      const run = await postinstall(pkg, site);

      expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(await snapshot(site)).toEqual(before);
    },
  );

  it('for a package beside the site that is not installed in it, touches nothing', async () => {
    const site = await fakeSite(CONFIG);
    const pkg = await fakePackage();

    const run = await postinstall(pkg, site);

    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await exists(join(site, 'public/hearth'))).toBe(false);
  });
});

describe('postinstall, installed in the project', () => {
  /** Each layout puts the package for `site` (inside `root`) and returns the path npm runs. */
  const layouts: [string, (site: string) => Promise<string>][] = [
    ['npm’s node_modules/', (site) => fakePackage({}, join(site, 'node_modules/hearth-llm'))],
    [
      'pnpm’s node_modules/.pnpm/',
      async (site) => {
        const real = join(site, 'node_modules/.pnpm/hearth-llm@1.2.3/node_modules/hearth-llm');
        await fakePackage({}, real);
        await linkAt(real, join(site, 'node_modules/hearth-llm'));
        return real;
      },
    ],
    [
      'a link to a folder outside (npm install <folder>, pnpm link)',
      async (site) => {
        const real = await fakePackage();
        await linkAt(real, join(site, 'node_modules/hearth-llm'));
        return join(site, 'node_modules/hearth-llm');
      },
    ],
  ];

  it.each(layouts)('in %s, copies into the recorded folder', async (_, place) => {
    const site = await fakeSite(CONFIG);
    const pkg = await place(site);

    const run = await postinstall(pkg, site);

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(await readFile(join(site, 'public/hearth-sw.js'), 'utf8')).toBe(FILES['hearth-sw.js']);
  });

  it('hoisted to the root of an npm workspace the site is in, copies into the site’s folder', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'package.json'), JSON.stringify({ workspaces: ['packages/*'] }));
    const site = join(root, 'packages/site');
    await writeTree(site, { 'package.json': CONFIG, 'public/index.html': 'site\n' });
    const pkg = await fakePackage({}, join(root, 'node_modules/hearth-llm'));

    const run = await postinstall(pkg, site);

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(await exists(join(site, 'public/hearth/hearth.js'))).toBe(true);
  });

  it.each([
    ['a path that leaves it', '../elsewhere/public', false],
    ['a link inside it to a folder outside', 'public', true],
  ])(
    'refuses a recorded folder outside the project (%s) with a warning naming npx hearth init, and writes nothing there',
    async (_, publicDir, linked) => {
      const outside = await tempDir();
      const site = join(await tempDir(), 'site');
      await writeTree(site, {
        'package.json': JSON.stringify({ 'hearth-llm': { publicDir } }),
      });
      await mkdir(join(outside, 'public'));
      if (linked) await linkAt(join(outside, 'public'), join(site, 'public'));
      else await linkAt(outside, join(dirname(site), 'elsewhere'));
      const pkg = await fakePackage({}, join(site, 'node_modules/hearth-llm'));

      const run = await postinstall(pkg, site);

      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/^hearth-llm: could not update Hearth's files: .*outside/);
      expect(run.stderr).toContain(`npx hearth init ${publicDir}`);
      expect(await snapshot(outside)).toEqual({ public: expect.stringMatching(/^dir /) });
    },
  );
});

describe('hearth init --save', () => {
  it('refuses to record a folder outside the project, before copying anything', async () => {
    const pkg = await fakePackage();
    const root = await tempDir();
    const site = join(root, 'site');
    await writeTree(site, { 'package.json': '{"name":"site"}' });

    const run = await hearth(pkg, ['init', '../shared/public', '--save'], site);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^hearth: --save records only a folder inside/);
    expect(await exists(join(root, 'shared'))).toBe(false);
    expect(await readFile(join(site, 'package.json'), 'utf8')).toBe('{"name":"site"}');
  });

  it('copies into a folder outside the project when it is named on the command line', async () => {
    const pkg = await fakePackage();
    const root = await tempDir();
    await mkdir(join(root, 'site'));

    const run = await hearth(pkg, ['init', '../shared/public'], join(root, 'site'));

    expect(run.code).toBe(0);
    expect(await exists(join(root, 'shared/public/hearth-sw.js'))).toBe(true);
  });
});
