/**
 * Helpers for the relay's tests: the relay as its users start it (`node relay/cli.js`, reading what
 * it prints: tests/relay-cli.ts), curl as a process, and the Portkey AI gateway run locally.
 */
import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { expect, type Page } from '@playwright/test';
import { spawnRelay, stopProcess, type RelayProcess } from '../relay-cli';

const ROOT = new URL('../../', import.meta.url).pathname;

export type RunningRelay = RelayProcess;

/**
 * Starts `hearth-relay` for the app at `app`, on a free port, with a key file of its own (see
 * tests/relay-cli.ts).
 */
export function startRelay(app: string): Promise<RunningRelay> {
  return spawnRelay(app);
}

/** Follows the relay's pairing link in `page` and says yes. */
export async function pairTab(page: Page, relay: RunningRelay): Promise<void> {
  await page.goto(relay.link);
  const dialog = page.getByRole('dialog', { name: 'Share with the relay?' });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(`Share this tab's models with the relay at ${relay.wsUrl}?`);
  // The fingerprint of the relay's key, as the relay printed it beside the key.
  await expect(dialog).toContainText(`The relay's key has the fingerprint ${relay.fingerprint}.`);
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

/** The SSE reader of the browser tests' helpers, for the bodies curl read. */
export { sseData } from './helpers';

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
