/**
 * Helpers for the relay's tests: the relay as its users start it (`node relay/cli.js`, reading what
 * it prints), curl as a process, and the Portkey AI gateway run locally.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page } from '@playwright/test';

const ROOT = new URL('../../', import.meta.url).pathname;

export interface RunningRelay {
  baseUrl: string;
  sdkBaseUrl: string;
  key: string;
  link: string;
  /** The relay's WebSocket address, as its link names it. */
  wsUrl: string;
  /** Everything it printed so far. */
  output: () => string;
  stop: () => Promise<void>;
}

/** Waits until `text()` matches `pattern`, and returns the match. */
async function printed(
  text: () => string,
  pattern: RegExp,
  what: string,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const match = pattern.exec(text());
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`no ${what} in:\n${text()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Stops a child process and waits for it. */
function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Starts `hearth-relay` for the app at `app`, on a free port, with a key file of its own. */
export async function startRelay(app: string): Promise<RunningRelay> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-relay-e2e-'));
  const child = spawn(
    process.execPath,
    ['relay/cli.js', '--port', '0', '--app', app, '--config', join(dir, 'relay.json')],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (part: Buffer) => (out += part.toString()));
  child.stderr?.on('data', (part: Buffer) => (out += part.toString()));
  const output = () => out;
  const [, baseUrl = ''] = await printed(output, /Base URL:\s+(\S+)/, 'base URL');
  const [, sdkBaseUrl = ''] = await printed(output, /SDK base URL:\s+(\S+)/, 'SDK base URL');
  const [, key = ''] = await printed(output, /API key:\s+(\S+)/, 'key');
  const [, link = ''] = await printed(output, /confirm\.\n\s+(\S+)/, 'pairing link');
  const wsUrl = new URL(link).searchParams.get('relay') ?? '';
  return { baseUrl, sdkBaseUrl, key, link, wsUrl, output, stop: () => stopProcess(child) };
}

/** Follows the relay's pairing link in `page` and says yes. */
export async function pairTab(page: Page, relay: RunningRelay): Promise<void> {
  await page.goto(relay.link);
  const dialog = page.getByRole('dialog', { name: 'Share with the relay?' });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(`Share this tab's models with the relay at ${relay.wsUrl}?`);
  await dialog.getByRole('button', { name: 'Share', exact: true }).click();
  await expect(page.getByText('Shared with the relay')).toBeVisible();
  await expect.poll(relay.output).toContain('Paired with a tab of');
  // The link's one-time code is out of the address, so that a reload does not use it again.
  expect(new URL(page.url()).searchParams.has('pair')).toBe(false);
}

export interface CurlAnswer {
  /** curl's exit code: 0, or why it stopped (28: the time limit). */
  exit: number;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Runs curl with `args` (plus `-sS -i`), and reads its answer. */
export function curl(args: string[]): Promise<CurlAnswer> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-sS', '-i', '--no-buffer', ...args], (error, stdout) => {
      const exit = error ? Number((error as { code?: number }).code ?? 1) : 0;
      if ((error as { code?: unknown } | null)?.code === 'ENOENT') {
        return reject(
          new Error(
            'The relay tests run curl, as its users do: install it (apt-get install -y curl).',
          ),
        );
      }
      if (error && typeof (error as { code?: unknown }).code !== 'number') return reject(error);
      const split = stdout.indexOf('\r\n\r\n');
      const head = split === -1 ? stdout : stdout.slice(0, split);
      const body = split === -1 ? '' : stdout.slice(split + 4);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ exit, status: Number(statusLine.split(' ')[1] ?? 0), headers, body });
    });
  });
}

/** The `data` of each SSE event in `body`. */
export function sseData(body: string): string[] {
  return body
    .split('\n\n')
    .map((event) => /^data: (.*)$/m.exec(event)?.[1])
    .filter((data): data is string => data !== undefined);
}

/** A free TCP port on this machine. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** The Portkey AI gateway, run locally as its README says (`npx gateway`). */
export async function startPortkey(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['node_modules/@portkey-ai/gateway/build/start-server.js', `--port=${port}`, '--headless'],
    { cwd: ROOT, stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(url)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error('the Portkey gateway did not start');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url: `${url}/v1`, stop: () => stopProcess(child) };
}
