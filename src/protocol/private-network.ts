/**
 * @module
 * Whether a fetch the worker makes for the caller (a model's `source`, a server's `base_url`)
 * reaches further into the user's network than the app itself. Any script of the app's origin
 * can call the API, and the worker's fetches pass the page's CSP: without this, such a script
 * could probe the intranet (is `http://printer.local` up?) through `POST /v1/hearth/models`.
 *
 * The order is Private Network Access's: public < private < loopback. A target more private than
 * the app needs `"allow_private_network": true` (the UI asks the user first); the app's own
 * origin, and a target no more private than the app, need nothing.
 *
 * The worker resolves no names (it has no DNS), so the class comes from the hostname as written:
 * - loopback: `localhost`, `*.localhost`, `127.0.0.0/8`, `::1` (and `0.0.0.0`, which browsers
 *   send to this computer);
 * - private: `10/8`, `172.16/12`, `192.168/16`, `169.254/16` (link-local), `100.64/10` (carrier
 *   NAT, Tailscale), `fc00::/7`, `fe80::/10`, names ending `.local`, `.internal`, `.lan`,
 *   `.home.arpa`, and single-label names (`intranet`, `gpu-box`), which only a local resolver
 *   answers;
 * - public: everything else. A public name that resolves to a private address is not caught:
 *   that needs DNS, which the browser's own Private Network Access checks do.
 */
import { OpenAIError } from './errors';

/** How far into the user's network an address is (PNA's order: each more private than the last). */
export type AddressSpace = 'public' | 'private' | 'loopback';

const RANK: Record<AddressSpace, number> = { public: 0, private: 1, loopback: 2 };

/** The four numbers of a dotted IPv4 address, or null when `host` is not one. */
function ipv4(host: string): number[] | null {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return null;
  const numbers = parts.map(Number);
  return numbers.every((n) => n <= 255) ? numbers : null;
}

function ipv4Space([a = 0, b = 0]: number[]): AddressSpace {
  if (a === 127 || a === 0) return 'loopback';
  if (a === 10) return 'private';
  if (a === 172 && b >= 16 && b <= 31) return 'private';
  if (a === 192 && b === 168) return 'private';
  if (a === 169 && b === 254) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'private';
  return 'public';
}

function ipv6Space(address: string): AddressSpace {
  if (address === '::1' || address === '::') return 'loopback';
  // An IPv4 address in IPv6 (`::ffff:7f00:1`, as the URL parser writes `::ffff:127.0.0.1`).
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(address);
  if (mapped?.[1] && mapped[2]) {
    const high = parseInt(mapped[1], 16);
    const low = parseInt(mapped[2], 16);
    return ipv4Space([high >> 8, high & 255, low >> 8, low & 255]);
  }
  const first = parseInt(address.split(':')[0] || '0', 16);
  if ((first & 0xfe00) === 0xfc00) return 'private';
  if ((first & 0xffc0) === 0xfe80) return 'private';
  return 'public';
}

/** The address space of a hostname as the URL parser writes it (IPv6 in brackets, lower case). */
export function addressSpaceOf(hostname: string): AddressSpace {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host.startsWith('[') && host.endsWith(']')) return ipv6Space(host.slice(1, -1));
  const v4 = ipv4(host);
  if (v4) return ipv4Space(v4);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  if (/\.(local|internal|lan|home\.arpa)$/.test(host)) return 'private';
  if (!host.includes('.')) return 'private';
  return 'public';
}

/** The app's own address, as the service worker sees it; undefined outside a browser. */
function ownUrl(): string | undefined {
  return (globalThis as { location?: { href?: string } }).location?.href;
}

/**
 * Throws 400 `invalid_value` on `allow_private_network` when `target` is more private than the
 * app at `appUrl` and the caller did not allow it. The app's own origin is always allowed. With
 * no `appUrl` (outside a browser) there is no page whose reach this widens, and nothing is checked.
 */
export function assertNetworkAllowed(
  target: string,
  allowed: boolean | undefined,
  field: string,
  appUrl: string | undefined = ownUrl(),
): void {
  if (allowed === true || appUrl === undefined) return;
  const url = new URL(target);
  const app = new URL(appUrl);
  if (url.origin === app.origin) return;
  const space = addressSpaceOf(url.hostname);
  if (RANK[space] <= RANK[addressSpaceOf(app.hostname)]) return;
  const where = space === 'loopback' ? 'on this computer' : 'on your local network';
  throw new OpenAIError(
    'invalid_value',
    `The '${field}' ${url.host} is ${where}, more private than this app (${app.host}); send "allow_private_network": true to reach it.`,
    { param: 'allow_private_network' },
  );
}
