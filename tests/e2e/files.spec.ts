/**
 * OpenAI's Files on the device (docs/api.md, Files), with the stock `openai` SDK in a page of the
 * app, in Chromium and Firefox: an upload as the SDK sends it (a multipart form), listed,
 * retrieved, its content the same bytes, deleted then 404 `NotFoundError`; a file kept in
 * IndexedDB across a reload of the page; and, in Chromium, a Node client of the relay uploading
 * through it. One boot of the app for the file (`sharedAppTest`); the relay's test is last, as
 * its pairing makes issued keys the rule.
 */
import { expect } from '@playwright/test';
import OpenAI, { toFile } from 'openai';
import { makeClient, openApp } from './helpers';
import { pairTab, startRelay } from './relay';
import { sharedAppTest } from './warm-context';

const test = sharedAppTest();

const NOTES = '# Notes\n\nThe heron nests by the mill. — ünïcödé ✓\n';

test.beforeEach(async ({ page }) => makeClient(page));

test('uploads, lists, retrieves, reads and deletes a file with the SDK', async ({ page }) => {
  const result = await page.evaluate(async (text) => {
    const file = await client.files.create({
      file: new File([text], 'notes.md', { type: 'text/markdown' }),
      purpose: 'user_data',
    });
    const listed = [];
    for await (const f of client.files.list()) listed.push(f.id);
    const retrieved = await client.files.retrieve(file.id);
    const content = await client.files.content(file.id);
    const bytes = [...new Uint8Array(await content.arrayBuffer())];
    const type = content.headers.get('content-type');
    const deleted = await client.files.delete(file.id);
    let after: { name: string; status?: number; code?: string | null } | null = null;
    try {
      await client.files.retrieve(file.id);
    } catch (err) {
      const e = err as InstanceType<typeof OpenAI.APIError>;
      after = { name: e.constructor.name, status: e.status, code: e.code };
    }
    const notFound = after?.name === 'NotFoundError';
    const gone = [];
    for await (const f of client.files.list()) gone.push(f.id);
    return { file, listed, retrieved, bytes, type, deleted, after, notFound, gone };
  }, NOTES);
  expect(result.file).toMatchObject({
    id: expect.stringMatching(/^file-[A-Za-z0-9]{24}$/),
    object: 'file',
    bytes: new TextEncoder().encode(NOTES).byteLength,
    filename: 'notes.md',
    purpose: 'user_data',
    status: 'processed',
  });
  expect(result.listed).toContain(result.file.id);
  expect(result.retrieved).toEqual(result.file);
  expect(result.bytes).toEqual([...new TextEncoder().encode(NOTES)]);
  expect(result.type).toBe('text/markdown');
  expect(result.deleted).toEqual({ id: result.file.id, object: 'file', deleted: true });
  expect(result.after).toMatchObject({ status: 404, code: 'file_not_found' });
  expect(result.notFound).toBe(true);
  expect(result.gone).not.toContain(result.file.id);
});

test('refuses an upload without a purpose, naming the field', async ({ page }) => {
  const error = await page.evaluate(async () => {
    const body = new FormData();
    body.append('file', new File(['x'], 'x.txt', { type: 'text/plain' }));
    const response = await fetch('v1/openai/files', {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body,
    });
    return { status: response.status, body: (await response.json()) as unknown };
  });
  expect(error).toEqual({
    status: 400,
    body: {
      error: expect.objectContaining({
        code: 'missing_field',
        param: 'purpose',
        type: 'invalid_request_error',
      }),
    },
  });
});

test('keeps a file across a reload of the page (IndexedDB)', async ({ page }) => {
  const bytes = Array.from({ length: 3000 }, (_, i) => (i * 7) % 256);
  const id = await page.evaluate(async (bytes) => {
    const file = await client.files.create({
      file: new File([new Uint8Array(bytes)], 'data.bin', { type: 'application/octet-stream' }),
      purpose: 'assistants',
    });
    return file.id;
  }, bytes);
  await openApp(page);
  await makeClient(page);
  const after = await page.evaluate(async (id) => {
    const file = await client.files.retrieve(id);
    const content = await client.files.content(id);
    const bytes = [...new Uint8Array(await content.arrayBuffer())];
    await client.files.delete(id);
    return { file, bytes };
  }, id);
  expect(after.file).toMatchObject({
    id,
    filename: 'data.bin',
    bytes: 3000,
    purpose: 'assistants',
  });
  expect(after.bytes).toEqual(bytes);
});

test('takes an upload from a Node client through the relay', async ({ page, browserName }) => {
  test.skip(
    browserName !== 'chromium',
    'a Node client of the relay: the browser of the paired tab is tested by the tests above',
  );
  const relay = await startRelay(test.info().project.use.baseURL ?? '');
  try {
    await pairTab(page, relay);
    const client = new OpenAI({ baseURL: relay.sdkBaseUrl, apiKey: relay.key });
    const file = await client.files.create({
      file: await toFile(Buffer.from(NOTES), 'notes.md', { type: 'text/markdown' }),
      purpose: 'user_data',
    });
    expect(file).toMatchObject({ object: 'file', filename: 'notes.md', purpose: 'user_data' });
    const listed = await client.files.list();
    expect(listed.data.map((f) => f.id)).toContain(file.id);
    expect(await client.files.retrieve(file.id)).toEqual(file);
    const content = await client.files.content(file.id);
    expect(await content.text()).toBe(NOTES);
    // The tab keeps it: the page reads it with the relay's key.
    const inPage = await page.evaluate(
      async ({ id, key }) => {
        const response = await fetch(`v1/openai/files/${id}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        return (await response.json()) as unknown;
      },
      { id: file.id, key: relay.key },
    );
    expect(inPage).toEqual(file);
    expect(await client.files.delete(file.id)).toMatchObject({ deleted: true });
    await expect(client.files.retrieve(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  } finally {
    await relay.stop();
  }
});

declare global {
  var client: InstanceType<typeof OpenAI>;
}
