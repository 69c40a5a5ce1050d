/**
 * @module
 * What kind of document a file is, and its bytes as text. The kind is decided by the upload's
 * content type first, then by the file name's extension; a generic type (none,
 * `application/octet-stream`) says nothing, and then bytes that begin `%PDF-` are a PDF. Bytes
 * that are no text (NUL bytes, an image's or an archive's magic numbers, invalid UTF-8 in much
 * of them) are refused before any parsing.
 */
import { invalidFile, unsupportedFile } from './errors';

/** The kinds of document Hearth reads text from. */
export type DocumentKind = 'text' | 'markdown' | 'html' | 'pdf';

const BY_TYPE: Record<string, DocumentKind> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
};

const BY_EXTENSION: Record<string, DocumentKind> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  pdf: 'pdf',
};

/** Content types that tell nothing of the file (what a client sends when it does not know). */
const GENERIC = new Set([
  '',
  'application/octet-stream',
  'binary/octet-stream',
  'application/unknown',
]);

/** Magic numbers of files that are surely no text, with what to call them. */
const MAGIC: [bytes: number[], what: string][] = [
  [[0x89, 0x50, 0x4e, 0x47], 'a PNG image'],
  [[0xff, 0xd8, 0xff], 'a JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'a GIF image'],
  [[0x50, 0x4b, 0x03, 0x04], 'a ZIP archive (or an Office document)'],
  [[0x1f, 0x8b], 'a gzip archive'],
  [[0x7f, 0x45, 0x4c, 0x46], 'an executable'],
];

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

function startsWith(bytes: Uint8Array, magic: readonly number[], at = 0): boolean {
  return magic.every((byte, i) => bytes[at + i] === byte);
}

/** `a PNG image`, … when the bytes are a known kind of binary file. */
export function binaryKind(bytes: Uint8Array): string | undefined {
  for (const [magic, what] of MAGIC) if (startsWith(bytes, magic)) return what;
  // RIFF....WEBP
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8))
    return 'a WebP image';
  return undefined;
}

/** The bytes begin as a PDF does. */
export function hasPdfMagic(bytes: Uint8Array): boolean {
  // A PDF may have up to 1 KiB before its header; the header is nearly always first.
  const head = bytes.subarray(0, 1024);
  for (let i = 0; i + PDF_MAGIC.length <= head.length; i++)
    if (startsWith(head, PDF_MAGIC, i)) return true;
  return false;
}

/** The media type without parameters, in lower case (`Text/HTML; charset=utf-8` → `text/html`). */
function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/**
 * The kind of document, or `unsupported_file` naming the file. Another `text/*` type (CSV, source
 * code) is read as plain text.
 */
export function documentKind(
  bytes: Uint8Array,
  contentType: string,
  filename: string,
): DocumentKind {
  const type = mediaType(contentType);
  const byType = BY_TYPE[type];
  if (byType) return byType;
  if (!GENERIC.has(type)) {
    if (type.startsWith('text/')) return 'text';
    throw unsupportedFile(filename, `of type ${type}`);
  }
  const extension = /\.([^./\\]+)$/.exec(filename)?.[1]?.toLowerCase();
  const byExtension = extension === undefined ? undefined : BY_EXTENSION[extension];
  if (byExtension) return byExtension;
  if (hasPdfMagic(bytes)) return 'pdf';
  throw unsupportedFile(filename, extension ? `a .${extension} file` : 'of no known type');
}

/** Whether the file is a PDF, whose text only the engine worker reads (`ChatBackend.extractPdf`). */
export function isPdf(bytes: Uint8Array, contentType: string, filename: string): boolean {
  try {
    return documentKind(bytes, contentType, filename) === 'pdf';
  } catch {
    return false;
  }
}

/** More than this share of characters undecodable: the file is not UTF-8 text. */
const MAX_BAD_SHARE = 0.1;

/**
 * The bytes as text: UTF-8 (a BOM dropped), or UTF-16 where a BOM says so. A few bad bytes (a
 * Latin-1 accent) become U+FFFD; NUL bytes, a binary file's magic numbers, or more than a tenth
 * undecodable are `invalid_file`.
 */
export function decodeText(bytes: Uint8Array, filename: string): string {
  const binary = binaryKind(bytes) ?? (hasPdfMagic(bytes) ? 'a PDF' : undefined);
  if (binary) throw invalidFile(filename, `is ${binary}, not text`);
  const encoding =
    bytes[0] === 0xff && bytes[1] === 0xfe
      ? 'utf-16le'
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? 'utf-16be'
        : 'utf-8';
  const text = new TextDecoder(encoding).decode(bytes);
  if (text.includes('\0')) throw invalidFile(filename, 'holds NUL bytes: it is binary, not text');
  let bad = 0;
  for (let i = text.indexOf('\uFFFD'); i !== -1; i = text.indexOf('\uFFFD', i + 1)) bad++;
  if (bad > 0 && bad > text.length * MAX_BAD_SHARE)
    throw invalidFile(filename, 'is not UTF-8 text');
  return text;
}
