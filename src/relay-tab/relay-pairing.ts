/**
 * @module
 * The pairing of this tab with a relay, without its rendering: a pairing link asks first (only
 * relays on this machine), showing the fingerprint of the relay's key that the link names and
 * warning when another site opened the link; a yes registers the relay's key as an issued key (the
 * service worker stays the only judge of keys), once the key the relay sends has that fingerprint,
 * and the tab serves the relay until the pairing ends or the tab closes. The key is issued for the
 * pairing only: its end removes it, and each pairing removes those of tabs that died paired
 * (relay-keys.ts). A reload of the tab reconnects by itself with the session the relay gave it; a tab
 * brought back any other way (reopened, restored with the browser's session, a page opened anew
 * in it) asks again, even with its sessionStorage restored: closing the tab ended the pairing.
 * The app (src/app/relay/relay-status.ts) and the loader on a site's page (src/site/relay-pairing.ts)
 * each show it; each says where its API is and with which key it calls it.
 */
import { isLoopbackRelayUrl } from '../../relay/protocol.js';
import { RelayLink } from './relay-link';
import {
  FINGERPRINT_PATTERN,
  holdRelayKey,
  isRelayKeyName,
  keyFingerprint,
  relayKeyName,
  removeUnheld,
} from './relay-keys';

/** Where this tab keeps its pairing across reloads (this tab only, as sessionStorage is). */
const SESSION_STORAGE = 'hearth:relay';

export type PairingState =
  | { status: 'none' }
  /**
   * A pairing link was opened: waiting for the user's yes or no. `fingerprint` is the one of the
   * relay's key the link names; `from` the origin of another site whose page opened the link.
   */
  | { status: 'asking'; relay: string; code: string; fingerprint: string; from: string | null }
  | { status: 'connecting'; relay: string }
  | { status: 'paired'; relay: string; baseUrl: string }
  /** Over, or refused: `message` says why. */
  | { status: 'ended'; relay: string | null; message: string; error: boolean };

/** Resolves once a service worker controls the page: replayed requests must reach it. */
async function whenControlled(): Promise<void> {
  const container = navigator.serviceWorker;
  if (container.controller) return;
  await new Promise((resolve) =>
    container.addEventListener('controllerchange', resolve, { once: true }),
  );
}

/**
 * Whether this page was loaded by a reload: PerformanceNavigationTiming's `type` (Chromium and
 * Firefox), `performance.navigation` where that is missing. A reopened or restored tab loads as
 * `back_forward` or `navigate`, never as `reload`.
 */
function loadedByReload(): boolean {
  const [entry] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
  if (entry) return entry.type === 'reload';
  const legacy = (performance as { navigation?: { type: number } }).navigation;
  return legacy?.type === 1;
}

/** The origin of the page that opened this one, when it is another site's; null otherwise. */
function openedFromAnotherSite(): string | null {
  const referrer = typeof document === 'undefined' ? '' : document.referrer;
  if (referrer === '') return null;
  try {
    const { origin } = new URL(referrer);
    return origin === location.origin ? null : origin;
  } catch {
    return null;
  }
}

/**
 * WebSocket close code 1001, "going away": the browser closes a page's sockets so as the page
 * leaves. Firefox does it, and fires `close`, before `pagehide`: the close code is what says the
 * page is leaving there (the relay never closes with it: it terminates, which is 1006).
 */
const GOING_AWAY = 1001;

/** What a pairing asks of its page's API, with the key that page sends. */
export interface PairingCalls {
  /** Registers the relay's key as an issued key (`POST {apiBase}hearth/keys`): its id. */
  registerKey(name: string, key: string): Promise<string>;
  /**
   * Makes issued keys the only ones the API takes (`PATCH {apiBase}hearth/settings`); the relay's
   * key, `relayKey`, is one by then.
   */
  requireIssuedKeys(relayKey: string): Promise<void>;
  /** The issued keys' ids and names (`GET {apiBase}hearth/keys`), asked with the relay's key. */
  listKeys(relayKey: string): Promise<{ id: string; name: string }[]>;
  /** Removes the issued key `id` (`DELETE {apiBase}hearth/keys/{id}`), asked with the relay's key. */
  removeKey(id: string, relayKey: string): Promise<void>;
}

