/**
 * @module
 * A document's text by its structure, the first step of indexing a file: `textSections` for
 * plain text, Markdown and HTML, here (pure, in the service worker); a PDF is read in the engine
 * worker with pdf.js (`ChatBackend.extractPdf`), so `textSections` refuses one and `isPdf` tells
 * the caller which way to go. Either way the sections then go to `chunkSections` (chunk.ts).
 */
import type { Section } from '../protocol/host/documents';
import { decodeText, documentKind } from './detect';
import { DocumentError, invalidFile } from './errors';
import { htmlSections } from './html';
import { markdownSections } from './markdown';

export { isPdf } from './detect';

/**
 * A plain text's sections: the whole text, or one a page where form feeds part pages (as
 * `pdftotext` writes them), with `page` from 1.
 */
export function plainSections(text: string): Section[] {
  const pages = text.split('\f');
  if (pages.length === 1) {
    const body = text.trim();
    return body === '' ? [] : [{ text: body }];
  }
  return pages.flatMap((page, i) => {
    const body = page.trim();
    return body === '' ? [] : [{ text: body, page: i + 1 }];
  });
}

/**
 * The sections of a text document (plain text, Markdown, HTML), in order, each with text. The
 * kind comes from `contentType`, else from `filename`'s extension (documentKind in detect.ts).
 * Throws a `DocumentError`: `unsupported_file` for a kind Hearth does not read, `invalid_file` for
 * bytes that are not text or hold none, and for a PDF (`isPdf`), whose text only
 * `ChatBackend.extractPdf` reads.
 */
export function textSections(bytes: Uint8Array, contentType: string, filename: string): Section[] {
  const kind = documentKind(bytes, contentType, filename);
  if (kind === 'pdf')
    throw new DocumentError(
      'invalid_file',
      `${filename} is a PDF: its text is read in the engine worker (extractPdf), not here.`,
    );
  const text = decodeText(bytes, filename);
  const sections =
    kind === 'markdown'
      ? markdownSections(text)
      : kind === 'html'
        ? htmlSections(text)
        : plainSections(text);
  if (sections.length === 0) throw invalidFile(filename, 'has no text');
  return sections;
}
