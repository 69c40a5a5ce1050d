/**
 * @module
 * src/app/relay/ is the app's one relay pairing and how every view shows it. It imports shared/
 * and src/relay-tab.
 *
 * The app's one relay pairing (src/relay-tab/relay-pairing.ts), calling the API as the app does
 * (registering the relay's key, removing it and those of pairings gone): with the app's own key, and, before issued keys become the rule, with an issued key of the
 * app's own so that it does not lock itself out (`setAuthMode`). `<relay-status>` shows it, and
 * the loader's dialog (src/site/relay-pairing.ts) stays away from the app's pages.
 */
import { claimPairing, RelayPairing } from '../../relay-tab/relay-pairing';
import { apiBaseUrl, call, callJson, issueKey, setAuthMode } from '../shared/api-client';

export type { PairingState } from '../../relay-tab/relay-pairing';

// The app shows the pairing itself: the loader, which the app starts as a site does, shows none.
claimPairing('app');

/** The one pairing of this tab. */
export const relayPairing = new RelayPairing({
  apiBase: apiBaseUrl(),
  registerKey: async (name, key) => (await issueKey({ name, key })).id,
  requireIssuedKeys: async () => void (await setAuthMode('issued')),
  listKeys: async () =>
    (await callJson<{ data: { id: string; name: string }[] }>('hearth/keys')).data,
  removeKey: async (id) => void (await call(`hearth/keys/${id}`, { method: 'DELETE' })),
});
