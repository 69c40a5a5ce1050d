/**
 * `hearth-relay` as its users start it (`node relay/cli.js`), read from what it prints: shared by
 * the relay's unit tests (its terminal output) and the e2e tests (a real tab pairs with it), with
 * no test framework of its own. Each relay gets a key file in a folder of its own, removed when
 * it stops.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../', import.meta.url).pathname;

export interface RelayProcess {
  baseUrl: string;
  sdkBaseUrl: string;
  key: string;
  /** The fingerprint of its key it printed, which a tab's confirmation shows. */
  fingerprint: string;
  /** The pairing link it printed. */
  link: string;
  /** The relay's WebSocket address, as its link names it. */
  wsUrl: string;
  /** Everything it printed so far, its standard output and error together. */
  output: () => string;
  /** Stops it, waits for it to exit, and removes its key file's folder. */
  stop: () => Promise<void>;
}

/** Waits until `text()` matches `pattern`, and returns the match. */
async function printed(
  text: () => string,
  pattern: RegExp,
  what: string,
  timeoutMs: number,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(text());
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`no ${what} in:\n${text()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Stops a child process and waits for it. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * Starts `hearth-relay` for the page at `app`, on a free port, and resolves once it printed its
 * banner (within `timeoutMs`).
 */
export async function spawnRelay(app: string, timeoutMs = 15_000): Promise<RelayProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-relay-cli-'));
  const child = spawn(
    process.execPath,
    ['relay/cli.js', '--port', '0', '--app', app, '--config', join(dir, 'relay.json')],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const stop = async () => {
    await stopProcess(child);
    await rm(dir, { recursive: true, force: true });
  };
  let out = '';
  child.stdout?.on('data', (part: Buffer) => (out += part.toString()));
  child.stderr?.on('data', (part: Buffer) => (out += part.toString()));
  const output = () => out;
  try {
    const [, baseUrl = ''] = await printed(output, /Base URL:\s+(\S+)/, 'base URL', timeoutMs);
    const [, sdkBaseUrl = ''] = await printed(
      output,
      /SDK base URL:\s+(\S+)/,
      'SDK base URL',
      timeoutMs,
    );
    const [, key = ''] = await printed(output, /API key:\s+(\S+)/, 'key', timeoutMs);
    const [, fingerprint = ''] = await printed(
      output,
      /Fingerprint:\s+(\S+)/,
      'fingerprint',
      timeoutMs,
    );
    const [, link = ''] = await printed(output, /confirm\.\n\s+(\S+)/, 'pairing link', timeoutMs);
    const wsUrl = new URL(link).searchParams.get('relay') ?? '';
    return { baseUrl, sdkBaseUrl, key, fingerprint, link, wsUrl, output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
