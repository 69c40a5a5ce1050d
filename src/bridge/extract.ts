/**
 * @module
 * A PDF's text across the bridge (`ChatBackend.extractPdf`): the service worker sends the bytes
 * with `extract/start`; the engine worker reads them with pdf.js, outside the queue, and answers
 * `extract/sections`, or `extract/failed` with a `DocumentError`'s data (the file is at fault,
 * and only that file fails), or `chat/error` (the engine worker is). `chat/cancel` stops it, as
 * it stops any request.
 */
import type { ChatOptions } from '../protocol/host/backend';
import { DocumentError, type Section } from '../protocol/host/documents';
import { OpenAIError } from '../protocol/errors';
import type { ReplyMessage, RequestMessage } from './messages';

export type { Section } from '../protocol/host/documents';

/** The engine worker's side: reads a PDF's sections (pdf.js), or throws a `DocumentError`. */
export type PdfReader = (
  bytes: Uint8Array,
  filename: string,
  signal: AbortSignal,
) => Promise<Section[]>;

type ExtractReply = Extract<ReplyMessage, { type: 'extract/sections' | 'extract/failed' }>;

/** The request's first message. The bytes are copied by `postMessage`: the caller keeps its own. */
export function extractStart(bytes: Uint8Array, options: ChatOptions, filename = 'The PDF') {
  const first: RequestMessage = {
    type: 'extract/start',
    requestId: options.requestId ?? '',
    bytes,
    filename,
  };
  return first;
}

/** The service worker's reading of the replies: the one answer ends the request. */
export function readExtract(message: ReplyMessage): { item?: ExtractReply; end?: boolean } {
  return message.type === 'extract/sections' || message.type === 'extract/failed'
    ? { item: message, end: true }
    : {};
}

/** The answer, from the request's channel: the sections, or the `DocumentError` it carried. */
export async function extracted(replies: AsyncIterable<ExtractReply>): Promise<Section[]> {
  for await (const reply of replies) {
    if (reply.type === 'extract/failed') throw new DocumentError(reply.code, reply.message);
    return reply.sections;
  }
  throw new OpenAIError('engine_error', 'The engine worker did not answer.');
}

/** The engine worker's side of one `extract/start`: reads the PDF and posts the answer. */
export async function serveExtract(
  read: PdfReader | undefined,
  message: Extract<RequestMessage, { type: 'extract/start' }>,
  signal: AbortSignal,
  post: (message: ReplyMessage) => void,
): Promise<void> {
  try {
    if (!read) throw new OpenAIError('engine_error', 'This engine worker reads no PDFs.');
    const sections = await read(message.bytes, message.filename, signal);
    if (!signal.aborted) post({ type: 'extract/sections', sections });
  } catch (err) {
    if (signal.aborted) return;
    if (err instanceof DocumentError)
      post({ type: 'extract/failed', code: err.code, message: err.message });
    else post({ type: 'chat/error', error: OpenAIError.fromEngine(err).serialize() });
  }
}
