import { describe, expect, it } from 'vitest';
import * as legacy from 'pdfjs-dist/legacy/build/pdf.mjs';
import { PortBackend } from '../../../src/bridge/client';
import type { PdfReader } from '../../../src/bridge/extract';
import { HostServer } from '../../../src/bridge/server';
import { pdfSections, type PdfJs } from '../../../src/engine-host/documents/pdf-text';
import { OpenAIError } from '../../../src/protocol/errors';
import { DocumentError } from '../../../src/protocol/host/documents';
import { makePdf } from '../../test-pdfs';
import { eventually } from '../helpers';

const pdfjs = legacy as unknown as PdfJs;
const readPdf: PdfReader = (bytes, filename, signal) => pdfSections(bytes, filename, signal, pdfjs);

/** The bridge over a real MessageChannel, the engine worker's side reading PDFs with `read`. */
function bridge(read?: PdfReader) {
  const server = new HostServer(
    { chat: () => (async function* () {})() },
    {
      status: () => ({
        host: { id: 'h', build: 'b' },
        models: [],
        loaded_model: null,
        loading: null,
        load_error: null,
        failing_models: {},
        downloads: [],
        evicted_models: {},
        last_speed: null,
        queue: { running: 0, waiting: 0 },
        device: null,
      }),
      ...(read && { readPdf: read }),
    },
  );
  const { port1, port2 } = new MessageChannel();
  server.attach(port2);
  return { client: new PortBackend(async () => port1), server, close: () => port1.close() };
}

const options = () => ({ signal: new AbortController().signal, requestId: 'r1' });

describe('a PDF’s text across the bridge (extractPdf)', () => {
  it('brings back a section a page, and leaves the caller its bytes', async () => {
    const { client, server, close } = bridge(readPdf);
    const bytes = makePdf([['Page one.'], ['Page two,', 'second line.']]);
    expect(await client.extractPdf(bytes, options(), 'two.pdf')).toEqual([
      { page: 1, text: 'Page one.' },
      { page: 2, text: 'Page two,\nsecond line.' },
    ]);
    expect(bytes.byteLength).toBeGreaterThan(0);
    await eventually(() => server.openPorts === 0);
    close();
  });

  it('fails with the DocumentError of a file that is no PDF, naming it', async () => {
    const { client, close } = bridge(readPdf);
    const err = await client
      .extractPdf(new TextEncoder().encode('nope'), options(), 'bad.pdf')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DocumentError);
    expect(err).toMatchObject({ code: 'invalid_file' });
    expect((err as Error).message).toMatch(/^bad\.pdf is not a PDF/);
    const scan = await client.extractPdf(makePdf([[]]), options(), 'scan.pdf').catch((e) => e);
    expect(scan).toMatchObject({ code: 'invalid_file', message: expect.stringContaining('scan?') });
    close();
  });

  it('fails with an OpenAIError where the engine worker reads no PDFs or fails itself', async () => {
    const none = bridge();
    await expect(none.client.extractPdf(makePdf([['x']]), options())).rejects.toBeInstanceOf(
      OpenAIError,
    );
    none.close();
    const broken = bridge(async () => {
      throw new TypeError('pdf.js did not load');
    });
    const err = await broken.client.extractPdf(makePdf([['x']]), options()).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAIError);
    expect((err as OpenAIError).message).toContain('pdf.js did not load');
    broken.close();
  });

  it('is cancelled by its signal: the engine worker’s reading is aborted', async () => {
    let seen: AbortSignal | undefined;
    const { client, server, close } = bridge((_bytes, _name, signal) => {
      seen = signal;
      return new Promise((_resolve, reject) =>
        signal.addEventListener('abort', () => reject(new Error('aborted'))),
      );
    });
    const abort = new AbortController();
    const result = client.extractPdf(makePdf([['x']]), { signal: abort.signal }).catch((e) => e);
    await eventually(() => seen !== undefined);
    abort.abort();
    expect(await result).toBeInstanceOf(OpenAIError);
    await eventually(() => seen?.aborted === true);
    await eventually(() => server.openPorts === 0);
    close();
  });
});
