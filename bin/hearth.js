#!/usr/bin/env node
/**
 * @module
 * `hearth` (the hearth-llm package's command): `hearth init` copies Hearth's files into a site's
 * public folder; `hearth relay` runs the relay, as `hearth-relay` does.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  COMPAT_DIR,
  displayDir,
  displayPath,
  errorMessage,
  formatBytes,
  HEARTH_DIR,
  init,
  InitError,
  packageVersion,
  SW_FILE,
} from './init.js';
import { findPackageJson, isInsideProject, saveConfig } from './project.js';

const HELP = `Usage: hearth <command> [options]

Commands:
  init <public-dir>  Copy Hearth's service worker and files into your site's public folder.
  relay [options]    Serve a Hearth tab's API on this machine (hearth relay --help).

Options:
  -h, --help         This text.
  -v, --version      The version of hearth-llm.`;

const INIT_HELP = `Usage: hearth init <public-dir> [options]

Copies hearth-sw.js and the folder hearth/ into <public-dir>, the folder your site serves
at its root (public/, static/, …). Run it again after upgrading hearth-llm: it updates them.
hearth/ is Hearth's own: files in it that the new version no longer has are removed. Only
those two are written; a hearth/ or hearth-sw.js that is not Hearth's is refused (exit 1).

Options:
  --save         Record <public-dir> in your package.json ("hearth-llm"), so that installing
                 another version of hearth-llm updates the files by itself.
  --no-compat    Leave out llama.cpp's compatibility build (hearth/${COMPAT_DIR}/, 19 MB):
                 browsers without JSPI or 64-bit wasm memory (Safari, older Firefox) then
                 cannot run llama.cpp models.
  --force        Take over a hearth/ folder that hearth init did not write (the files in it
                 that are not Hearth's are removed), and replace a hearth-sw.js that is not
                 Hearth's (a file or a folder of yours of that name).
  -h, --help     This text.`;

/**
 * Stops with a usage error (exit code 2).
 * @param {string} message
 * @param {string} help
 * @returns {never}
 */
function usage(message, help) {
  console.error(`hearth: ${message}\n\n${help}`);
  process.exit(2);
}

/**
 * Stops with a failure (exit code 1).
 * @param {unknown} error
 * @returns {never}
 */
function fail(error) {
  console.error(`hearth: ${errorMessage(error)}`);
  process.exit(1);
}

/** @param {string[]} args */
async function runInit(args) {
  const { values, positionals } = readInitOptions(args);
  if (values.help) {
    console.log(INIT_HELP);
    return;
  }
  const [publicDir, ...extra] = positionals;
  if (publicDir === undefined)
    usage('init needs the public folder, e.g. hearth init public.', INIT_HELP);
  if (extra.length > 0) usage(`init takes one folder, not '${positionals.join(' ')}'.`, INIT_HELP);
  const compat = !values['no-compat'];

  // Looked for before copying: a --save that cannot be done should leave nothing half done.
  const packageJson = values.save ? await findPackageJson(process.cwd()) : undefined;
  if (values.save && !packageJson) {
    throw new InitError(
      `--save found no package.json in ${process.cwd()} or above: run it in your site's folder.`,
    );
  }
  // The postinstall copies only inside the project: a folder outside it would never be updated.
  if (packageJson && !(await isInsideProject(publicDir, dirname(packageJson)))) {
    throw new InitError(
      `--save records only a folder inside ${dirname(packageJson)} (links resolved), where the ` +
        `postinstall may copy; ${publicDir} is not. Run it without --save, and again after each ` +
        `upgrade of hearth-llm (in your prebuild script, say).`,
    );
  }

  const result = await init({ publicDir, compat, force: values.force ?? false });
  const shown = displayDir(publicDir);
  console.log(
    `Hearth's files are in ${shown}: ${SW_FILE} and ${HEARTH_DIR}/ (${result.files} files, ${formatBytes(result.bytes)}).`,
  );
  console.log(
    `  ${result.written} written, ${result.updated} updated, ${result.removed} removed, ${result.unchanged} unchanged.`,
  );
  if (packageJson) {
    const changed = await saveConfig(packageJson, publicDir, compat);
    console.log(
      `${changed ? 'Recorded' : 'Already recorded'} ${shown} in ${displayPath(packageJson)}: installing hearth-llm updates it.`,
    );
  }
  if (result.first) {
    console.log(`
${join(shown, HEARTH_DIR)}/ is Hearth's own folder: each hearth init makes it match the package and
removes what it did not put there. Keep your own files outside it.${
      values.save
        ? ''
        : `\nTo update the files whenever hearth-llm is installed: npx hearth init ${publicDir} --save`
    }

Next: call startHearth() in your page — import { startHearth } from 'hearth-llm'`);
  }
}

/** @param {string[]} args */
function readInitOptions(args) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        save: { type: 'boolean' },
        'no-compat': { type: 'boolean' },
        force: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return usage(errorMessage(error), INIT_HELP);
  }
}

/**
 * Runs relay/cli.js in this process with `args` as its own: the same options, banner, exit
 * codes and Ctrl+C handling as `hearth-relay`, with no second process to forward signals to.
 * @param {string[]} args
 */
async function runRelay(args) {
  const cli = new URL('../relay/cli.js', import.meta.url);
  // parseArgs in cli.js reads process.argv past the script's path.
  process.argv = [process.argv[0] ?? process.execPath, fileURLToPath(cli), ...args];
  await import(cli.href);
}

const [command, ...rest] = process.argv.slice(2);
try {
  switch (command) {
    case 'init':
      await runInit(rest);
      break;
    case 'relay':
      await runRelay(rest);
      break;
    case '-h':
    case '--help':
      console.log(HELP);
      break;
    case '-v':
    case '--version':
      console.log(await packageVersion());
      break;
    case undefined:
      usage('say which command to run.', HELP);
      break;
    default:
      usage(`unknown ${command.startsWith('-') ? 'option' : 'command'} '${command}'.`, HELP);
  }
} catch (error) {
  fail(error);
}
