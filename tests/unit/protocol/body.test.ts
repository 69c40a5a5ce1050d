import { describe, expect, it } from 'vitest';
import { readJsonBody } from '../../../src/protocol/body';
import { Channel } from '../../../src/bridge/channel';
import { EchoEngine } from '../../../src/engines/echo/echo-engine';
import { EngineQueue } from '../../../src/engine-host/queue';
import type { ModelService } from '../../../src/protocol/host/backend';
import type { DownloadProgress } from '../../../src/protocol/host/downloads';
import { OpenAIError } from '../../../src/protocol/errors';
import { ECHO_MODEL, staticModelDirectory, type ModelInfo } from '../../../src/models/models';
import { createApi } from '../../../src/api/router';
import { memorySettingsStore, Settings } from '../../../src/api/settings';
import { chatRequest, echoBody, echoStack, sseData, URL_BASE } from '../helpers';

/**
 * A request as Firefox hands it over: `Request.prototype.body` does not exist there, so `body` is
 * `undefined` (not `null`) whether or not the request has a body.
 */
function asInFirefox(request: Request): Request {
  Object.defineProperty(request, 'body', { value: undefined });
  expect(request.body).toBeUndefined();
  return request;
}

function post(path: string, body?: BodyInit, headers: Record<string, string> = {}): Request {
  return new Request(`${URL_BASE}${path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json', ...headers },
    ...(body !== undefined && { body }),
  });
}

async function failure(promise: Promise<unknown>): Promise<OpenAIError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(OpenAIError);
  return error as OpenAIError;
}

describe('a request whose body is not a stream (Firefox)', () => {
  it('reads its JSON', async () => {
    const request = asInFirefox(post('/v1/chat/completions', JSON.stringify({ a: [1, 'é'] })));
    expect(await readJsonBody(request)).toEqual({ a: [1, 'é'] });
  });

  it('accepts a body of exactly the limit', async () => {
    const body = JSON.stringify({ text: 'x'.repeat(50) });
    const request = asInFirefox(post('/v1/chat/completions', body));
    expect(await readJsonBody(request, new TextEncoder().encode(body).length)).toEqual({
      text: 'x'.repeat(50),
    });
  });

  it('answers 413 for a body over the limit that declares no length', async () => {
    const request = asInFirefox(
      post('/v1/chat/completions', JSON.stringify({ text: 'x'.repeat(100) })),
    );
    expect(request.headers.get('content-length')).toBeNull();
    expect((await failure(readJsonBody(request, 64))).code).toBe('request_too_large');
  });

  it('answers 413 from the declared length without reading the body', async () => {
    const request = asInFirefox(post('/v1/chat/completions', '{}', { 'content-length': '100' }));
    expect((await failure(readJsonBody(request, 64))).code).toBe('request_too_large');
    expect(request.bodyUsed).toBe(false);
  });

  it.each([
    ['an empty body', ''],
    ['no body at all', undefined],
    ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0x7d])],
    ['broken JSON', '{"model":'],
  ])('answers %s with 400 invalid_json', async (_what, body) => {
    const request = asInFirefox(post('/v1/chat/completions', body));
    expect((await failure(readJsonBody(request))).code).toBe('invalid_json');
  });

  it('answers a chat completion through the API', async () => {
    const stack = echoStack();
    const response = await stack.api.fetch(asInFirefox(chatRequest(echoBody('hi there'))));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe('hi there');
    stack.close();
  });

  it('issues a key with and without a body', async () => {
    const stack = echoStack({ settings: new Settings(memorySettingsStore()) });
    const named = await stack.api.fetch(
      asInFirefox(post('/v1/hearth/keys', JSON.stringify({ name: 'gateway' }))),
    );
    expect(named.status).toBe(201);
    expect(await named.json()).toMatchObject({ name: 'gateway' });
    const bare = await stack.api.fetch(asInFirefox(post('/v1/hearth/keys')));
    expect(bare.status).toBe(201);
    expect(await bare.json()).toMatchObject({ name: 'Key', key: expect.stringMatching(/^hk-/) });
    const tooBig = await stack.api.fetch(
      asInFirefox(post('/v1/hearth/keys', JSON.stringify({ name: 'x'.repeat(70 * 1024) }))),
    );
    expect(tooBig.status).toBe(413);
    stack.close();
  });

  it('reads whether a download streams its progress, and streams it without a body', async () => {
    const model: ModelInfo = { ...ECHO_MODEL, id: 'acme/tiny', owned_by: 'acme' };
    const service: Pick<ModelService, 'download' | 'cancelDownload'> = {
      download() {
        const channel = new Channel<DownloadProgress>();
        channel.push({
          object: 'hearth.download',
          model: model.id,
          phase: 'done',
          bytes_done: 1,
          bytes_total: 1,
          files_done: 1,
          files_total: 1,
          file: null,
        });
        channel.close();
        return channel;
      },
      cancelDownload: async () => undefined,
    };
    const api = createApi({
      backend: Object.assign(new EngineQueue([new EchoEngine()]), service),
      models: staticModelDirectory([model]),
    });
    const path = '/v1/hearth/models/acme%2Ftiny/download';
    const quiet = await api.fetch(asInFirefox(post(path, JSON.stringify({ stream: false }))));
    expect(quiet.status).toBe(200);
    expect(await quiet.json()).toMatchObject({ phase: 'done' });
    const streamed = await api.fetch(asInFirefox(post(path)));
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await sseData(streamed)).toEqual([expect.objectContaining({ phase: 'done' })]);
    const bad = await api.fetch(asInFirefox(post(path, JSON.stringify({ stream: 'no' }))));
    expect(bad.status).toBe(400);
  });
});
