/**
 * Vector stores over the API as the service worker wires it (./documents-stack.ts): stores and
 * their files, indexing in the background (a file that is no document fails alone, chunks cut to
 * the embedding model's context, progress as a download's), hybrid search, batches, and deletes
 * that forget.
 */
import { describe, expect, it } from 'vitest';
import { ECHO_MODEL } from '../../../src/models/models';
import {
  call,
  EMBEDDER,
  GUIDE,
  makeApi,
  settled,
  state,
  upload,
  useDocumentsStack,
  type Json,
} from './documents-stack';

useDocumentsStack();

describe('vector stores', () => {
  it('indexes a Markdown file in the background and finds a rare word’s passage, with its heading', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const created = await call('POST', 'vector_stores', { name: 'Docs', file_ids: [file] });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'vector_store',
      name: 'Docs',
      embedding_model: EMBEDDER.id,
    });
    expect(created.body.id).toMatch(/^vs_[A-Za-z0-9]{24}$/);
    const store = await settled(created.body.id);
    expect(store).toMatchObject({
      status: 'completed',
      file_counts: { in_progress: 0, completed: 1, failed: 0, cancelled: 0, total: 1 },
    });
    expect(store.usage_bytes).toBeGreaterThan(0);
    const found = await call('POST', `vector_stores/${store.id}/search`, { query: 'zanzibarite' });
    expect(found.body).toMatchObject({
      object: 'vector_store.search_results.page',
      search_query: ['zanzibarite'],
      has_more: false,
    });
    expect(found.body.data[0]).toMatchObject({
      file_id: file,
      filename: 'guide.md',
      heading: 'Relay',
    });
    expect(found.body.data[0].content[0].text).toContain('zanzibarite');
  });

  it('fails a file that is no document alone; the store still answers', async () => {
    const good = await upload('guide.md', GUIDE, 'text/markdown');
    const png = await upload(
      'pixel.png',
      new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]),
      'image/png',
    );
    const { body } = await call('POST', 'vector_stores', { file_ids: [good, png] });
    const store = await settled(body.id);
    expect(store.file_counts).toMatchObject({ completed: 1, failed: 1, total: 2 });
    const failed = await call('GET', `vector_stores/${store.id}/files/${png}`);
    expect(failed.body).toMatchObject({
      status: 'failed',
      last_error: { code: 'unsupported_file' },
    });
    expect(failed.body.last_error.message).toContain('pixel.png');
    const found = await call('POST', `vector_stores/${store.id}/search`, { query: 'quota' });
    expect(found.body.data[0].file_id).toBe(good);
  });

  it('cuts chunks to what the store’s embedding model can embed: a long section of the default strategy indexes', async () => {
    // About 1,000 estimated tokens in one section: one chunk of `auto`'s 800 would not fit 512.
    const long = `# Long\n\n${'The mill wheel turns slowly by the river. '.repeat(95)}`;
    const file = await upload('long.md', long, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    const store = await settled(body.id);
    expect(store.file_counts).toMatchObject({ completed: 1, failed: 0 });
    const record = await call('GET', `vector_stores/${body.id}/files/${file}`);
    // The file reports the strategy it was given.
    expect(record.body.chunking_strategy.static.max_chunk_size_tokens).toBe(800);
  });

  it('says how far a file’s indexing is, chunk by chunk, as a download says its bytes', async () => {
    const sections = Array.from({ length: 40 }, (_, i) => `# Part ${i}\n\nText of part ${i}.`);
    const file = await upload('parts.md', sections.join('\n\n'), 'text/markdown');
    let release = () => {};
    state.gate = new Promise((resolve) => (release = resolve));
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    let record: Json = {};
    for (let i = 0; i < 200 && record.progress?.chunks_done !== 16; i += 1) {
      record = (await call('GET', `vector_stores/${body.id}/files/${file}`)).body;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(record).toMatchObject({
      status: 'in_progress',
      progress: { chunks_done: 16, chunks_total: 40 },
    });
    release();
    state.gate = undefined;
    await settled(body.id);
    const done = (await call('GET', `vector_stores/${body.id}/files/${file}`)).body;
    expect(done).toMatchObject({ status: 'completed', progress: null });
  });

  it('refuses a store when no embedding model is on the device, saying how to get one', async () => {
    state.api = makeApi([ECHO_MODEL]);
    const { status, body } = await call('POST', 'vector_stores', { name: 'x' });
    expect(status).toBe(409);
    expect(body.error).toMatchObject({
      code: 'embedding_model_required',
      param: 'embedding_model',
    });
    expect(body.error.message).toContain('download');
  });

  it('answers a missing file in file_ids with 404 naming it, and keeps no store', async () => {
    const { status, body } = await call('POST', 'vector_stores', { file_ids: ['file-nope'] });
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: 'file_not_found', param: 'file_ids[0]' });
    expect((await call('GET', 'vector_stores')).body.data).toEqual([]);
  });

  it('filters by attributes, and forgets a file taken out of the store', async () => {
    const a = await upload('a.md', '# A\n\nThe lighthouse keeper logs the tide.', 'text/markdown');
    const b = await upload('b.md', '# B\n\nThe lighthouse lamp burns oil.', 'text/markdown');
    const { body: store } = await call('POST', 'vector_stores', {});
    await call('POST', `vector_stores/${store.id}/files`, {
      file_id: a,
      attributes: { team: 'sea' },
    });
    await call('POST', `vector_stores/${store.id}/files`, {
      file_id: b,
      attributes: { team: 'land' },
    });
    await settled(store.id);
    const sea = await call('POST', `vector_stores/${store.id}/search`, {
      query: 'lighthouse',
      filters: { type: 'eq', key: 'team', value: 'sea' },
    });
    expect(sea.body.data.map((r: Json) => r.file_id)).toEqual([a]);
    const removed = await call('DELETE', `vector_stores/${store.id}/files/${a}`);
    expect(removed.body).toEqual({ id: a, object: 'vector_store.file.deleted', deleted: true });
    const all = await call('POST', `vector_stores/${store.id}/search`, { query: 'lighthouse' });
    expect(all.body.data.map((r: Json) => r.file_id)).toEqual([b]);
    // The file itself is still there.
    expect((await call('GET', `files/${a}`)).status).toBe(200);
  });

  it('lists a store’s files, gives a file’s parsed content, and changes its attributes', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    await settled(body.id);
    const list = await call('GET', `vector_stores/${body.id}/files?filter=completed`);
    expect(list.body).toMatchObject({ object: 'list', data: [{ id: file, status: 'completed' }] });
    const content = await call('GET', `vector_stores/${body.id}/files/${file}/content`);
    expect(content.body.object).toBe('vector_store.file_content.page');
    expect(content.body.data.map((d: Json) => d.text).join('\n')).toContain('zanzibarite');
    const updated = await call('POST', `vector_stores/${body.id}/files/${file}`, {
      attributes: { year: 2026 },
    });
    expect(updated.body.attributes).toEqual({ year: 2026 });
  });

  it('runs a file batch and reports its counts', async () => {
    const a = await upload('a.txt', 'alpha text about comets', 'text/plain');
    const b = await upload('b.txt', 'beta text about meteors', 'text/plain');
    const { body: store } = await call('POST', 'vector_stores', {});
    const batch = await call('POST', `vector_stores/${store.id}/file_batches`, {
      file_ids: [a, b],
    });
    expect(batch.body).toMatchObject({
      object: 'vector_store.files_batch',
      vector_store_id: store.id,
    });
    expect(batch.body.id).toMatch(/^vsfb_/);
    await settled(store.id);
    const done = await call('GET', `vector_stores/${store.id}/file_batches/${batch.body.id}`);
    expect(done.body).toMatchObject({
      status: 'completed',
      file_counts: { completed: 2, total: 2 },
    });
    const files = await call(
      'GET',
      `vector_stores/${store.id}/file_batches/${batch.body.id}/files`,
    );
    expect(files.body.data).toHaveLength(2);
  });

  it('updates, lists and deletes stores; a deleted store is 404 and its chunks are gone', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { name: 'one', file_ids: [file] });
    await settled(body.id);
    const renamed = await call('POST', `vector_stores/${body.id}`, {
      name: 'two',
      metadata: { k: 'v' },
    });
    expect(renamed.body).toMatchObject({ name: 'two', metadata: { k: 'v' } });
    expect((await call('GET', 'vector_stores')).body.data.map((s: Json) => s.id)).toEqual([
      body.id,
    ]);
    const deleted = await call('DELETE', `vector_stores/${body.id}`);
    expect(deleted.body).toEqual({ id: body.id, object: 'vector_store.deleted', deleted: true });
    const gone = await call('GET', `vector_stores/${body.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('vector_store_not_found');
    expect(await state.documents.chunksOf(body.id)).toEqual([]);
  });

  it('takes up a file a stopped worker left in progress', async () => {
    const file = await upload('guide.md', GUIDE, 'text/markdown');
    const { body } = await call('POST', 'vector_stores', { file_ids: [file] });
    await settled(body.id);
    // As a worker stopped mid-file leaves it: in progress, no chunks.
    await state.documents.putStoreFile({
      ...(await state.documents.getStoreFile(body.id, file))!,
      status: 'in_progress',
    });
    await state.documents.putChunks(body.id, file, []);
    state.api = makeApi();
    const store = await settled(body.id);
    expect(store.file_counts.completed).toBe(1);
    expect((await state.documents.chunksOf(body.id)).length).toBeGreaterThan(0);
  });

  it('refuses what is not OpenAI’s: a bad chunking strategy, an unknown path', async () => {
    const bad = await call('POST', 'vector_stores', {
      chunking_strategy: {
        type: 'static',
        static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 150 },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('chunking_strategy.static.chunk_overlap_tokens');
    const { body } = await call('POST', 'vector_stores', {});
    expect((await call('GET', `vector_stores/${body.id}/nope`)).body.error.code).toBe(
      'unknown_url',
    );
    expect(state.embedded).toBe(0);
  });
});
