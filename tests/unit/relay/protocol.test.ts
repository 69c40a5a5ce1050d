import { describe, expect, it } from 'vitest';
import {
  API_ROUTES,
  bearerKey,
  bodyLimitOf,
  mediaTypeOf,
  isApiPath,
  isLoopbackRelayUrl,
  openaiPathOf,
  RELAYED_PATHS,
  takesBody,
} from '../../../relay/protocol.js';
import { isLoopbackHost, isLoopbackPeer } from '../../../relay/address.js';

describe('the relay’s rules', () => {
  it.each([
    ['/v1/openai/chat/completions', true],
    ['/v1/openai/models/hearth%2Fecho', true],
    ['/v1/chat/completions', true],
    ['/v1/models', true],
    ['/v1/models/hearth/echo', true],
    ['/v1/openai/embeddings', true],
    ['/v1/embeddings', true],
    ['/v1/openai', false],
    ['/v1/hearth/keys', false],
    ['/v1/hearth/settings', false],
    ['/v1/completions', false],
    ['/index.html', false],
    ['/', false],
  ])('counts %s as an API path: %s', (path, expected) => {
    expect(isApiPath(path)).toBe(expected);
  });

  it.each([
    ['localhost', true],
    ['localhost:8788', true],
    ['127.0.0.1:8788', true],
    ['[::1]:8788', true],
    ['LOCALHOST:8788', true],
    ['127.0.0.2', false],
    ['evil.example', false],
    ['localhost.evil.example', false],
    ['127.0.0.1.nip.io:8788', false],
    ['127.0.0.1:8788:1', false],
    ['', false],
    [undefined, false],
  ])('counts the Host %s as this machine: %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['192.0.2.2', false],
    ['::ffff:192.0.2.2', false],
    ['fd00::2', false],
    ['127.0.0.1.5', false],
    ['', false],
    [undefined, false],
  ])('counts the peer address %s as this machine: %s', (address, expected) => {
    expect(isLoopbackPeer(address)).toBe(expected);
  });

  it.each([
    ['ws://127.0.0.1:8788/relay', true],
    ['ws://localhost:8788/relay', true],
    ['wss://localhost:8788/relay', true],
    ['ws://[::1]:8788/relay', false],
    ['ws://192.168.1.20:8788/relay', false],
    ['ws://relay.example/relay', false],
    ['http://127.0.0.1:8788/relay', false],
    ['ws://127.0.0.1.evil.example/relay', false],
    ['not a url', false],
  ])('lets a pairing link name the relay %s: %s', (url, expected) => {
    expect(isLoopbackRelayUrl(url)).toBe(expected);
  });
});

describe('what the relay reads of a request', () => {
  it.each([
    ['POST', '/v1/openai/chat/completions', true],
    ['POST', '/v1/chat/completions', true],
    ['GET', '/v1/chat/completions', false],
    ['PUT', '/v1/openai/chat/completions', false],
    ['POST', '/v1/openai/models', false],
    ['POST', '/v1/openai/nowhere', false],
    ['POST', '/v1/openai/chat/completions/x', false],
    ['POST', '/v1/openai/embeddings', true],
    ['POST', '/v1/embeddings', true],
    ['GET', '/v1/openai/embeddings', false],
    ['GET', '/v1/embeddings', false],
    ['POST', '/v1/openai/embeddings/x', false],
  ])('reads the body of %s %s: %s', (method, path, expected) => {
    expect(takesBody(method, path)).toBe(expected);
  });

  it.each([
    ['Bearer sk-1', 'sk-1'],
    ['bearer \t sk-1 ', 'sk-1'],
    ['Bearer ', null],
    ['Bearer', null],
    ['Basic abc', null],
    ['sk-1', null],
    [undefined, null],
  ])('reads the key of Authorization %j as %j, as the API does', (header, expected) => {
    expect(bearerKey(header)).toBe(expected);
  });
});

