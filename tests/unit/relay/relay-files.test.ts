/**
 * The relay and OpenAI's Files (docs/api.md, Files): an upload is a multipart form, which the
 * relay reads and forwards to the tab, up to its own limit (`FILE_BODY_LIMIT`, 64 MiB), checking
 * before it reads a byte what the API would refuse (415 for a body that is not a form, 413 for
 * one declared over the limit).
 */
import { describe, expect, it } from 'vitest';
import { FILE_BODY_LIMIT } from '../../../relay/answers.js';
import { eventually } from '../helpers';
import { fakeTab, pair, rawAnswer, rawConnection, relay, send } from './harness';

/** A form as the SDK sends it: its bytes and its content type, with the boundary. */
async function upload(text: string, purpose = 'user_data') {
  const form = new FormData();
  form.append('file', new File([text], 'notes.md', { type: 'text/markdown' }));
  form.append('purpose', purpose);
  const body = new Response(form);
  const bytes = Buffer.from(await body.arrayBuffer());
  const type = body.headers.get('content-type') ?? '';
  return { body: bytes, headers: { 'content-type': type, 'content-length': String(bytes.length) } };
}

describe('the relay and a file’s upload', () => {
  it('forwards the form to the tab, whose API keeps the file, and brings its content back', async () => {
    const { relay: r } = await relay();
    await pair(r);
    const answer = await send(r, '/v1/openai/files', await upload('# Notes\n\nThe heron.\n'));
    expect(answer.status, answer.body).toBe(200);
    const file = JSON.parse(answer.body) as { id: string; filename: string; bytes: number };
    expect(file).toMatchObject({ object: 'file', filename: 'notes.md', bytes: 20 });
    const content = await send(r, `/v1/files/${file.id}/content`);
    expect(content.status).toBe(200);
    expect(content.headers['content-type']).toBe('text/markdown');
    expect(content.body).toBe('# Notes\n\nThe heron.\n');
    const listed = await send(r, '/v1/files');
    expect(JSON.parse(listed.body)).toMatchObject({ object: 'list', data: [file] });
  });

  it('refuses JSON at /files, unread: 415 naming multipart/form-data, as the API does', async () => {
    const { relay: r } = await relay();
    const { requests } = await fakeTab(r);
    const answer = await send(r, '/v1/openai/files', { body: '{"purpose":"user_data"}' });
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body).error).toMatchObject({
      code: 'unsupported_media_type',
      message: "The request body must be sent as 'multipart/form-data' (got 'application/json').",
    });
    expect(requests).toHaveLength(0);
  });

  it('refuses an upload declared over 64 MiB before reading it: 413', async () => {
    expect(FILE_BODY_LIMIT).toBe(64 * 1024 * 1024);
    const { relay: r } = await relay();
    const { requests } = await fakeTab(r);
    const c = rawConnection(r);
    c.socket.write(
      [
        'POST /v1/files HTTP/1.1',
        'Host: 127.0.0.1',
        'Authorization: Bearer k',
        'Content-Type: multipart/form-data; boundary=x',
        `Content-Length: ${FILE_BODY_LIMIT + 1}`,
        '',
        '',
      ].join('\r\n') + 'a'.repeat(1000),
    );
    await eventually(c.closed, 3000);
    const answer = rawAnswer(c.received());
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ error: { code: 'request_too_large' } });
    expect(requests).toHaveLength(0);
  });
});
