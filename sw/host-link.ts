/**
 * @module
 * The service worker's link to the engine-host tab: the port the host handed over, checked
 * against this worker's protocol and build. Without one (first request after a restart, or no
 * host yet) it asks every window for one (`host/wanted`) and gives up after a few seconds.
 *
 * A closed tab tells no `MessagePort`, so the link learns of a host's death through the Web Lock
 * its engine worker holds: asking for the same lock, it is granted the moment the host is gone.
 * That request dies with a stopped service worker, so it is made again at every hand-over to a
 * new instance.
 */
import {
  hostLockName,
  PROTOCOL_VERSION,
  type PageToSw,
  type SwToPage,
} from '../src/bridge/messages';
import { OpenAIError } from '../src/protocol/errors';

/**
 * How long a request waits for a host tab to hand over a port (docs/architecture.md, Tabs,
 * failover and restarts: 3 s, then 503 `engine_unavailable`).
 */
export const HOST_WAIT_MS = 3000;

/** The part of `Clients` the link uses (typed here so that it also compiles outside a worker). */
export interface WindowClients {
  matchAll(options: {
    type: 'window';
    includeUncontrolled: boolean;
  }): Promise<readonly { postMessage(message: SwToPage): void }[]>;
}

/** The part of `LockManager` the link uses. */
export interface Locks {
  request(name: string, callback: () => unknown): Promise<unknown>;
}

/** What the link needs of the service worker's globals. */
export interface HostLinkOptions {
  /**
   * This worker's build id, named when a host is refused. A host of another build that speaks
   * this worker's protocol is accepted: after an update takes over open tabs (a site's worker that
   * skips waiting), the tabs of the build before keep an engine until a tab of the new one hosts.
   */
  build: string;
  /** `self.clients`, of which only window clients are asked for. */
  clients: WindowClients;
  /** `navigator.locks`. */
  locks: Locks;
  /** The app's address, for the error that says to open it. */
  appUrl: string;
  /** Told, for every port a host handed over, when that host is gone. */
  onLost: (port: MessagePort) => void;
  waitMs?: number;
}

interface Host {
  id: string;
  port: MessagePort;
}

type Reply = (message: SwToPage) => void;

type Attach = Extract<PageToSw, { type: 'host/attach' }>;

function isAttach(data: unknown): data is Attach {
  if (typeof data !== 'object' || data === null) return false;
  const m = data as Partial<Attach>;
  return m.type === 'host/attach' && typeof m.hostId === 'string' && m.port instanceof MessagePort;
}

/** The current host port, the wait for one, and the watch on every host's life. */
export class HostLink {
  readonly #options: HostLinkOptions;
  #host: Host | undefined;
  readonly #waiters = new Set<(port: MessagePort) => void>();
  /** Every port each living host has handed over to this instance. */
  readonly #ports = new Map<string, MessagePort[]>();
  /** Hosts known to be gone; a late hand-over from one is ignored. */
  readonly #gone = new Set<string>();

  constructor(options: HostLinkOptions) {
    this.#options = options;
  }

  /** The id of the current host tab, if any. */
  get hostId(): string | undefined {
    return this.#host?.id;
  }

  /** Handles a page's message to the service worker; ignores anything but `host/attach`. */
  onMessage(data: unknown, reply: Reply): void {
    if (!isAttach(data)) return;
    if (this.#gone.has(data.hostId)) {
      data.port.close();
      return;
    }
    if (data.protocol !== PROTOCOL_VERSION) {
      data.port.close();
      reply({
        type: 'host/refused',
        hostId: data.hostId,
        reason: `it runs build ${data.build} (protocol ${data.protocol}), the service worker build ${this.#options.build} (protocol ${PROTOCOL_VERSION})`,
      });
      return;
    }
    this.#host = { id: data.hostId, port: data.port };
    this.#watch(data.hostId, data.port);
    reply({ type: 'host/accepted', hostId: data.hostId });
    for (const waiter of this.#waiters) waiter(data.port);
    this.#waiters.clear();
  }

  #watch(hostId: string, port: MessagePort): void {
    const ports = this.#ports.get(hostId);
    if (ports) {
      ports.push(port);
      return;
    }
    this.#ports.set(hostId, [port]);
    void this.#options.locks.request(hostLockName(hostId), () => this.#lost(hostId));
  }

  #lost(hostId: string): void {
    this.#gone.add(hostId);
    const ports = this.#ports.get(hostId) ?? [];
    this.#ports.delete(hostId);
    if (this.#host?.id === hostId) this.#host = undefined;
    for (const port of ports) {
      port.close();
      this.#options.onLost(port);
    }
  }

  /** The host port; waits for a host to attach, then fails with 503 `engine_unavailable`. */
  port(): Promise<MessagePort> {
    if (this.#host) return Promise.resolve(this.#host.port);
    const waitMs = this.#options.waitMs ?? HOST_WAIT_MS;
    return new Promise((resolve, reject) => {
      const done = (port: MessagePort) => {
        clearTimeout(timer);
        resolve(port);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(done);
        reject(
          new OpenAIError(
            'engine_unavailable',
            `No tab of Hearth is open to run the engine: open ${this.#options.appUrl} in a tab and try again.`,
            { retryAfter: 1 },
          ),
        );
      }, waitMs);
      const first = this.#waiters.size === 0;
      this.#waiters.add(done);
      if (first) void this.#askForHost();
    });
  }

  async #askForHost(): Promise<void> {
    const windows = await this.#options.clients.matchAll({
      type: 'window',
      includeUncontrolled: true,
    });
    const wanted: SwToPage = { type: 'host/wanted' };
    for (const client of windows) client.postMessage(wanted);
  }
}
