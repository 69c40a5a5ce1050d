import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../../src/app/shared/api-client';
import { catalogModel } from '../models/catalog-model';
import { chatModels, defaultModel, NO_MODEL } from '../../../../src/app/chat/chat-models';

/** A downloaded GGUF, with `extra` over it. */
const model = (id: string, extra: Partial<CatalogModel> = {}) =>
  catalogModel(id, {
    engine: 'llama.cpp',
    size_mb: 100,
    vram_required_mb: null,
    downloaded: true,
    source: 'curated',
    ...extra,
  });

const echo = model('hearth/echo', { engine: 'echo', source: 'built-in' });
const local = model('a/local:Q4');
const loaded = model('b/loaded:Q4', { loaded: true });
const remote = model('box/remote', { engine: 'server', source: 'server', leaves_device: true });
const embed = model('c/embed:Q8', {
  embedding: { dimensions: 8, pooling: 'mean', normalized: true, matryoshka: [] },
});
const away = model('d/away:Q4', { downloaded: false });

describe('chatModels', () => {
  it('keeps the models that can answer a conversation: on the device, runnable, not embedding models', () => {
    const unavailable = model('e/gpu', { available: false });
    expect(chatModels([echo, local, remote, embed, away, unavailable]).map((m) => m.id)).toEqual([
      'hearth/echo',
      'a/local:Q4',
      'box/remote',
    ]);
  });
});

describe('defaultModel', () => {
  it('takes the preferred model while it can answer', () => {
    expect(defaultModel([echo, local, loaded, remote], 'box/remote', null)).toBe('box/remote');
    expect(defaultModel([echo, local, loaded], 'a/local:Q4', null)).toBe('a/local:Q4');
  });

  it('falls back to the loaded model, then one on the device, when the preferred one cannot answer', () => {
    expect(defaultModel([echo, local, loaded], 'gone/model', null)).toBe('b/loaded:Q4');
    expect(defaultModel([echo, local], null, null)).toBe('a/local:Q4');
  });

  it('takes the model last picked in a conversation, after the preferred one, while it can answer', () => {
    expect(defaultModel([echo, local, loaded], null, 'a/local:Q4')).toBe('a/local:Q4');
    expect(defaultModel([echo, local, loaded], 'b/loaded:Q4', 'a/local:Q4')).toBe('b/loaded:Q4');
    expect(defaultModel([echo, local, loaded], null, 'gone/model')).toBe('b/loaded:Q4');
    // The echo engine, picked by a developer, is theirs again in the next conversation.
    expect(defaultModel([echo, local], null, 'hearth/echo')).toBe('hearth/echo');
  });

  it("never picks the echo engine or a server's model unless chosen: with no real model, none", () => {
    expect(defaultModel([echo, remote], null, null)).toBe(NO_MODEL);
    expect(defaultModel([], null, null)).toBe(NO_MODEL);
    expect(defaultModel([echo, remote], null, 'box/remote')).toBe('box/remote');
  });
});
