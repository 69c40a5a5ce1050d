import { describe, expect, it } from 'vitest';
import type { Engine, EngineOutput } from '../../../src/engines/engine';
import { EngineQueue } from '../../../src/engine-host/queue';
import { Channel } from '../../../src/bridge/channel';
import { HostLostError, type ModelService } from '../../../src/protocol/host/backend';
import type { DownloadPhase, DownloadProgress } from '../../../src/protocol/host/downloads';
import { OpenAIError } from '../../../src/protocol/errors';
import {
  ECHO_MODEL,
  staticModelDirectory,
  type ModelDirectory,
  type ModelInfo,
} from '../../../src/models/models';
import { parseModelPath } from '../../../src/api/manage';
import { createApi } from '../../../src/api/router';
import { chatRequest, echoBody, echoStack, sseData, URL_BASE } from '../helpers';

/** An engine whose loads take `loadMs` and can be made to fail. */
class SlowLoadEngine implements Engine {
  loadedModel: string | null = null;
  readonly models = ['acme/slow'];
  loads = 0;
  constructor(
    private readonly loadMs: number,
    private readonly failWith?: Error,
  ) {}
  serves(model: string) {
    return model === 'acme/slow';
  }
  isLoaded(model: string) {
    return this.loadedModel === model;
  }
  async load(model: string) {
    this.loads += 1;
    await new Promise((resolve) => setTimeout(resolve, this.loadMs));
    if (this.failWith) throw this.failWith;
    this.loadedModel = model;
  }
  async *generate(): AsyncGenerator<EngineOutput> {
    yield { type: 'token', text: 'hi' };
    yield { type: 'end', finish_reason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1 } };
  }
}

const SLOW: ModelInfo = { ...ECHO_MODEL, id: 'acme/slow', owned_by: 'acme' };

function directory(runnable = true): ModelDirectory {
  return staticModelDirectory([SLOW], {
    ready: async () => {
      if (!runnable) throw new OpenAIError('webgpu_unavailable', 'no GPU', { shouldRetry: false });
    },
  });
}

const post = (path: string) =>
  new Request(`${URL_BASE}${path}`, { method: 'POST', headers: { authorization: 'Bearer k' } });

describe('POST /v1/hearth/models/{org}/{name}/load', () => {
  it('puts the model on the GPU and says so', async () => {
    const engine = new SlowLoadEngine(5);
    const api = createApi({ backend: new EngineQueue([engine]), models: directory() });
    const response = await api.fetch(post('/v1/hearth/models/acme%2Fslow/load'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: 'acme/slow', object: 'model', loaded: true });
    expect(engine.loadedModel).toBe('acme/slow');
  });

  it('answers 503 model_loading when the load outlasts the limit, and lets it carry on', async () => {
    const engine = new SlowLoadEngine(80);
    const api = createApi({
      backend: new EngineQueue([engine]),
      models: directory(),
      firstTokenTimeoutMs: 20,
    });
    const response = await api.fetch(post('/v1/hearth/models/acme/slow/load'));
    expect(response.status).toBe(503);
    expect((await response.json()).error.code).toBe('model_loading');
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(engine.loadedModel).toBe('acme/slow');
  });

  it('passes the engine’s failure on', async () => {
    const api = createApi({
      backend: new EngineQueue([
        new SlowLoadEngine(1, new OpenAIError('engine_error', 'cannot fetch')),
      ]),
      models: directory(),
    });
    const response = await api.fetch(post('/v1/hearth/models/acme/slow/load'));
    expect(response.status).toBe(500);
    expect((await response.json()).error.message).toBe('cannot fetch');
  });

  it.each([
    ['an unknown model', '/v1/hearth/models/acme/none/load', 404, 'model_not_found', true],
    [
      'a model this device cannot run',
      '/v1/hearth/models/acme/slow/load',
      503,
      'webgpu_unavailable',
      false,
    ],
    ['an unknown action', '/v1/hearth/models/acme/slow/dance', 404, 'unknown_url', true],
  ])('refuses %s', async (_what, path, status, code, runnable) => {
    const api = createApi({
      backend: new EngineQueue([new SlowLoadEngine(1)]),
      models: directory(runnable),
    });
    const response = await api.fetch(post(path));
    expect(response.status).toBe(status);
    expect((await response.json()).error.code).toBe(code);
  });

  it('loads through the bridge, where a load is a request of its own', async () => {
    const stack = echoStack();
    const response = await stack.api.fetch(post('/v1/hearth/models/hearth%2Fecho/load'));
    expect(await response.json()).toEqual({ id: 'hearth/echo', object: 'model', loaded: true });
    expect((await stack.api.fetch(chatRequest(echoBody('after a load')))).status).toBe(200);
    expect(stack.server.openPorts).toBe(0);
    stack.close();
  });
});

describe('parseModelPath', () => {
  it.each([
    ['acme/slow/load', { id: 'acme/slow', action: 'load' }],
    ['acme%2Fslow/load', { id: 'acme/slow', action: 'load' }],
    ['acme/slow', { id: 'acme/slow', action: '' }],
    ['acme%2Fslow', { id: 'acme/slow', action: '' }],
    ['acme', undefined],
    ['a/b/c/load', undefined],
    ['%E0%A4%A/load', undefined],
  ])('reads %s', (rest, expected) => {
    expect(parseModelPath(rest)).toEqual(expected);
  });
});

describe('POST /v1/hearth/models/{org}/{name}/download', () => {
  const progress = (phase: DownloadPhase): DownloadProgress => ({
    object: 'hearth.download',
    model: SLOW.id,
    phase,
    bytes_done: 0,
    bytes_total: null,
    files_done: 0,
    files_total: null,
    file: null,
  });

  /** A backend whose downloads play `scripts` in turn, each ending in an error or not. */
  function downloading(scripts: { phases: DownloadPhase[]; error?: Error }[]) {
    const calls: number[] = [];
    const service: Pick<ModelService, 'download' | 'cancelDownload'> = {
      download() {
        const script = scripts[calls.length]!;
        calls.push(calls.length);
        const channel = new Channel<DownloadProgress>();
        for (const phase of script.phases) channel.push(progress(phase));
        if (script.error) channel.fail(script.error);
        else channel.close();
        return channel;
      },
      cancelDownload: async () => undefined,
    };
    const backend = Object.assign(new EngineQueue([new SlowLoadEngine(1)]), service);
    return { api: createApi({ backend, models: directory() }), calls };
  }

  it('follows the download onto the next host when the one running it closes', async () => {
    const { api, calls } = downloading([
      { phases: ['files'], error: new HostLostError() },
      { phases: ['files', 'done'] },
    ]);
    const events = await sseData(await api.fetch(post('/v1/hearth/models/acme/slow/download')));
    expect(events.map((e) => (e as DownloadProgress).phase)).toEqual(['files', 'files', 'done']);
    expect(calls).toHaveLength(2);
  });

  it('ends the stream with an error event when the download cannot go on', async () => {
    const { api } = downloading([
      { phases: ['files'], error: new OpenAIError('engine_error', 'the worker broke') },
    ]);
    const events = await sseData(await api.fetch(post('/v1/hearth/models/acme/slow/download')));
    expect(events).toEqual([
      progress('files'),
      { error: expect.objectContaining({ code: 'engine_error', message: 'the worker broke' }) },
    ]);
  });

  it('answers an error status when the download fails before its first report', async () => {
    const { api } = downloading([
      { phases: [], error: new OpenAIError('model_not_found', 'no such model') },
    ]);
    const response = await api.fetch(post('/v1/hearth/models/acme/slow/download'));
    expect(response.status).toBe(404);
  });
});
