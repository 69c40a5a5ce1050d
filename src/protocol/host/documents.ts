/**
 * @module
 * What a document's text is made of, and why a file is no document: shared by src/documents
 * (which cuts sections into chunks), the bridge (which brings a PDF's sections back from the
 * engine worker) and the engine worker (which reads PDFs with pdf.js). Here so that all three see
 * one definition; src/documents re-exports both.
 */

/**
 * A stretch of a document's text that belongs together: one page of a PDF, one heading section
 * of Markdown or HTML, or the whole of a plain text. A chunk never spans two sections.
 */
export interface Section {
  text: string;
  /** The PDF page it is on, from 1. */
  page?: number;
  /** The heading it falls under (Markdown and HTML), as written. */
  heading?: string;
}

/**
 * OpenAI's `last_error.code` for a file that is no document: `unsupported_file`, a kind Hearth
 * reads no text from (an image, a ZIP); `invalid_file`, a kind it reads whose bytes are not that
 * (a PDF pdf.js cannot open, text that is not UTF-8, a scan with no text).
 */
export type DocumentErrorCode = 'unsupported_file' | 'invalid_file';

/**
 * A file whose text cannot be had. Not an API error: the call that added the file succeeded, and
 * the indexing marks that one file `failed` with `last_error: {code, message}`. The message names
 * the file.
 */
export class DocumentError extends Error {
  readonly code: DocumentErrorCode;

  constructor(code: DocumentErrorCode, message: string) {
    super(message);
    this.name = 'DocumentError';
    this.code = code;
  }

  /** OpenAI's `last_error`. */
  toJSON(): { code: DocumentErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}
