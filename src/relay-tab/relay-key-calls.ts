/**
 * @module
 * The pairing's calls on a page that has no key of Hearth's own (a site's page, where the site's
 * code chooses its keys): each call sends the relay's key, removing it (at the pairing's end) too. The relay's key registers itself,
 * which any non-empty key may do while the API takes any key; once only issued keys may call, it
 * may only where it was registered before (a reload, an earlier pairing), and the pairing fails
 * saying why.
 */
import type { PairingCalls } from './relay-pairing';

/** The API's error message in `response`, or its status where the body is not the API's. */
async function failure(response: Response, what: string): Promise<Error> {
  let message = `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { error?: { message?: unknown } };
    if (typeof body.error?.message === 'string') message = body.error.message;
  } catch {
    // Not the API's JSON: the status says enough.
  }
  return new Error(`${what}: ${message}`);
}

/** `PairingCalls` on the API at `apiBase` (`{origin}{base}v1/`), with the relay's key. */
export function relayKeyCalls(
  apiBase: string,
  fetchApi: typeof fetch = (input, init) => fetch(input, init),
): PairingCalls {
  const call = async (
    path: string,
    method: string,
    key: string,
    body: unknown,
    what: string,
  ): Promise<Response> => {
    const response = await fetchApi(apiBase + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw await failure(response, what);
    return response;
  };
  return {
    registerKey: async (name, key) => {
      const what = "The relay's key could not be registered";
      const response = await call('hearth/keys', 'POST', key, { name, key }, what);
      return ((await response.json()) as { id: string }).id;
    },
    requireIssuedKeys: (relayKey) =>
      call(
        'hearth/settings',
        'PATCH',
        relayKey,
        { auth: 'issued' },
        'Issued keys could not be made the rule',
      ).then(() => undefined),
    listKeys: async (relayKey) => {
      const what = 'The issued keys could not be listed';
      const response = await call('hearth/keys', 'GET', relayKey, undefined, what);
      return ((await response.json()) as { data: { id: string; name: string }[] }).data;
    },
    removeKey: (id, relayKey) =>
      call(
        `hearth/keys/${encodeURIComponent(id)}`,
        'DELETE',
        relayKey,
        undefined,
        "The relay's key could not be removed",
      ).then(() => undefined),
  };
}
