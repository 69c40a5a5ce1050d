// `npm run package`: builds the `hearth-llm` package in build/package/ and packs it. The last
// line on stdout is the tarball's path. Nothing is written under dist/ (the app's build).
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// HEARTH_PACKAGE_OUT: another folder than build/, for runs side by side (the e2e tests').
const dest = resolve(process.env.HEARTH_PACKAGE_OUT ?? join(root, 'build'));
const out = join(dest, 'package');
const app = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/** The project's repository, for the package's `repository`, `homepage` and `bugs`. */
const REPOSITORY = 'https://github.com/hearth-llm/hearth';

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// One build id for the loader's build and the service worker's (they check each other).
process.env.HEARTH_BUILD ??= `${app.version}+${Date.now().toString(36)}`;
const configFile = join(root, 'vite.package.config.ts');
await build({ configFile, mode: 'loader', root, logLevel: 'warn' });
/**
 * What a page needs before `hearth/echo` answers: the loader, the engine worker and its helper.
 * `hearth-sw.js` caches them when it installs; the engines' chunks and wasm wait until used.
 */
const CORE = ['hearth.js', 'worker.js', 'spawned-worker.js'];
const coreBytes = CORE.reduce(
  (sum, name) => sum + statSync(join(out, 'files/hearth', name)).size,
  0,
);
if (coreBytes > 1024 * 1024) throw new Error(`the core is ${coreBytes} bytes, over 1 MiB`);
process.env.VITE_HEARTH_CORE_FILES = JSON.stringify(CORE);
/**
 * Every file of `hearth/` this build wrote (`wllama-compat/…` included), as paths with `/`:
 * `hearth-sw.js` serves and caches these alone, by exact path (sw/hearth-files.ts).
 */
const FILES = readdirSync(join(out, 'files/hearth'), { recursive: true, encoding: 'utf8' })
  .filter((path) => statSync(join(out, 'files/hearth', path)).isFile())
  .map((path) => path.split('\\').join('/'))
  .sort();
// Names a URL carries as they are (no `%`, no `.` or `..` segment, no `@` of a build's folder):
// the worker compares a request's path with them without decoding it.
const PLAIN_PATH = /^[\w-][\w.-]*(?:\/[\w-][\w.-]*)*$/;
const odd = FILES.filter((path) => !PLAIN_PATH.test(path));
if (odd.length) throw new Error(`hearth/ has files a URL would not name plainly: ${odd}`);
process.env.VITE_HEARTH_FILES = JSON.stringify(FILES);
await build({ configFile, mode: 'sw', root, logLevel: 'warn' });
await build({ configFile, mode: 'entry', root, logLevel: 'warn' });
// The entry's types, from its sources.
execFileSync(
  process.execPath,
  [
    join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    ...['src/site/index.ts', 'src/build-info.d.ts'],
    ...['--declaration', '--emitDeclarationOnly', '--outDir', join(out, 'lib')],
    ...['--target', 'es2022', '--module', 'esnext', '--moduleResolution', 'bundler'],
    ...['--strict', '--skipLibCheck', '--types', 'vite/client', '--rootDir', 'src/site'],
  ],
  { cwd: root, stdio: 'inherit' },
);
// `hearth-llm/vite`, the Vite plugin: Node code that imports only Node's modules and Vite's types,
// compiled as it is (no bundle) into lib/vite.js with its declarations. `@internal` names (the
// tests' entry points) stay out of lib/vite.d.ts.
execFileSync(
  process.execPath,
  [
    join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    'src/vite-plugin/vite.ts',
    ...['--declaration', '--stripInternal', '--outDir', join(out, 'lib')],
    ...['--target', 'es2022', '--module', 'esnext', '--moduleResolution', 'bundler'],
    ...['--lib', 'es2022', '--types', 'node', '--verbatimModuleSyntax'],
    ...['--strict', '--skipLibCheck', '--rootDir', 'src/vite-plugin'],
  ],
  { cwd: root, stdio: 'inherit' },
);
for (const dir of ['bin', 'relay']) {
  mkdirSync(join(out, dir));
  for (const name of readdirSync(join(root, dir)).filter((n) => n.endsWith('.js'))) {
    cpSync(join(root, dir, name), join(out, dir, name));
  }
}
cpSync(join(root, 'package', 'README.md'), join(out, 'README.md'));
const manifest = {
  name: 'hearth-llm',
  version: app.version,
  description:
    'A private, on-device OpenAI-compatible API for any static site: a service worker answers /v1/openai from a model running in the browser (WebLLM, llama.cpp).',
  license: app.license,
  // No git remote is recorded in this checkout: this is the address the docs' links use; change
  // it here (and in package/README.md) if the repository lives elsewhere.
  repository: { type: 'git', url: `git+${REPOSITORY}.git` },
  homepage: `${REPOSITORY}#readme`,
  bugs: { url: `${REPOSITORY}/issues` },
  type: 'module',
  engines: app.engines,
  bin: { hearth: 'bin/hearth.js', 'hearth-relay': 'relay/cli.js' },
  exports: {
    '.': { types: './lib/index.d.ts', default: './lib/index.js' },
    './vite': { types: './lib/vite.d.ts', default: './lib/vite.js' },
  },
  types: './lib/index.d.ts',
  files: ['bin', 'relay', 'lib', 'files'],
  scripts: { postinstall: 'node bin/postinstall.js' },
  // The relay's WebSocket; everything else ships built.
  dependencies: { ws: app.dependencies.ws },
  // Only `hearth-llm/vite` uses Vite, and only its types: a site without Vite installs nothing
  // more, and one with Vite brings its own (the plugin is tested with the version in devDependencies).
  peerDependencies: { vite: '>=5.0.0' },
  peerDependenciesMeta: { vite: { optional: true } },
  keywords: ['openai', 'llm', 'webgpu', 'llama.cpp', 'webllm', 'service-worker', 'offline'],
};
writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
const packed = JSON.parse(
  execFileSync('npm', ['pack', '--json', '--pack-destination', dest], {
    cwd: out,
    encoding: 'utf8',
  }),
);
console.log(join(dest, packed[0].filename));
