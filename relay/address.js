/**
 * @module
 * Who may call the relay, decided from the address it is bound to. The address comes from
 * `server.address()` once the relay listens, never from how `--host` was spelled: `0`, `::0` and
 * `0000:0000::` bind every interface as `0.0.0.0` and `::` do, and a check of the spelling let the
 * network's callers in through them. {@link Callers} keeps the decision for a relay that listens.
 * Also what a `Host` header or a peer's address says of this machine (`isLoopbackHost`,
 * `isLoopbackPeer`).
 */

/** The host names that mean this machine. */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The name in a `Host` header (`name[:port]`), lower case, or null when it is not one.
 * @param {string | undefined} host
 */
export function hostName(host) {
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::\d{1,5})?$/.exec((host ?? '').trim().toLowerCase());
  return match?.[1] ?? null;
}

/**
 * Whether a connection's peer address is this machine: 127.0.0.0/8 or ::1, also as IPv4-mapped
 * IPv6 (`::ffff:127.0.0.1`, what a socket on `::` reports for an IPv4 caller). Unlike a `Host`
 * header, which any caller writes as it likes, the peer address is the network's word.
 * @param {string | undefined} address
 */
export function isLoopbackPeer(address) {
  const ip = (address ?? '').toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');
  return ip === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

/**
 * Whether a `Host` header names this machine, as a DNS-rebinding defence: a page of another site
 * that makes its own name resolve to 127.0.0.1 still sends its own name here.
 * @param {string | undefined} host
 */
export function isLoopbackHost(host) {
  return LOOPBACK_NAMES.has(hostName(host) ?? '');
}

/**
 * What listening on an address exposes: `loopback`, this machine only (no other can reach it);
 * `everywhere`, every interface (the relay then refuses callers that are not this machine);
 * `network`, one address on the network, which the user chose to serve.
 * @typedef {'loopback' | 'everywhere' | 'network'} ListenScope
 */

/**
 * An IP address in one spelling: IPv4 dotted (`0` → `0.0.0.0`, `127.1` → `127.0.0.1`), IPv6
 * compressed and lower case (`0000:0000::` → `::`), an IPv4-mapped IPv6 address as its IPv4
 * address. The WHATWG URL parser does the work, as it does for the browser. Null for anything
 * that is not an IP address (a host name).
 * @param {string} address
 */
export function normalizeAddress(address) {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  try {
    const host = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname;
    if (!host.startsWith('[')) return /^[\d.]+$/.test(host) ? host : null;
    const ipv6 = host.slice(1, -1);
    const mapped = /^::ffff:([\da-f]{1,4}):([\da-f]{1,4})$/.exec(ipv6);
    if (mapped === null) return ipv6;
    const [high, low] = [parseInt(mapped[1] ?? '0', 16), parseInt(mapped[2] ?? '0', 16)];
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  } catch {
    return null;
  }
}

/**
 * What listening on `address` exposes (see {@link ListenScope}). A name that is no IP address
 * counts as the network: the relay decides from the address it is bound to, which is one.
 * @param {string} address
 * @returns {ListenScope}
 */
export function listenScope(address) {
  const ip = normalizeAddress(address);
  if (ip === '0.0.0.0' || ip === '::') return 'everywhere';
  if (ip !== null && isLoopbackPeer(ip)) return 'loopback';
  return 'network';
}

/**
 * Whether a caller at `peer` may call a relay listening with `scope`: any, where the user named a
 * network address to serve; otherwise only this machine (on loopback no other can reach it, and
 * on every interface a `Host` header saying localhost proves nothing: the peer address decides).
 * @param {ListenScope} scope
 * @param {string | undefined} peer
 */
export function peerAllowed(scope, peer) {
  return scope === 'network' || isLoopbackPeer(peer);
}

/**
 * Who may call one relay: the peers its bound address lets in, and the names a request's `Host`
 * may give (DNS rebinding). This machine only until {@link Callers#bound} is told the address.
 */
export class Callers {
  /**
   * What the address bound to exposes, once listening; this machine only until then.
   * @type {ListenScope}
   */
  #scope = 'loopback';
  /** The names callers may address besides this machine's: the network address served. */
  /** @type {Set<string>} */
  #networkHosts = new Set();

  /** What the address bound to exposes. */
  get scope() {
    return this.#scope;
  }

  /**
   * Decides who may call from the address bound to, however `--host` spelled it: `0`, `::0` and
   * `0000:0000::` are every interface as `0.0.0.0` and `::` are. Serving a network address, callers
   * may name it by that address or by the name given as `--host`.
   * @param {string} address The address bound to, from `server.address()`.
   * @param {string} host `--host` as given: a name callers may address when it is one on the
   *   network.
   */
  bound(address, host) {
    this.#scope = listenScope(address);
    if (this.#scope !== 'network') return;
    for (const name of [address, host]) {
      const hostname = hostName(name.includes(':') ? `[${name}]` : name);
      if (hostname !== null) this.#networkHosts.add(hostname);
    }
  }

  /**
   * Whether a connection's peer may call.
   * @param {string | undefined} address
   */
  peerAllowed(address) {
    return peerAllowed(this.#scope, address);
  }

  /**
   * Whether a request's `Host` names this machine, or the network address the relay serves.
   * @param {string | undefined} host
   */
  hostAllowed(host) {
    return isLoopbackHost(host) || this.#networkHosts.has(hostName(host) ?? '');
  }
}
