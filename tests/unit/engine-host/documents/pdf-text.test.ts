import { describe, expect, it } from 'vitest';
import * as legacy from 'pdfjs-dist/legacy/build/pdf.mjs';
import { pdfSections, type PdfJs } from '../../../../src/engine-host/documents/pdf-text';
import { DocumentError } from '../../../../src/protocol/host/documents';
import { makePdf, samplePages } from '../../../test-pdfs';

// Node has no browser build's features (Promise.withResolvers before Node 22): pdf.js's legacy
// build, as the engine worker runs the other. In Node it runs its worker code in this thread.
const pdfjs = legacy as unknown as PdfJs;
const read = (bytes: Uint8Array, signal?: AbortSignal) =>
  pdfSections(bytes, 'doc.pdf', signal, pdfjs);

async function failure(promise: Promise<unknown>): Promise<DocumentError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DocumentError);
  return err as DocumentError;
}

describe('a PDF made at test time, read by pdf.js', () => {
  it('gives a section a page, its lines as lines, page numbers from 1', async () => {
    const bytes = makePdf([
      ['First page, first line.', 'First page (second line) with \\ and a caf\u00e9.'],
      ['Second page.'],
      ['Third page, one', 'two', 'three.'],
    ]);
    expect(await read(bytes)).toEqual([
      {
        page: 1,
        text: 'First page, first line.\nFirst page (second line) with \\ and a caf\u00e9.',
      },
      { page: 2, text: 'Second page.' },
      { page: 3, text: 'Third page, one\ntwo\nthree.' },
    ]);
  });

  it('leaves out a page with no text, and keeps the numbers of the others', async () => {
    const sections = await read(makePdf([['one'], [], ['three']]));
    expect(sections).toEqual([
      { page: 1, text: 'one' },
      { page: 3, text: 'three' },
    ]);
  });

  it('reads a hundred pages, the rare word on its page', async () => {
    const pages = samplePages(100, { rare: { page: 57, word: 'zanzibarite' } });
    const sections = await read(makePdf(pages));
    expect(sections).toHaveLength(100);
    expect(sections.filter((s) => s.text.includes('zanzibarite')).map((s) => s.page)).toEqual([57]);
    expect(sections[99]?.text.startsWith('Page 100.')).toBe(true);
  });

  it('does not take the caller’s bytes from it', async () => {
    const bytes = makePdf([['kept']]);
    await read(bytes);
    expect(bytes.byteLength).toBeGreaterThan(0);
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe('%PDF-1.4');
  });

  it('is invalid_file, naming the file and with pdf.js’s reason, when it is no PDF', async () => {
    const err = await failure(read(new TextEncoder().encode('not a pdf at all')));
    expect(err.code).toBe('invalid_file');
    expect(err.message).toMatch(/^doc\.pdf is not a PDF that pdf\.js can read: .+/);
  });

  it('is invalid_file when the PDF is cut short', async () => {
    const whole = makePdf([['a line']]);
    const err = await failure(read(whole.subarray(0, 60)));
    expect(err.code).toBe('invalid_file');
  });

  it('is invalid_file "no text (a scan?)" when no page has text', async () => {
    const err = await failure(read(makePdf([[], []])));
    expect(err.code).toBe('invalid_file');
    expect(err.message).toContain('no text (a scan?)');
  });

  it('stops when its signal is aborted', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(read(makePdf([['x']]), abort.signal)).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