describe('the relay and the route table (API_ROUTES)', () => {
  const LIMITS = { plain: 4, images: 64, files: 32 };
  /** A pathname at `path`, its `*` filled in. */
  const at = (path: string) => `/v1/${path.replace(/\*$/, 'hearth/echo')}`;
  /** Hearth's own routes are the API's, but not the relay's: it forwards OpenAI's only. */
  const relayed = API_ROUTES.filter((route) => !route.path.startsWith('hearth/'));
  const own = API_ROUTES.filter((route) => route.path.startsWith('hearth/'));

  it('has OpenAI’s routes and Hearth’s own, and each alias stands for an OpenAI route', () => {
    expect(relayed.length).toBeGreaterThan(0);
    expect(own.length).toBeGreaterThan(0);
    for (const route of relayed.filter((r) => !r.path.startsWith('openai/'))) {
      expect(route.aliasOf, route.path).toBe(`openai/${route.path}`);
      const { method, name, body, when } = route;
      expect(API_ROUTES).toContainEqual({ method, path: route.aliasOf, name, body, when });
    }
  });

  it.each(relayed.map((route) => [route.method, route.path, route.body] as const))(
    'forwards %s %s, with its body where it reads one (%s)',
    (method, path, body) => {
      expect(isApiPath(at(path))).toBe(true);
      expect(takesBody(method, at(path))).toBe(body !== 'none');
      // The limit and media type go by the path: those of the body its POST reads, if any.
      const read = relayed.find((r) => r.path === path && r.body !== 'none')?.body;
      expect(bodyLimitOf(at(path), LIMITS)).toBe(read === 'chat' ? 64 : read === 'form' ? 32 : 4);
      expect(mediaTypeOf(at(path))).toBe(
        read === 'form' ? 'multipart/form-data' : 'application/json',
      );
      // With a trailing slash the API answers the route, the relay as the table writes it (under
      // a `*`, a slash more is still the rest: `vector_stores/{id}/files/`).
      if (!path.endsWith('*')) expect(takesBody(method, `${at(path)}/`)).toBe(false);
    },
  );

  it.each(own.map((route) => [route.method, route.path] as const))(
    'forwards no %s %s (Hearth’s own), nor its body; under /v1/openai/ the API answers its 404',
    (method, path) => {
      expect(isApiPath(at(path))).toBe(false);
      expect(takesBody(method, at(path))).toBe(false);
      expect(isApiPath(`/v1/openai/${path}`)).toBe(true);
      expect(takesBody(method, `/v1/openai/${path}`)).toBe(false);
      expect(bodyLimitOf(at(path), LIMITS)).toBe(4);
    },
  );

  it('reads no body of a method a relayed path lacks', () => {
    for (const route of relayed) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']) {
        const there = relayed.some(
          (r) => r.path === route.path && r.method === method && r.body !== 'none',
        );
        expect(takesBody(method, at(route.path)), `${method} ${route.path}`).toBe(there);
      }
    }
  });

  it('names the paths it forwards as the table has them: /v1/openai/* and the aliases', () => {
    const aliases = relayed.filter((r) => r.aliasOf !== undefined).map((r) => `/v1/${r.path}`);
    expect(RELAYED_PATHS).toEqual(['/v1/openai/*', ...new Set(aliases)]);
  });

  it('tells a server the user added OpenAI’s paths of chat completions and embeddings', () => {
    expect(openaiPathOf('chat')).toBe('/chat/completions');
    expect(openaiPathOf('embeddings')).toBe('/embeddings');
    expect(() => openaiPathOf('status')).toThrow();
  });

  it.each([
    ['/v1/openai/chat/completions', 64],
    ['/v1/chat/completions', 64],
    ['/v1/openai/chat/completions/', 4],
    ['/v1/openai/embeddings', 4],
    ['/v1/models', 4],
    ['/v1/openai/files', 32],
    ['/v1/files', 32],
    ['/v1/openai/files/', 4],
  ])('takes a body of up to the limit of %s: %i', (path, limit) => {
    expect(bodyLimitOf(path, LIMITS)).toBe(limit);
  });
});
