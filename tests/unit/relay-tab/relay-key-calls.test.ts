/**
 * The pairing's calls on a site's page (src/relay-tab/relay-key-calls.ts), against the API's own
 * router with its settings in memory: what the service worker answers a page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { newKey } from '../../../relay/config.js';
import { memorySettingsStore, Settings } from '../../../src/api/settings';
import { relayKeyCalls } from '../../../src/relay-tab/relay-key-calls';
import { echoStack, URL_BASE } from '../helpers';

const API_BASE = `${URL_BASE}/v1/`;
const stacks: ReturnType<typeof echoStack>[] = [];
afterEach(() => stacks.splice(0).forEach((stack) => stack.close()));

/** The API with settings of its own, and `relayKeyCalls` on it. */
function api() {
  const settings = new Settings(memorySettingsStore());
  const stack = echoStack({ settings });
  stacks.push(stack);
  const fetchApi = (input: RequestInfo | URL, init?: RequestInit) =>
    stack.api.fetch(new Request(input, init));
  /** Whether the API lets `key` in now. */
  const accepts = async (key: string) =>
    (
      await fetchApi(`${API_BASE}openai/models`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).status === 200;
  return { calls: relayKeyCalls(API_BASE, fetchApi), accepts };
}

describe('the pairing’s calls with the relay’s key', () => {
  it('register the relay’s key and make issued keys the rule: then the relay’s key calls and another is refused', async () => {
    const { calls, accepts } = api();
    const key = newKey();
    await calls.registerKey('Relay at 127.0.0.1:8788', key);
    expect(await accepts('sk-site')).toBe(true);
    await calls.requireIssuedKeys(key);
    expect(await accepts(key)).toBe(true);
    expect(await accepts('sk-site')).toBe(false);
  });

  it('register the relay’s key again, after a reload, while only issued keys may call', async () => {
    const { calls } = api();
    const key = newKey();
    await calls.registerKey('Relay at 127.0.0.1:8788', key);
    await calls.requireIssuedKeys(key);
    const id = await calls.registerKey('Relay at 127.0.0.1:8788', key);
    expect(id).toMatch(/^key_/);
    await expect(calls.registerKey('Relay at 127.0.0.1:8788', key)).resolves.toBe(id);
  });

  it('list the issued keys and remove the relay’s, which the API then refuses', async () => {
    const { calls, accepts } = api();
    const key = newKey();
    const other = newKey();
    const id = await calls.registerKey('Relay at 127.0.0.1:8788', key);
    const otherId = await calls.registerKey('Relay at 127.0.0.1:8799', other);
    await calls.requireIssuedKeys(key);
    expect(await calls.listKeys(key)).toMatchObject([
      { id, name: 'Relay at 127.0.0.1:8788' },
      { id: otherId, name: 'Relay at 127.0.0.1:8799' },
    ]);
    await calls.removeKey(id, key);
    expect(await accepts(key)).toBe(false);
    expect(await accepts(other)).toBe(true);
    expect(await calls.listKeys(other)).toMatchObject([{ id: otherId }]);
  });

  it('fail to remove the last issued key, with the API’s reason', async () => {
    const { calls, accepts } = api();
    const key = newKey();
    const id = await calls.registerKey('Relay at 127.0.0.1:8788', key);
    await calls.requireIssuedKeys(key);
    await expect(calls.removeKey(id, key)).rejects.toThrow(
      /^The relay's key could not be removed: This is the last issued key/,
    );
    expect(await accepts(key)).toBe(true);
  });

  it('fail with the API’s 401 message when only issued keys may call and the relay’s is not one', async () => {
    const { calls } = api();
    const first = newKey();
    await calls.registerKey('Relay at 127.0.0.1:8788', first);
    await calls.requireIssuedKeys(first);
    await expect(calls.registerKey('Relay at 127.0.0.1:8799', newKey())).rejects.toThrow(
      /^The relay's key could not be registered: .*API key/,
    );
  });
});
