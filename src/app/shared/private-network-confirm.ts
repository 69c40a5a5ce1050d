/**
 * @module
 * The user's say before the app reaches into their network: the API refuses a model's source or
 * a server's address more private than the app (`src/protocol/private-network.ts`) unless the
 * request carries `allow_private_network`, and the UI sends it only after asking.
 */
import { addressSpaceOf } from '../../protocol/private-network';

/**
 * `{allow_private_network: true}` when `target` is more private than this page and the user
 * confirms; `{}` when no confirmation is needed; null when the user declines.
 */
export function confirmPrivateNetwork(
  target: string,
  ask: (message: string) => boolean = (message) => window.confirm(message),
  here: string = location.href,
): { allow_private_network?: true } | null {
  let url: URL;
  try {
    url = new URL(target, here);
  } catch {
    return {}; // The API says what is wrong with it.
  }
  const app = new URL(here);
  const rank = { public: 0, private: 1, loopback: 2 } as const;
  const space = addressSpaceOf(url.hostname);
  if (url.origin === app.origin || rank[space] <= rank[addressSpaceOf(app.hostname)]) return {};
  const where = space === 'loopback' ? 'on this computer' : 'on your network';
  const yes = ask(`${url.host} is ${where}. Let this app connect to it?`);
  return yes ? { allow_private_network: true } : null;
}
