/**
 * @module
 * The relay pairing on a page that called `startHearth()` (src/relay-tab/relay-pairing.ts), shown
 * with plain DOM, as such a page has no UI of Hearth's: a pairing link opens a modal dialog that
 * asks first (the fingerprint of the relay's key to compare, a warning when another site opened
 * the link), in the app's words (src/relay-tab/pairing-words.ts); while the page serves the relay
 * a small notice says so and ends it on request; a refused or lost pairing says why. Hearth's app
 * shows its own (src/app/relay/relay-status.ts) and claims the pairing before it starts Hearth
 * (`claimPairing`): a page shows one or the other, never both. Everything lives in one shadow
 * root, so that the site's styles and Hearth's leave each other alone.
 */
import { PAIRING_WORDS as WORDS } from '../relay-tab/pairing-words';
import { relayKeyCalls } from '../relay-tab/relay-key-calls';
import { claimPairing, RelayPairing, type PairingState } from '../relay-tab/relay-pairing';

/**
 * A stylesheet object, not a `<style>` element: a site's Content Security Policy without
 * `'unsafe-inline'` would block the element, and does not apply to constructed sheets.
 */
const STYLES = `
  :host { all: initial; }
  dialog, .notice {
    color-scheme: light dark;
    font: 15px/1.45 system-ui, sans-serif;
    color: light-dark(#1d1d1f, #ececec);
    background: light-dark(#fff, #1f1f22);
    border: 1px solid light-dark(#d0d0d5, #3a3a40);
    border-radius: 8px;
  }
  dialog { max-width: min(34em, 92vw); padding: 1.2em; }
  dialog::backdrop { background: rgb(0 0 0 / 45%); }
  h2 { margin: 0 0 0.6em; font-size: 1.15em; }
  p { margin: 0 0 0.8em; }
  code { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
  .muted { opacity: 0.8; }
  .warning { border-left: 4px solid #c62828; padding-left: 0.6em; font-weight: 600; }
  .actions { display: flex; justify-content: flex-end; gap: 0.5em; margin-top: 1em; }
  button { font: inherit; padding: 0.35em 0.9em; }
  .notice {
    position: fixed; inset: auto 1em 1em auto; z-index: 2147483647;
    max-width: min(30em, calc(100vw - 2em)); margin: 0; padding: 0.7em 1em;
    box-shadow: 0 2px 10px rgb(0 0 0 / 20%);
  }
  .notice.error { border-color: #c62828; }
  .notice button { margin-left: 0.5em; padding: 0.1em 0.6em; }
`;

/** An element of `tag` with `props` set and `children` appended (strings become text). */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> = {},
  children: (Node | string)[] = [],
): HTMLElementTagNameMap[K] {
  const element = Object.assign(document.createElement(tag), props);
  element.append(...children);
  return element;
}

/** `[before, after]` around `value`, shown as code. */
const around = ([before, after]: readonly [string, string], value: string) => [
  before,
  el('code', { textContent: value }),
  after,
];

/** The confirmation: labelled by its title, the safe answer focused, Escape says no. */
function askDialog(
  pairing: RelayPairing,
  { relay, fingerprint, from }: Extract<PairingState, { status: 'asking' }>,
): HTMLDialogElement {
  // Unchecked here, where the app checks it: a site's own code calls with keys of its own, which
  // issued keys alone would refuse from then on, and a site has no Settings to undo it.
  const requireKeys = el('input', { type: 'checkbox', checked: false });
  const decline = el('button', { type: 'button', textContent: WORDS.decline, autofocus: true });
  const accept = el('button', { type: 'button', textContent: WORDS.accept });
  decline.addEventListener('click', () => pairing.decline());
  accept.addEventListener('click', () => pairing.accept({ requireKeys: requireKeys.checked }));
  const dialog = el('dialog', {}, [
    el('h2', { id: 'hearth-relay-title', textContent: WORDS.title }),
    el('p', {}, around(WORDS.question, relay)),
    el('p', { className: 'muted', textContent: WORDS.detail }),
    el('p', { className: 'fingerprint' }, around(WORDS.fingerprint, fingerprint)),
    ...(from === null ? [] : [el('p', { className: 'warning' }, around(WORDS.fromSite, from))]),
    el('label', {}, [requireKeys, ` ${WORDS.requireKeys}`]),
    el('div', { className: 'actions' }, [decline, accept]),
  ]);
  dialog.setAttribute('aria-labelledby', 'hearth-relay-title');
  // Escape closes the dialog (through `cancel`, or a close watcher that skips it): that is a no.
  // A yes has left 'asking' by the time the dialog goes, so this is no second answer.
  dialog.addEventListener('close', () => pairing.decline());
  return dialog;
}

