/**
 * @module
 * Settings → Developer's "API keys" section, as render functions: who may call the API (any key,
 * or only keys issued here: switching asks first, in the app's `<confirm-dialog>`, and says what
 * it will do), the keys issued (this app's own cannot be revoked), and issuing a new one, shown
 * once. `<settings-developer>` holds the state and does the work.
 */
import { html, nothing, type TemplateResult } from 'lit';
import { live } from 'lit/directives/live.js';
import { appKey, appKeyId, DEFAULT_APP_KEY, type KeyInfo } from '../shared/api-client';
import { relayPairing } from '../relay/relay-pairing';
import '../shared/confirm-dialog';

/** What the section shows, and what its controls do. */
export interface KeysSection {
  /** Who may call the API now, as the settings say; undefined until read. */
  auth: 'any' | 'issued' | undefined;
  /** Switching to issued keys waits for the user's yes. */
  confirming: boolean;
  keys: KeyInfo[];
  /** A key just issued: shown this once. */
  issued: { name: string; key: string } | null;
  /** What the last action on keys said. */
  message: TemplateResult | typeof nothing;
  onAnyKey(): void;
  /** The user chose issued keys: ask first. */
  onIssuedKeys(): void;
  /** The answer to "Only keys issued here?" (Esc, or closing it: no). */
  onAnswer(yes: boolean): void;
  onIssue(form: HTMLFormElement): void;
  onRevoke(id: string): void;
}

export function keysSection(s: KeysSection): TemplateResult {
  const mine = appKeyId();
  return html`<section aria-labelledby="keys">
    <h3 id="keys">API keys</h3>
    <fieldset>
      <legend>Who may call the API</legend>
      <label>
        <input
          type="radio"
          name="auth"
          id="auth-any"
          .checked=${live(s.auth === 'any' && !s.confirming)}
          @change=${() => s.onAnyKey()}
        />
        Any non-empty key (as local servers do)
      </label>
      <label>
        <input
          type="radio"
          name="auth"
          id="auth-issued"
          .checked=${live(s.auth === 'issued' || s.confirming)}
          @change=${() => s.onIssuedKeys()}
        />
        Only keys issued here
      </label>
    </fieldset>
    ${s.message}
    <p>
      This app sends
      ${
        mine
          ? html`its own issued key, ending in <code>${appKey().slice(-4)}</code>.`
          : html`<code>${appKey()}</code>.`
      }
    </p>
    ${s.confirming ? confirmIssued(mine, s.onAnswer) : nothing}
    ${
      s.keys.length > 0
        ? html`<table>
            <caption class="sr-only">
              Issued keys
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Ends in</th>
                <th scope="col">Issued</th>
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              ${s.keys.map((k) => keyRow(k, k.id === mine, s.onRevoke))}
            </tbody>
          </table>`
        : html`<p class="muted">No key issued yet.</p>`
    }
    <form
      class="row"
      @submit=${(e: Event) => {
        e.preventDefault();
        s.onIssue(e.target as HTMLFormElement);
      }}
    >
      <label for="key-name">Name of a new key</label>
      <input id="key-name" placeholder="e.g. my gateway" maxlength="100" />
      <button type="submit">Issue a key</button>
    </form>
    ${
      s.issued
        ? html`<div class="row" role="status">
            <span>Key “${s.issued.name}” (shown this once):</span>
            <output aria-label="New key">${s.issued.key}</output>
            <button @click=${() => navigator.clipboard.writeText(s.issued?.key ?? '')}>
              Copy key
            </button>
          </div>`
        : nothing
    }
  </section>`;
}

function keyRow(k: KeyInfo, mine: boolean, onRevoke: (id: string) => void): TemplateResult {
  const why = `revoke-why-${k.id}`;
  return html`<tr>
    <td>${k.name}${mine ? html` <span class="badge">this app</span>` : nothing}</td>
    <td><code>${k.hint}</code></td>
    <td>${new Date(k.created * 1000).toLocaleString()}</td>
    <td>
      <button
        class="danger"
        aria-label="Revoke ${k.name}"
        ?disabled=${mine}
        aria-describedby=${mine ? why : nothing}
        @click=${() => onRevoke(k.id)}
      >
        Revoke
      </button>
      ${mine ? html`<span class="why muted" id=${why}>This app sends it.</span>` : nothing}
    </td>
  </tr>`;
}

/** What switching to issued keys does (src/app/shared/api-client.ts `setAuthMode`), asked first. */
function confirmIssued(mine: string | null, onAnswer: (yes: boolean) => void): TemplateResult {
  const paired = relayPairing.state.status === 'paired';
  return html`<confirm-dialog
    heading="Only keys issued here?"
    confirm="Switch to issued keys"
    described-by="confirm-what"
    .content=${html`<div id="confirm-what">
      <p>
        Every caller of this app's API will need a key issued here. Requests with any other key —
        scripts and pages on this origin, code that sends <code>${DEFAULT_APP_KEY}</code>, programs
        you gave a made-up key — will be refused (401).
      </p>
      <ul>
        <li>
          ${
            mine
              ? html`This app keeps sending its own issued key, ending in
                  <code>${appKey().slice(-4)}</code>.`
              : html`This app gets a key of its own automatically (“This app”), kept in this
                browser: its tabs here use it and go on working.`
          }
        </li>
        <li>
          ${
            paired
              ? 'The relay paired with this tab goes on working: its key is an issued one.'
              : 'A relay paired later is given an issued key when you pair it.'
          }
        </li>
        <li>You can switch back to any key at any time.</li>
      </ul>
    </div>`}
    @answer=${(e: CustomEvent<boolean>) => onAnswer(e.detail)}
  ></confirm-dialog>`;
}
