/**
 * @module
 * The only places that build a `Response`: JSON bodies, error bodies, and the headers every
 * response carries.
 */
import { OpenAIError } from './errors';

/** A fresh `req_…` id for the `x-request-id` header. */
export function newRequestId(): string {
  return `req_${crypto.randomUUID().replaceAll('-', '')}`;
}

/** A fresh `chatcmpl-…` id. */
export function newCompletionId(): string {
  return `chatcmpl-${crypto.randomUUID().replaceAll('-', '')}`;
}

/** Headers of a JSON response. */
export function jsonHeaders(requestId: string, extra: Record<string, string> = {}): Headers {
  return new Headers({
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'x-request-id': requestId,
    ...extra,
  });
}

/** The headers of an SSE stream: never cached, never buffered by a proxy. */
export function sseHeaders(requestId: string): Headers {
  return new Headers({
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    'x-request-id': requestId,
  });
}

/** A JSON response. */
export function jsonResponse(
  body: unknown,
  requestId: string,
  status = 200,
  extra: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), { status, headers: jsonHeaders(requestId, extra) });
}

/** The response for any failure: an `OpenAIError` as is, anything else as a 500. */
export function errorResponse(err: unknown, requestId: string): Response {
  const error = OpenAIError.from(err);
  return jsonResponse(error.toBody(), requestId, error.status, error.responseHeaders());
}