/** The notice for `state`, or null when there is nothing to say. */
function notice(pairing: RelayPairing, state: PairingState, dismiss: () => void): Node | null {
  const button = (text: string, onClick: () => void) => {
    const b = el('button', { type: 'button', textContent: text });
    b.addEventListener('click', onClick);
    return b;
  };
  switch (state.status) {
    case 'none':
    case 'asking':
      return null;
    case 'connecting':
      return el('p', { className: 'notice' }, around(WORDS.connecting, state.relay));
    case 'paired':
      return el('p', { className: 'notice' }, [
        ...around(WORDS.paired, state.baseUrl),
        ' ',
        button(WORDS.stop, () => pairing.end()),
      ]);
    case 'ended':
      return el('p', { className: state.error ? 'notice error' : 'notice' }, [
        state.message,
        ' ',
        button(WORDS.dismiss, dismiss),
      ]);
  }
}

/**
 * Shows `pairing` as its state changes, in a shadow root added at the end of the page once there
 * is something to show: a page never paired gets nothing.
 */
function show(pairing: RelayPairing): void {
  let root: ShadowRoot | null = null;
  /** Live regions that stay, their content replaced: a refusal is an alert, the rest a status. */
  const status = el('div');
  status.setAttribute('role', 'status');
  const alert = el('div');
  alert.setAttribute('role', 'alert');
  let dialog: HTMLDialogElement | null = null;
  const mount = (): ShadowRoot => {
    const host = el('div', { className: 'hearth-relay' });
    const shadow = host.attachShadow({ mode: 'open' });
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLES);
    shadow.adoptedStyleSheets = [sheet];
    shadow.append(status, alert);
    (document.body ?? document.documentElement).append(host);
    return shadow;
  };
  const render = () => {
    const state = pairing.state;
    if (state.status === 'none') return;
    root ??= mount();
    if (state.status === 'asking' && dialog === null) {
      dialog = askDialog(pairing, state);
      root.append(dialog);
      dialog.showModal();
    } else if (state.status !== 'asking' && dialog !== null) {
      const asked = dialog;
      dialog = null;
      asked.remove();
    }
    const shown = notice(pairing, state, () => {
      status.replaceChildren();
      alert.replaceChildren();
    });
    const error = state.status === 'ended' && state.error;
    status.replaceChildren(...(shown && !error ? [shown] : []));
    alert.replaceChildren(...(shown && error ? [shown] : []));
  };
  pairing.addEventListener('change', render);
  render();
}

/**
 * Reads a pairing link in this page's address, or reconnects the pairing this tab had before a
 * reload, and shows it; the page's API is `apiUrl` (`{base}v1/`). Nothing on a page whose
 * pairing is shown already: by the app, or by an earlier `startHearth()` (the tab's session must
 * not connect twice).
 */
export function watchRelayPairing(apiUrl: string): void {
  if (!claimPairing('loader')) return;
  const pairing = new RelayPairing({ apiBase: apiUrl, ...relayKeyCalls(apiUrl) });
  show(pairing);
  pairing.start();
}
