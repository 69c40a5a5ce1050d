/**
 * @module
 * Where the Servers view says how a server's key is kept: a warning when this app's origin is
 * shared with pages it does not control (they can read the keys it stores), the choice to keep a
 * key for the session only, and what became of a key kept so.
 */
import { html, nothing } from 'lit';
import { callJson, type ServerInfo } from '../../shared/api-client';
import { sharedOrigin, type SharedOrigin } from './shared-origin';

/** This app's origin, where it is shared (see `sharedOrigin`). */
export function thisOriginShared(): SharedOrigin | null {
  return sharedOrigin(location.hostname, import.meta.env.BASE_URL);
}

/** The warning for a shared origin, or nothing. */
export function sharedOriginWarning(shared: SharedOrigin | null) {
  if (!shared) return nothing;
  const why =
    shared.kind === 'host'
      ? html`<code>${shared.host}</code> is on ${shared.suffix}, where one origin serves many sites`
      : html`this app lives under <code>${shared.base}</code> of <code>${shared.host}</code>, whose
          other paths can hold other pages`;
  return html`<p class="notice" role="note" id="server-shared-origin">
    <strong>This origin is shared:</strong> ${why}. A key kept in this browser can be read by every
    page of the origin, not only by Hearth. Keep keys for this session only, or install Hearth on an
    origin of its own.
  </p>`;
}

/** The form's choice to keep the key for the session only (`keep_key: "session"`). */
export function sessionKeyChoice(disabled: boolean) {
  // `choice`: in the form's field column (the view's styles; the CSP allows no inline style).
  return html`<label class="choice">
      <input
        type="checkbox"
        name="keep_key"
        value="session"
        aria-describedby="server-session-hint"
        ?disabled=${disabled}
      />
      Keep the key for this session only
    </label>
    <p class="hint muted" id="server-session-hint">
      The key is then kept only in the memory of Hearth's service worker, never stored. The browser
      stops that worker when Hearth is idle for a while (often within a minute) and when it closes:
      the key is gone then, and the server's models fail until you enter it again here.
    </p>`;
}

/** `PATCH /v1/hearth/servers/{name}` `{api_key}`: the key again, checked on the server. */
export function setServerKey(name: string, key: string): Promise<ServerInfo> {
  return callJson<ServerInfo>(`hearth/servers/${encodeURIComponent(name)}`, {
    method: 'PATCH',
    body: { api_key: key },
  });
}

/**
 * What the list says of a server's key; for a key kept for the session only and gone, a field to
 * enter it again (`enter` is given the key).
 */
export function keyState(s: ServerInfo, enter: (key: string) => void, busy: boolean) {
  if (s.key_needed) {
    const id = `server-key-again-${s.name}`;
    return html`<span class="error" id="${id}-why"
        >Kept for this session only, and gone (the browser stopped Hearth's service worker): enter
        it again.</span
      >
      <form
        class="row"
        aria-label="Key of ${s.name} again"
        @submit=${(e: Event) => {
          e.preventDefault();
          const field = (e.target as HTMLFormElement).elements.namedItem('api_key');
          const key = (field as HTMLInputElement | null)?.value.trim() ?? '';
          if (key) enter(key);
        }}
      >
        <input
          name="api_key"
          type="password"
          autocomplete="off"
          aria-label="Key"
          aria-describedby="${id}-why"
          ?disabled=${busy}
        />
        <button type="submit" ?disabled=${busy}>Use this key</button>
      </form>`;
  }
  if (!s.key_hint) return 'none';
  const hint = html`ends in <code>${s.key_hint}</code>`;
  return s.key_kept === 'session' ? html`${hint}, kept for this session only` : hint;
}
