/**
 * @module
 * What every vector-store handler does with a request: its JSON body, within the API's limit, and
 * fresh ids in OpenAI's style.
 */
import { readOptionalJsonBody } from '../../protocol/body';
import type { ChatDeps } from '../chat-deps';

/** The JSON body; an empty one is `{}` (a bare POST, as the SDK sends for a batch's cancel). */
export async function readJson(request: Request, deps: ChatDeps): Promise<unknown> {
  return (await readOptionalJsonBody(request, deps.bodyLimit)) ?? {};
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `vs_…`, `vsfb_…`: a prefix and 24 random letters and digits, as OpenAI's ids look. */
export function newId(prefix: 'vs' | 'vsfb'): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let id = '';
  // 62 letters and digits: the slight bias of a byte modulo 62 gives away nothing here.
  for (const byte of bytes) id += ALPHANUMERIC[byte % ALPHANUMERIC.length];
  return `${prefix}_${id}`;
}
