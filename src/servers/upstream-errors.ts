/**
 * @module
 * Why an upstream server failed: down, or up but refusing this origin (CORS), and the message its
 * error body carries, whatever its dialect.
 */
import { OpenAIError } from '../protocol/errors';
import type { FetchLike } from './server-record';

/** What to do when a browser may not read a server (CORS), by the servers people run. */
export const CORS_HELP =
  "Allow this app's origin on the server: vLLM --allowed-origins, Ollama OLLAMA_ORIGINS, LM Studio's CORS switch (llama-server allows every origin by default).";

/**
 * Why `url` could not be fetched: down (or no such host), or up but refusing this origin
 * (CORS); a `no-cors` request tells them apart.
 */
export async function unreachable(
  url: string,
  what: string,
  fetch: FetchLike,
  origin: string,
  { added = false }: { added?: boolean } = {},
): Promise<OpenAIError> {
  const answered = await fetch(url, { mode: 'no-cors', signal: AbortSignal.timeout(5000) }).then(
    () => true,
    () => false,
  );
  // A server added before let this origin read its /models: a request that fails while it is up
  // may be refused CORS for this kind of request (a POST), or it may have dropped the connection.
  const upButFailed = added
    ? `${what} is up, but this request failed: it dropped the connection (a crash, a proxy, a restart), or it does not let ${origin} send it (CORS for POST requests). ${CORS_HELP}`
    : `${what} answered but does not let ${origin} read its replies (CORS). ${CORS_HELP}`;
  return new OpenAIError(
    'upstream_unavailable',
    answered
      ? upButFailed
      : `${what} could not be reached: is it running, and is the address right?`,
    { retryAfter: answered ? undefined : 5 },
  );
}

/** The message an upstream error body carries, whatever the dialect (OpenAI, vLLM, Ollama, text). */
export function upstreamMessage(text: string): string {
  try {
    const body = JSON.parse(text) as {
      error?: string | { message?: unknown };
      message?: unknown;
      detail?: unknown;
    };
    const error = body.error;
    if (typeof error === 'string') return error;
    if (typeof error?.message === 'string') return error.message;
    if (typeof body.message === 'string') return body.message;
    if (body.detail !== undefined) return JSON.stringify(body.detail);
  } catch {
    // Plain text, as some servers send.
  }
  return text.trim().slice(0, 1000) || '(no message)';
}