export interface RelayPairingOptions extends PairingCalls {
  /** The page's API, `{origin}{base}v1/`: the relay's requests are replayed under it. */
  apiBase: string;
}

/**
 * Where a page records who shows its relay pairing: a global, since the app's bundle and the
 * loader (`hearth/hearth.js`, which the app starts too) each carry their own copy of this module.
 */
const SHOWN_BY = Symbol.for('hearth.relay-pairing');

/**
 * Claims the showing of this page's relay pairing for `by`, unless something on the page claimed
 * it first: a page reads its pairing link and reconnects its session once, with one dialog. The
 * app claims it as its code loads, before it starts Hearth; the loader when Hearth has started
 * (a second `startHearth()` finds it claimed). Returns whether this call claimed it.
 */
export function claimPairing(by: 'app' | 'loader'): boolean {
  const page = globalThis as { [SHOWN_BY]?: string };
  if (page[SHOWN_BY] !== undefined) return false;
  page[SHOWN_BY] = by;
  return true;
}

/** Fires `change` whenever `state` changes. */
export class RelayPairing extends EventTarget {
  state: PairingState = { status: 'none' };
  readonly #options: RelayPairingOptions;
  #link: RelayLink | null = null;
  /** The relay's key as this tab registered it, and how to stop holding it, while paired. */
  #registered: { id: string; key: string; release: () => Promise<void> } | null = null;
  /**
   * Set as the page goes away: its socket closing then is a reload, not the pairing's end (so is
   * a close with `GOING_AWAY`, which can come first).
   */
  #leaving = false;

