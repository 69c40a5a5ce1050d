/**
 * What `hearth-relay` prints, read from its stdout as a person sees it in the terminal: the
 * relay's own lines break where it breaks them, and what a caller sends is still shown escaped.
 */
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import { RelayLink } from '../../../src/relay-tab/relay-link';
import { eventually } from '../helpers';
import { API_BASE, APP, cleanups, socketOf } from './harness';

/** `hearth-relay` on a free port, with a key file of its own; `output()` is its stdout so far. */
async function runRelay() {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-relay-banner-'));
  const child = spawn(
    process.execPath,
    ['relay/cli.js', '--port', '0', '--app', APP, '--config', join(dir, 'relay.json')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  cleanups.push(
    () =>
      child.exitCode ??
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  );
  let out = '';
  child.stdout.on('data', (part: Buffer) => (out += part.toString()));
  const output = () => out;
  await eventually(() => /confirm\.\n\s+\S+/.test(out), 10_000);
  const link = new URL(/confirm\.\n\s+(\S+)/.exec(out)?.[1] ?? '');
  return { output, link };
}

describe('the relay’s terminal output', () => {
  it('puts the pairing link on a line of its own after a tab ends the pairing, not an escaped \\x0a', async () => {
    const { output, link } = await runRelay();
    const tab = new RelayLink({
      url: link.searchParams.get('relay') ?? '',
      credential: { code: link.searchParams.get('pair') ?? '' },
      apiBase: API_BASE,
      onHello: async () => undefined,
      WebSocket: socketOf(new URL(APP).origin),
      replay: async () => new Response('{}'),
    });
    cleanups.push(() => tab.state !== 'closed' && tab.end());
    await eventually(() => tab.state === 'paired', 5000);
    tab.end();
    await eventually(() => output().includes('The tab ended the pairing'), 5000);
    expect(output()).toContain(`To pair a tab again, open:\n  ${link.origin}`);
    expect(output()).not.toContain('\\x0a');
  });

  it('still shows a caller’s control bytes escaped', async () => {
    const { output, link } = await runRelay();
    const ws = new NodeWebSocket(link.searchParams.get('relay') ?? '', {
      origin: 'http://evil.example\u009b31m',
    });
    ws.on('error', () => undefined);
    cleanups.push(() => ws.terminate());
    await eventually(() => output().includes('Refused a connection'), 5000);
    expect(output()).toContain('http://evil.example\\x9b31m');
    expect(output()).not.toContain('\u009b');
  });
});
