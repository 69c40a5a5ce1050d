/**
 * @module
 * Why a file is no document. The class lives in src/protocol/host (the bridge brings a PDF's
 * failure back from the engine worker as one); these are the failures this folder names.
 */
import { DocumentError } from '../protocol/host/documents';

export { DocumentError, type DocumentErrorCode } from '../protocol/host/documents';

/** A kind of file Hearth reads no text from (`unsupported_file`). */
export function unsupportedFile(filename: string, why: string): DocumentError {
  return new DocumentError(
    'unsupported_file',
    `${filename} is ${why}: Hearth reads text from PDF, Markdown, HTML and plain text (.pdf, .md, .markdown, .html, .htm, .txt).`,
  );
}

/** A file of a kind Hearth reads whose bytes are not that, or hold no text (`invalid_file`). */
export function invalidFile(filename: string, why: string): DocumentError {
  return new DocumentError('invalid_file', `${filename} ${why}.`);
}