  constructor(options: RelayPairingOptions) {
    super();
    this.#options = options;
    addEventListener('pagehide', () => (this.#leaving = true));
  }

  #set(state: PairingState): void {
    this.state = state;
    this.dispatchEvent(new Event('change'));
  }

  /**
   * Reads a pairing link in this page's address (and takes it out, as its code works once), or
   * reconnects the pairing this tab had before a reload.
   */
  start(): void {
    const params = new URLSearchParams(location.search);
    const relay = params.get('relay');
    const code = params.get('pair');
    const fingerprint = params.get('fingerprint');
    if (relay !== null || code !== null) {
      const url = new URL(location.href);
      for (const name of ['relay', 'pair', 'fingerprint']) url.searchParams.delete(name);
      history.replaceState(history.state, '', url);
      const incomplete = (relay: string | null) =>
        this.#set({
          status: 'ended',
          relay,
          message: 'This pairing link is incomplete: open the whole link the relay printed.',
          error: true,
        });
      if (relay === null || code === null || code === '') {
        incomplete(relay);
      } else if (!isLoopbackRelayUrl(relay)) {
        this.#set({
          status: 'ended',
          relay,
          message: `Hearth pairs only with a relay on this computer (ws://127.0.0.1 or ws://localhost); it refused ${relay}.`,
          error: true,
        });
      } else if (fingerprint === null || !FINGERPRINT_PATTERN.test(fingerprint)) {
        incomplete(relay);
      } else {
        this.#set({ status: 'asking', relay, code, fingerprint, from: openedFromAnotherSite() });
      }
      return;
    }
    const saved = sessionStorage.getItem(SESSION_STORAGE);
    if (saved === null) return;
    try {
      const {
        relay: savedRelay,
        session,
        fingerprint: savedFingerprint,
      } = JSON.parse(saved) as { relay: string; session: string; fingerprint: string };
      if (!isLoopbackRelayUrl(savedRelay)) throw new Error('not a relay on this machine');
      if (loadedByReload()) {
        this.#connect(savedRelay, { session }, savedFingerprint, false);
        return;
      }
      sessionStorage.removeItem(SESSION_STORAGE);
      this.#set({
        status: 'ended',
        relay: savedRelay,
        message:
          'The pairing with the relay ended when this tab was closed or left. To share this tab again, open the link the relay prints now.',
        error: false,
      });
    } catch {
      sessionStorage.removeItem(SESSION_STORAGE);
    }
  }

  /** The user said yes to the pairing asked. */
  accept({ requireKeys }: { requireKeys: boolean }): void {
    if (this.state.status !== 'asking') return;
    const { relay, code, fingerprint } = this.state;
    this.#connect(relay, { code }, fingerprint, requireKeys);
  }

  /** The user said no. */
  decline(): void {
    if (this.state.status !== 'asking') return;
    this.#set({ status: 'ended', relay: this.state.relay, message: 'Not shared.', error: false });
  }

  /** Ends the pairing: the relay forgets this tab. */
  end(): void {
    sessionStorage.removeItem(SESSION_STORAGE);
    this.#link?.end();
  }

  #connect(
    relay: string,
    credential: { code: string } | { session: string },
    fingerprint: string,
    requireKeys: boolean,
  ): void {
    this.#set({ status: 'connecting', relay });
    void whenControlled().then(() => {
      const link = new RelayLink({
        url: relay,
        credential,
        apiBase: this.#options.apiBase,
        onHello: async (hello) => {
          // The link named the key it pairs with: a program at that address with another key is
          // not the relay the user compared.
          if ((await keyFingerprint(hello.key)) !== fingerprint) {
            throw new Error(
              `The relay's key is not the one its link named (fingerprint ${fingerprint}): not shared. Open the link the relay prints in its terminal.`,
            );
          }
          await this.#register(relay, hello.key);
          if (requireKeys) await this.#options.requireIssuedKeys(hello.key);
          await this.#removeStaleKeys(hello.key);
          sessionStorage.setItem(
            SESSION_STORAGE,
            JSON.stringify({ relay, session: hello.session, fingerprint }),
          );
        },
      });
      this.#link = link;
      link.addEventListener('state', () => {
        if (this.#link !== link) return;
        if (link.state === 'paired') {
          this.#set({ status: 'paired', relay, baseUrl: link.hello?.base_url ?? '' });
        } else if (link.state === 'closed') {
          if (this.#leaving || link.closeCode === GOING_AWAY) return;
          this.#link = null;
          // A relay that went away does not know this session any more.
          sessionStorage.removeItem(SESSION_STORAGE);
          const ended: PairingState = {
            status: 'ended',
            relay,
            message: link.closeReason,
            error: !link.ended,
          };
          this.#set(ended);
          void this.#unregister().catch((error: unknown) => {
            if (this.state !== ended) return;
            const why = error instanceof Error ? error.message : String(error);
            this.#set({
              ...ended,
              message: `${ended.message} The relay's key stays an issued key: ${why}`,
              error: true,
            });
          });
        }
      });
    });
  }

  /** Registers the relay's key and holds it as this tab's while the pairing lasts. */
  async #register(relay: string, key: string): Promise<void> {
    const id = await this.#options.registerKey(relayKeyName(relay), key);
    const previous = this.#registered;
    this.#registered = { id, key, release: await holdRelayKey(id) };
    await previous?.release();
  }

  /** Removes the relay keys no tab holds: those of tabs closed, crashed or gone while paired. */
  async #removeStaleKeys(relayKey: string): Promise<void> {
    const keys = await this.#options.listKeys(relayKey);
    for (const { id, name } of keys) {
      if (!isRelayKeyName(name) || id === this.#registered?.id) continue;
      await removeUnheld(id, false, () => this.#options.removeKey(id, relayKey));
    }
  }

  /** The pairing ended: its key goes, unless another tab is paired with the same key. */
  async #unregister(): Promise<void> {
    const registered = this.#registered;
    if (registered === null) return;
    this.#registered = null;
    await registered.release();
    await removeUnheld(registered.id, true, () =>
      this.#options.removeKey(registered.id, registered.key),
    );
  }
}
