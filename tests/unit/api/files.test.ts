/**
 * OpenAI's Files on the device (src/api/files.ts, docs/api.md Files): every route through
 * createApi, at `/v1/openai/files` and its alias, the errors in their order, the quota (507 with
 * a fake room, and a write refused for its quota leaving nothing), and a delete that takes the
 * file out of every vector store that holds it, chunks and all.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createApi } from '../../../src/api/router';
import { createFile, MAX_FILE_BYTES } from '../../../src/api/vector-stores/files';
import { memoryDocumentStore, type DocumentStore } from '../../../src/documents/store';
import type { Chunk, VectorStoreFileObject, VectorStoreObject } from '../../../src/documents/types';
import { ECHO_MODEL, staticModelDirectory } from '../../../src/models/models';
import type { StorageEstimator } from '../../../src/models/storage-room';
import { scriptedBackend, URL_BASE } from '../helpers';

type Json = Record<string, unknown>;
const KEY = { authorization: 'Bearer k' };

let store: DocumentStore;
let api: ReturnType<typeof createApi>;

function apiWith(documents: DocumentStore, estimate?: StorageEstimator) {
  return createApi({
    backend: scriptedBackend(async function* () {}),
    models: staticModelDirectory([ECHO_MODEL]),
    documents,
    estimate,
  });
}

beforeEach(() => {
  store = memoryDocumentStore();
  api = apiWith(store);
});

function form(fields: Record<string, string | File>): FormData {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  return body;
}

const notes = (text = '# Notes\n\nThe heron nests by the mill.', name = 'notes.md') =>
  new File([text], name, { type: 'text/markdown' });

async function call(
  method: string,
  path: string,
  body?: BodyInit,
  headers: Record<string, string> = {},
  using = api,
): Promise<{ status: number; body: Json; response: Response }> {
  const response = await using.fetch(
    new Request(`${URL_BASE}/v1/${path}`, { method, body, headers: { ...KEY, ...headers } }),
  );
  const type = response.headers.get('content-type') ?? '';
  const json = type.startsWith('application/json') ? ((await response.clone().json()) as Json) : {};
  return { status: response.status, body: json, response };
}

const upload = (fields: Record<string, string | File>, using = api) =>
  call('POST', 'openai/files', form(fields), {}, using);

async function uploaded(name = 'notes.md', purpose = 'user_data'): Promise<Json> {
  const { status, body } = await upload({ file: notes(undefined, name), purpose });
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

const errorOf = (body: Json) => (body as { error: Json }).error;

describe('POST /files', () => {
  it('keeps an upload from a multipart form and answers OpenAI’s file object', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { status, body, response } = await upload({ file: notes(), purpose: 'user_data' });
    expect(status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(body).toEqual({
      id: expect.stringMatching(/^file-[A-Za-z0-9]{24}$/),
      object: 'file',
      bytes: 37,
      created_at: expect.any(Number),
      filename: 'notes.md',
      purpose: 'user_data',
      status: 'processed',
      expires_at: null,
    });
    expect(body.created_at).toBeGreaterThanOrEqual(before);
    expect(await store.getFile(body.id as string)).toMatchObject({
      content_type: 'text/markdown',
    });
  });

  it('answers at the /v1 alias too, with ids that differ', async () => {
    const { status, body } = await call(
      'POST',
      'files',
      form({ file: notes(), purpose: 'assistants' }),
    );
    expect(status).toBe(200);
    expect(body.id).not.toBe((await uploaded()).id);
  });

  it.each(['assistants', 'user_data', 'batch', 'fine-tune', 'vision', 'evals'])(
    'accepts the purpose %s',
    async (purpose) => {
      expect((await upload({ file: notes(), purpose })).body.purpose).toBe(purpose);
    },
  );

  it('refuses a body that is not a multipart form: 415', async () => {
    for (const headers of [{ 'content-type': 'application/json' }, {}] as Record<
      string,
      string
    >[]) {
      const { status, body } = await call('POST', 'openai/files', '{"purpose":"x"}', headers);
      expect(status).toBe(415);
      expect(errorOf(body)).toMatchObject({
        code: 'unsupported_media_type',
        type: 'invalid_request_error',
      });
      expect(errorOf(body).message).toContain('multipart/form-data');
    }
  });

  it('refuses a form it cannot read: 400', async () => {
    const headers = { 'content-type': 'multipart/form-data; boundary=nope' };
    const { status, body } = await call('POST', 'openai/files', 'not a form', headers);
    expect(status).toBe(400);
    expect(errorOf(body).code).toBe('invalid_value');
  });

  it.each([
    ['no file', 'missing_field', 'file', { purpose: 'user_data' }],
    ['a text field as file', 'invalid_type', 'file', { file: 'text', purpose: 'user_data' }],
    ['no purpose', 'missing_field', 'purpose', { file: notes() }],
    ['another purpose', 'invalid_value', 'purpose', { file: notes(), purpose: 'answers' }],
    ['an empty form', 'missing_field', 'file', {}],
  ] as const)('refuses %s: 400 %s naming %s', async (_, code, param, fields) => {
    const { status, body } = await upload(fields as Record<string, string | File>);
    expect(status).toBe(400);
    expect(errorOf(body)).toMatchObject({ code, param, type: 'invalid_request_error' });
    expect(await store.listFiles()).toEqual([]);
  });

  it('refuses a file over the largest: 413 naming file', async () => {
    const request = new Request(`${URL_BASE}/v1/openai/files`, {
      method: 'POST',
      body: form({ file: notes('0123456789ab'), purpose: 'user_data' }),
    });
    await expect(createFile(request, { store, maxFileBytes: 10 }, 'req_1')).rejects.toMatchObject({
      code: 'request_too_large',
      status: 413,
      param: 'file',
    });
    expect(MAX_FILE_BYTES).toBe(512 * 1024 * 1024);
  });

  it('is 507 storage_full when the room is short, before anything is stored', async () => {
    const tight = apiWith(store, async () => ({ quota: 1000, usage: 990 }));
    const { status, body } = await upload({ file: notes(), purpose: 'user_data' }, tight);
    expect(status).toBe(507);
    expect(errorOf(body)).toMatchObject({ code: 'storage_full', type: 'server_error' });
    expect(errorOf(body).message).toContain('notes.md');
    expect(await store.listFiles()).toEqual([]);
    const roomy = apiWith(store, async () => ({ quota: 1e9, usage: 0 }));
    expect((await upload({ file: notes(), purpose: 'user_data' }, roomy)).status).toBe(200);
  });

  it('is 507 when the write is refused for the quota, and keeps nothing of the file', async () => {
    const full: DocumentStore = {
      ...store,
      putFile: async (record, bytes) => {
        await store.putFile(record, bytes); // half-stored, then refused
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      },
    };
    const { status, body } = await upload({ file: notes(), purpose: 'user_data' }, apiWith(full));
    expect(status).toBe(507);
    expect(errorOf(body).code).toBe('storage_full');
    expect(await store.listFiles()).toEqual([]);
  });

  it('passes on another failure of the store as a 500, keeping nothing', async () => {
    const broken: DocumentStore = {
      ...store,
      putFile: async (record, bytes) => {
        await store.putFile(record, bytes);
        throw new Error('disk on fire');
      },
    };
    const { status } = await upload({ file: notes(), purpose: 'user_data' }, apiWith(broken));
    expect(status).toBe(500);
    expect(await store.listFiles()).toEqual([]);
  });
});

describe('GET /files', () => {
  it('lists the files newest first, as OpenAI’s list', async () => {
    const a = await uploaded('a.md');
    const b = await uploaded('b.md', 'assistants');
    const c = await uploaded('c.md');
    const { status, body } = await call('GET', 'openai/files');
    expect(status).toBe(200);
    expect(body).toEqual({
      object: 'list',
      data: [c, b, a],
      first_id: c.id,
      last_id: a.id,
      has_more: false,
    });
    const asc = await call('GET', 'files?order=asc');
    expect((asc.body.data as Json[]).map((f) => f.id)).toEqual([a.id, b.id, c.id]);
  });

  it('pages with limit and after, and filters by purpose', async () => {
    const a = await uploaded('a.md');
    const b = await uploaded('b.md', 'assistants');
    const c = await uploaded('c.md');
    const first = await call('GET', 'openai/files?limit=2');
    expect(first.body).toMatchObject({ data: [c, b], has_more: true, last_id: b.id });
    const next = await call('GET', `openai/files?limit=2&after=${b.id as string}`);
    expect(next.body).toMatchObject({ data: [a], has_more: false, first_id: a.id });
    const mine = await call('GET', 'openai/files?purpose=user_data');
    expect(mine.body.data).toEqual([c, a]);
    const none = await call('GET', 'openai/files?purpose=batch');
    expect(none.body).toEqual({
      object: 'list',
      data: [],
      first_id: null,
      last_id: null,
      has_more: false,
    });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=10001', 'limit'],
    ['limit=two', 'limit'],
    ['order=up', 'order'],
    ['after=file-none', 'after'],
  ])('refuses %s: 400 naming %s', async (query, param) => {
    await uploaded();
    const { status, body } = await call('GET', `openai/files?${query}`);
    expect(status).toBe(400);
    expect(errorOf(body).param).toBe(param);
  });
});

describe('GET /files/{id} and its content', () => {
  it('answers the file, and its bytes with the upload’s type and name', async () => {
    const file = await uploaded();
    const one = await call('GET', `openai/files/${file.id as string}`);
    expect(one).toMatchObject({ status: 200, body: file });
    const content = await call('GET', `files/${file.id as string}/content`);
    expect(content.status).toBe(200);
    expect(content.response.headers.get('content-type')).toBe('text/markdown');
    expect(content.response.headers.get('content-disposition')).toBe(
      `attachment; filename="notes.md"; filename*=UTF-8''notes.md`,
    );
    expect(content.response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await content.response.text()).toBe('# Notes\n\nThe heron nests by the mill.');
  });

  it('keeps bytes as they are, and names a file of any script', async () => {
    const bytes = new Uint8Array(256).map((_, i) => i);
    const file = new File([bytes], 'données "brutes".bin');
    const { body } = await upload({ file, purpose: 'assistants' });
    expect(body.filename).toBe('données "brutes".bin');
    const content = await call('GET', `openai/files/${body.id as string}/content`);
    expect(content.response.headers.get('content-type')).toBe('application/octet-stream');
    expect(content.response.headers.get('content-disposition')).toBe(
      `attachment; filename="donn_es _brutes_.bin"; filename*=UTF-8''donn%C3%A9es%20%22brutes%22.bin`,
    );
    expect(new Uint8Array(await content.response.arrayBuffer())).toEqual(bytes);
  });

  it('is 404 file_not_found, OpenAI’s type, for a file not kept', async () => {
    for (const path of ['openai/files/file-none', 'files/file-none/content']) {
      const { status, body } = await call('GET', path);
      expect(status).toBe(404);
      expect(errorOf(body)).toMatchObject({
        code: 'file_not_found',
        type: 'invalid_request_error',
        param: 'id',
      });
    }
  });

  it('is 404 unknown_url past the content', async () => {
    const file = await uploaded();
    for (const tail of ['/contents', '/content/x', '//']) {
      const { status, body } = await call('GET', `openai/files/${file.id as string}${tail}`);
      expect(status, tail).toBe(404);
      expect(errorOf(body).code).toBe('unknown_url');
    }
  });

  it('answers HEAD as GET, without the body', async () => {
    const file = await uploaded();
    const { status, response } = await call('HEAD', `openai/files/${file.id as string}/content`);
    expect(status).toBe(200);
    expect(await response.text()).toBe('');
  });
});

describe('DELETE /files/{id}', () => {
  const vectorStore = (id: string): VectorStoreObject => ({
    id,
    object: 'vector_store',
    created_at: 1,
    name: id,
    status: 'completed',
    file_counts: { in_progress: 0, completed: 1, failed: 0, cancelled: 0, total: 1 },
    usage_bytes: 0,
    last_active_at: null,
    metadata: {},
    expires_after: null,
    expires_at: null,
    embedding_model: 'hearth/embed',
  });
  const storeFile = (storeId: string, id: string): VectorStoreFileObject => ({
    id,
    object: 'vector_store.file',
    created_at: 1,
    vector_store_id: storeId,
    status: 'completed',
    last_error: null,
    usage_bytes: 0,
    attributes: {},
    chunking_strategy: {
      type: 'static',
      static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 },
    },
  });
  const chunk = (storeId: string, fileId: string, index: number): Chunk => ({
    id: `${storeId}/${fileId}/${index}`,
    vector_store_id: storeId,
    file_id: fileId,
    index,
    text: `chunk ${index}`,
    vector: new Float32Array([1, 0]),
  });

  it('forgets the file: deleted, then 404', async () => {
    const file = await uploaded();
    const id = file.id as string;
    const { status, body } = await call('DELETE', `openai/files/${id}`);
    expect(status).toBe(200);
    expect(body).toEqual({ id, object: 'file', deleted: true });
    expect((await call('GET', `openai/files/${id}`)).status).toBe(404);
    expect((await call('GET', `openai/files/${id}/content`)).status).toBe(404);
    expect((await call('GET', 'openai/files')).body.data).toEqual([]);
    const again = await call('DELETE', `files/${id}`);
    expect(again.status).toBe(404);
    expect(errorOf(again.body).code).toBe('file_not_found');
  });

  it('takes the file out of every vector store that holds it, with its chunks', async () => {
    const gone = (await uploaded('gone.md')).id as string;
    const kept = (await uploaded('kept.md')).id as string;
    for (const id of ['vs_a', 'vs_b', 'vs_c']) await store.putStore(vectorStore(id));
    for (const id of ['vs_a', 'vs_b']) {
      await store.putStoreFile(storeFile(id, gone));
      await store.putChunks(id, gone, [chunk(id, gone, 0), chunk(id, gone, 1)]);
    }
    await store.putStoreFile(storeFile('vs_a', kept));
    await store.putChunks('vs_a', kept, [chunk('vs_a', kept, 0)]);
    await store.putStoreFile(storeFile('vs_c', kept));

    expect((await call('DELETE', `openai/files/${gone}`)).status).toBe(200);

    expect(await store.getStoreFile('vs_a', gone)).toBeUndefined();
    expect(await store.getStoreFile('vs_b', gone)).toBeUndefined();
    expect((await store.listStoreFiles('vs_a')).map((f) => f.id)).toEqual([kept]);
    expect((await store.chunksOf('vs_a')).map((c) => c.id)).toEqual([`vs_a/${kept}/0`]);
    expect(await store.chunksOf('vs_b')).toEqual([]);
    expect((await store.listStores()).map((s) => s.id)).toEqual(['vs_a', 'vs_b', 'vs_c']);
    expect(await store.getFile(kept)).toBeDefined();
    expect(await store.getFile(gone)).toBeUndefined();
  });

  it('is 404 unknown_url for a path past the id', async () => {
    const file = await uploaded();
    const { status, body } = await call('DELETE', `openai/files/${file.id as string}/content`);
    expect(status).toBe(404);
    expect(errorOf(body).code).toBe('unknown_url');
    expect(await store.getFile(file.id as string)).toBeDefined();
  });
});
