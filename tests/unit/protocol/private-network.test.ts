import { afterEach, describe, expect, it, vi } from 'vitest';
import { AddedModels, memoryAddedStore } from '../../../src/models/added/added-models';
import { OpenAIError } from '../../../src/protocol/errors';
import type { FetchLike } from '../../../src/models/added/gguf-source';
import { addressSpaceOf, assertNetworkAllowed } from '../../../src/protocol/private-network';
import { createApi } from '../../../src/api/router';
import { memoryServerStore, Servers } from '../../../src/servers/servers';
import { EchoEngine } from '../../../src/engines/echo/echo-engine';
import { EngineQueue } from '../../../src/engine-host/queue';
import { DeviceModels } from '../../../sw/models';
import { MemoryCaches } from '../fake-storage';

const GGUF = new Uint8Array([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0, 0, 0, 0, 0]);

describe('addressSpaceOf', () => {
  it.each([
    ['localhost', 'loopback'],
    ['app.localhost', 'loopback'],
    ['127.0.0.1', 'loopback'],
    ['127.9.8.7', 'loopback'],
    ['[::1]', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['169.254.169.254', 'private'],
    ['100.64.0.1', 'private'],
    ['[fd00::1]', 'private'],
    ['[fe80::1]', 'private'],
    ['printer.local', 'private'],
    ['db.internal', 'private'],
    ['intranet', 'private'],
    ['172.32.0.1', 'public'],
    ['8.8.8.8', 'public'],
    ['huggingface.co', 'public'],
    ['[2001:db8::1]', 'public'],
  ])('classifies %s as %s', (host, space) => {
    expect(addressSpaceOf(host)).toBe(space);
  });
});

describe('assertNetworkAllowed', () => {
  const refusal = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      return err as OpenAIError;
    }
    return undefined;
  };

  it('refuses a target more private than the app with 400 on allow_private_network, saying how to allow it', () => {
    const err = refusal(() =>
      assertNetworkAllowed(
        'http://192.168.1.5/x.gguf',
        undefined,
        'source',
        'https://app.example/',
      ),
    );
    expect(err).toBeInstanceOf(OpenAIError);
    expect(err?.status).toBe(400);
    expect(err?.param).toBe('allow_private_network');
    expect(err?.message).toContain('"allow_private_network": true');
    expect(err?.message).toContain('local network');
  });

  it('lets the caller allow it, and needs nothing for targets no more private than the app', () => {
    const app = 'http://localhost:5173/';
    expect(
      refusal(() =>
        assertNetworkAllowed('http://192.168.1.5/', true, 'source', 'https://a.example/'),
      ),
    ).toBeUndefined();
    expect(
      refusal(() => assertNetworkAllowed('http://localhost:9000/v1', undefined, 'base_url', app)),
    ).toBeUndefined();
    expect(
      refusal(() => assertNetworkAllowed('http://10.0.0.2/v1', undefined, 'base_url', app)),
    ).toBeUndefined();
    expect(
      refusal(() =>
        assertNetworkAllowed('https://huggingface.co/', undefined, 'source', 'https://a.example/'),
      ),
    ).toBeUndefined();
  });

  it('refuses loopback from a private app, saying it is on this computer', () => {
    const err = refusal(() =>
      assertNetworkAllowed('http://127.0.0.1:8080/v1', false, 'base_url', 'http://10.0.0.4/'),
    );
    expect(err?.message).toContain('on this computer');
  });
});

describe('POST /v1/hearth/models from a public app', () => {
  function stack(fetch: FetchLike) {
    const APP = 'https://app.example/';
    const caches = new MemoryCaches();
    const models = new DeviceModels({
      catalog: [],
      appUrl: APP,
      caches,
      device: async () => null,
      host: async () => null,
      added: new AddedModels(memoryAddedStore()),
    });
    return createApi({
      backend: new EngineQueue([new EchoEngine()]),
      models,
      catalog: () => models.catalog(),
      adding: { catalog: models, appUrl: APP, fetch, caches, hubUrl: 'https://hub.example' },
    });
  }
  const add = (body: unknown) =>
    new Request('https://app.example/v1/hearth/models', {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('refuses a source on the private network without fetching it, then adds it when allowed', async () => {
    const fetched: string[] = [];
    const api = stack(async (url) => {
      fetched.push(url);
      return new Response(GGUF, { headers: { 'content-length': String(GGUF.length) } });
    });
    const refused = await api.fetch(add({ source: 'http://192.168.1.5/tiny-Q8_0.gguf' }));
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: { param: string; message: string } };
    expect(body.error.param).toBe('allow_private_network');
    expect(fetched).toEqual([]);
    const added = await api.fetch(
      add({ source: 'http://192.168.1.5/tiny-Q8_0.gguf', allow_private_network: true }),
    );
    expect(added.status).toBe(201);
  });
});

describe('POST /v1/hearth/servers from a public app', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('refuses a base_url on this computer without fetching it, then adds it when allowed', async () => {
    vi.stubGlobal('location', new URL('https://app.example/'));
    const fetched: string[] = [];
    const servers = new Servers(memoryServerStore(), {
      fetch: async (url) => {
        fetched.push(url);
        return Response.json({ object: 'list', data: [{ id: 'm', object: 'model' }] });
      },
      organisations: async () => new Set(),
      origin: 'https://app.example',
    });
    const err = await servers.add({ name: 'box', base_url: 'http://localhost:8000/v1' }).then(
      () => undefined,
      (e: unknown) => e as OpenAIError,
    );
    expect(err).toBeInstanceOf(OpenAIError);
    expect(err?.status).toBe(400);
    expect(err?.param).toBe('allow_private_network');
    expect(err?.message).toContain('on this computer');
    expect(fetched).toEqual([]);
    const record = await servers.add({
      name: 'box',
      base_url: 'http://localhost:8000/v1',
      allow_private_network: true,
    });
    expect(record.models).toEqual(['m']);
  });
});

describe('confirmPrivateNetwork', () => {
  it('asks before a server more private than the page, and sends the flag only when confirmed', async () => {
    const { confirmPrivateNetwork } =
      await import('../../../src/app/shared/private-network-confirm');
    const asked: string[] = [];
    const yes = (m: string) => (asked.push(m), true);
    expect(confirmPrivateNetwork('http://localhost:8000/v1', yes, 'https://app.example/')).toEqual({
      allow_private_network: true,
    });
    expect(asked[0]).toContain('on this computer');
    expect(
      confirmPrivateNetwork('http://gpu-box:8000/v1', () => false, 'https://app.example/'),
    ).toBeNull();
    expect(
      confirmPrivateNetwork('http://localhost:9/x.gguf', () => false, 'http://localhost:5173/'),
    ).toEqual({});
  });
});
