/**
 * The API as the service worker wires it for documents, for the vector-store and file_search
 * tests: the echo engine for chat, an embedding model that hashes words into vectors (so that
 * search is deterministic, and a text over its 512-token context is refused as llama.cpp
 * refuses it), files uploaded through `POST /v1/openai/files`, and the calls the tests make.
 * `useDocumentsStack()` makes a fresh one for each test.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import { createApi, type Api } from '../../../src/api/router';
import { memoryDocumentStore, type DocumentStore } from '../../../src/documents/store';
import { ECHO_MODEL, staticModelDirectory, type ModelInfo } from '../../../src/models/models';
import type { ChatBackend, ChatEvent } from '../../../src/protocol/host/backend';
import { echoStack, URL_BASE } from '../helpers';
import { estimateTokens } from '../../../src/documents/chunk';
import { OpenAIError } from '../../../src/protocol/errors';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** An embedding model on the device, whose vectors the fake engine below makes. */
export const EMBEDDER: ModelInfo = {
  ...ECHO_MODEL,
  id: 'acme/embed-GGUF:Q8_0',
  owned_by: 'acme',
  context_window: 512,
  embedding: { dimensions: 64, pooling: 'mean', normalized: true, matryoshka: [] },
};

/** Each word hashed into one of 64 dimensions, normalised: texts sharing words are close. */
function hashVector(text: string): Float32Array {
  const vector = new Float32Array(64);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 0;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    vector[h % 64] = (vector[h % 64] ?? 0) + 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => x / norm);
}

/** The test's stack, made afresh for each test. */
export const state = {} as {
  stack: ReturnType<typeof echoStack>;
  api: Api;
  documents: DocumentStore;
  /** How many texts the embedding model embedded. */
  embedded: number;
  /** While set, the fake engine waits for it before embedding a batch after the first. */
  gate: Promise<void> | undefined;
};

export function makeApi(models: ModelInfo[] = [ECHO_MODEL, EMBEDDER]): Api {
  const backend: ChatBackend = {
    chat: (request, options) => state.stack.backend.chat(request, options),
    async *embed(request): AsyncGenerator<ChatEvent> {
      const texts = request.input as string[];
      // As llama.cpp refuses an input longer than the model's context.
      const long = texts.findIndex((t) => estimateTokens(t) > EMBEDDER.context_window);
      if (long !== -1) {
        throw new OpenAIError(
          'context_length_exceeded',
          `Input ${long} is longer than 512 tokens.`,
        );
      }
      if (state.embedded > 0 && state.gate) await state.gate;
      state.embedded += texts.length;
      yield { type: 'embeddings', vectors: texts.map(hashVector), prompt_tokens: texts.length };
    },
  };
  return createApi({
    backend,
    models: staticModelDirectory(models),
    documents: state.documents,
  });
}

/** A fresh stack for each test of the file. */
export function useDocumentsStack(): void {
  beforeEach(() => {
    state.stack = echoStack();
    state.documents = memoryDocumentStore();
    state.embedded = 0;
    state.gate = undefined;
    state.api = makeApi();
  });
  afterEach(() => state.stack.close());
}

export async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const response = await state.api.fetch(
    new Request(`${URL_BASE}/v1/openai/${path}`, {
      method,
      headers: {
        authorization: 'Bearer k',
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    }),
  );
  return { status: response.status, body: (await response.json()) as Json };
}

export async function upload(
  name: string,
  text: string | Uint8Array<ArrayBuffer>,
  type: string,
): Promise<string> {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', new File([text], name, { type }));
  const response = await state.api.fetch(
    new Request(`${URL_BASE}/v1/openai/files`, {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body: form,
    }),
  );
  const body = (await response.json()) as Json;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.id as string;
}

/** Waits until the store has no file in progress; returns it. */
export async function settled(storeId: string): Promise<Json> {
  let store: Json = {};
  for (let i = 0; i < 200; i += 1) {
    store = (await call('GET', `vector_stores/${storeId}`)).body;
    if (store.file_counts?.in_progress === 0) return store;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the store ${storeId} never settled: ${JSON.stringify(store)}`);
}

export const GUIDE = `# Hearth guide

Hearth runs models in the browser.

## Storage

Models are kept in the origin's storage; the quota decides how many fit.

## Relay

The relay lets programs outside the browser reach the tab. A fingerprint like zanzibarite
identifies its key.
`;
