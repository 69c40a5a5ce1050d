/**
 * What `hearth-relay` prints, read from its output as a person sees it in the terminal: the
 * relay's own lines break where it breaks them, and what a caller sends is still shown escaped.
 */
import { describe, expect, it } from 'vitest';
import { keyFingerprint } from '../../../src/relay-tab/relay-keys';
import { spawnRelay } from '../../relay-cli';
import { eventually } from '../helpers';
import { APP, cleanups, handshake, tabLink } from './harness';

/** `hearth-relay` on a free port, with a key file of its own; `output()` is what it printed so far. */
async function runRelay() {
  const running = await spawnRelay(APP, 10_000);
  cleanups.push(running.stop);
  return { output: running.output, link: new URL(running.link) };
}

describe('the relay’s terminal output', () => {
  it('prints the fingerprint of its key, not the key again, and the link names the same', async () => {
    const running = await spawnRelay(APP, 10_000);
    cleanups.push(running.stop);
    const [, fingerprint = ''] = /^ {2}Fingerprint: +(\S+)/m.exec(running.output()) ?? [];
    expect(fingerprint).toBe(await keyFingerprint(running.key));
    expect(new URL(running.link).searchParams.get('fingerprint')).toBe(fingerprint);
    // The `API key:` line stays the one that shows a key.
    expect(running.output().match(/hk-/g)).toHaveLength(1);
    expect(running.output()).toMatch(/check that the\s+confirmation shows the fingerprint above/);
  });

  it('puts the pairing link on a line of its own after a tab ends the pairing, not an escaped \\x0a', async () => {
    const { output, link } = await runRelay();
    const tab = tabLink(link.searchParams.get('relay') ?? '', {
      credential: { code: link.searchParams.get('pair') ?? '' },
      replay: async () => new Response('{}'),
    });
    await eventually(() => tab.state === 'paired', 5000);
    tab.end();
    await eventually(() => output().includes('The tab ended the pairing'), 5000);
    expect(output()).toContain(`To pair a tab again, open:\n  ${link.origin}`);
    expect(output()).not.toContain('\\x0a');
  });

  it('still shows a caller’s control bytes escaped', async () => {
    const { output, link } = await runRelay();
    void handshake(link.searchParams.get('relay') ?? '', 'http://evil.example\u009b31m');
    await eventually(() => output().includes('Refused a connection'), 5000);
    expect(output()).toContain('http://evil.example\\x9b31m');
    expect(output()).not.toContain('\u009b');
  });
});

// The harness undoes what a test made after it (`cleanups`), in every file that uses it: the
// relays it starts are processes of their own, which would outlive the run.
describe('a relay a test starts', () => {
  let baseUrl = '';
  it('answers while the test runs (503: no tab is paired)', async () => {
    const running = await spawnRelay(APP, 10_000);
    cleanups.push(running.stop);
    ({ baseUrl } = running);
    expect((await fetch(`${baseUrl}/models`)).status).toBe(503);
  });

  it('is stopped once that test has ended', async () => {
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    // Its port refuses connections: nothing listens there any more.
    await expect(fetch(`${baseUrl}/models`)).rejects.toMatchObject({
      cause: { code: 'ECONNREFUSED' },
    });
  });
});
