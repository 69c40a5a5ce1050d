import { describe, expect, it } from 'vitest';
import {
  bearerKey,
  isApiPath,
  isLoopbackHost,
  isLoopbackPeer,
  isLoopbackRelayUrl,
  takesBody,
} from '../../../relay/protocol.js';

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
