/**
 * @module
 * The banners above the view: offline, a new version waiting, the relay's pairing, and the
 * notices of what was just done (a success closes by itself, an error stays). The controller
 * follows the network and holds the notice; `renderBanners()` draws them in the shell's main part.
 */
import { html, nothing, type ReactiveController, type ReactiveControllerHost } from 'lit';
import '../relay/relay-status';

/** How long a notice that something went right stays before it closes by itself. */
const NOTICE_MS = 6000;

/** Holds the notice and whether the network is there, and updates the element on each change. */
export class BannersController implements ReactiveController {
  notice: { text: string; error: boolean } | null = null;
  offline = !navigator.onLine;
  /** The user closed the offline banner (until the network goes again). */
  offlineDismissed = false;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly host: ReactiveControllerHost) {
    host.addController(this);
  }

  hostConnected(): void {
    addEventListener('online', this.#onNetwork);
    addEventListener('offline', this.#onNetwork);
  }

  hostDisconnected(): void {
    removeEventListener('online', this.#onNetwork);
    removeEventListener('offline', this.#onNetwork);
  }

  readonly #onNetwork = () => {
    this.offline = !navigator.onLine;
    // Going offline again is news again.
    if (this.offline) this.offlineDismissed = false;
    this.host.requestUpdate();
  };

  /** Says something; a success closes by itself, an error stays until dismissed. */
  say(text: string, error = false): void {
    clearTimeout(this.#timer);
    this.#setNotice({ text, error });
    if (!error) this.#timer = setTimeout(() => this.#setNotice(null), NOTICE_MS);
  }

  dismissNotice(): void {
    clearTimeout(this.#timer);
    this.#setNotice(null);
  }

  dismissOffline(): void {
    this.offlineDismissed = true;
    this.host.requestUpdate();
  }

  #setNotice(notice: { text: string; error: boolean } | null): void {
    this.notice = notice;
    this.host.requestUpdate();
  }
}

/** A new version of the app, as the shell knows it: installed and waiting, or accepted. */
export type UpdateState = { ready: boolean; updating: boolean; accept: () => void };

/** The banners, in the order they show. */
export function renderBanners(banners: BannersController, update: UpdateState) {
  const notice = banners.notice;
  return html`
    ${
      banners.offline && !banners.offlineDismissed
        ? html`<p class="notice banner" role="status">
            <span
              ><strong>Offline.</strong> Chat, the models on this device and your conversations keep
              working; downloads need the network.</span
            >
            <button class="link" @click=${() => banners.dismissOffline()}>Dismiss</button>
          </p>`
        : nothing
    }
    ${
      update.ready
        ? html`<p class="notice banner" role="status">
            ${
              update.updating
                ? 'Updating once the replies in progress are done…'
                : html`<span>A new version of Hearth is ready.</span>
                    <button class="primary" @click=${() => update.accept()}>
                      Reload to update
                    </button>`
            }
          </p>`
        : nothing
    }
    <relay-status></relay-status>
    ${
      notice
        ? html`<p
            class="notice ${notice.error ? 'banner error' : 'toast'}"
            role=${notice.error ? 'alert' : 'status'}
          >
            <span>${notice.text}</span>
            <button class="link" @click=${() => banners.dismissNotice()}>Dismiss</button>
          </p>`
        : nothing
    }
  `;
}
