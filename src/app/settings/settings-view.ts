/**
 * @module
 * src/app/settings/ is Settings: this view and its sections (preferences, saved prompts,
 * developer and diagnostics, the API panel and its snippets) and the Servers view. It imports
 * shared/, chat/ (the models a chat can use), models/ and relay/.
 *
 * `<settings-view>`: the app's Settings, in sections a row of links apart (`#/settings/<section>`):
 * Preferences (how the app looks and how new conversations start), Servers (OpenAI-compatible
 * servers the user added) and Developer (the API from code, who may call it, prices, the relay,
 * and this device's diagnostics).
 */
import { css, html, LitElement } from 'lit';
import type { HostStatus } from '../../protocol/host/status';
import type { CatalogModel } from '../shared/api-client';
import type { Persistence } from '../shared/persistence';
import './servers/servers-view';
import './settings-developer';
import './settings-preferences';
import { shared, view } from '../shared/styles';

export type SettingsSection = 'preferences' | 'servers' | 'developer';

const SECTIONS: { section: SettingsSection; label: string }[] = [
  { section: 'preferences', label: 'Preferences' },
  { section: 'servers', label: 'Servers' },
  { section: 'developer', label: 'Developer' },
];

/** The section a route names; Preferences for none or one this version does not know. */
export function sectionOf(name: string): SettingsSection {
  return SECTIONS.find((s) => s.section === name)?.section ?? 'preferences';
}

/**
 * @fires request-persistence - the user asks for persistent storage (Developer → Storage).
 * @fires catalog-stale - the servers changed, and with them the catalogue (Servers).
 */
export class SettingsView extends LitElement {
  static override properties = {
    section: {},
    model: {},
    host: { attribute: false },
    catalog: { attribute: false },
    role: {},
    persistence: {},
  };

  static override styles = [
    shared,
    view,
    css`
      nav ul {
        display: flex;
        flex-wrap: wrap;
        gap: 0.2em;
        list-style: none;
        margin: 0 0 1.2em;
        padding: 0;
        border-bottom: 1px solid var(--border);
      }
      nav a {
        display: block;
        padding: 0.4em 0.9em;
        color: var(--fg-soft);
        text-decoration: none;
        border-bottom: 3px solid transparent;
        margin-bottom: -1px;
      }
      nav a:hover {
        color: var(--fg);
      }
      nav a[aria-current='page'] {
        color: var(--fg);
        font-weight: 600;
        border-bottom-color: var(--accent);
      }
    `,
  ];

  /** The section shown: `preferences`, `servers` or `developer` (anything else: Preferences). */
  declare section: string;
  /** The open conversation's model, which the API's snippets name (empty: none chosen). */
  declare model: string;
  declare host: HostStatus | null;
  declare catalog: CatalogModel[];
  /** This tab's part in the engine-host election. */
  declare role: string;
  declare persistence: Persistence;

  constructor() {
    super();
    this.section = 'preferences';
    this.model = '';
    this.host = null;
    this.catalog = [];
    this.role = '';
    this.persistence = 'unknown';
  }

  protected override render() {
    const current = sectionOf(this.section);
    return html`
      <h2>Settings</h2>
      <nav aria-label="Settings sections">
        <ul>
          ${SECTIONS.map(
            (s) =>
              html`<li>
                <a
                  href="#/settings/${s.section}"
                  aria-current=${s.section === current ? 'page' : 'false'}
                  >${s.label}</a
                >
              </li>`,
          )}
        </ul>
      </nav>
      ${this.#renderSection(current)}
    `;
  }

  #renderSection(section: SettingsSection) {
    switch (section) {
      case 'preferences':
        return html`<settings-preferences .catalog=${this.catalog}></settings-preferences>`;
      case 'servers':
        return html`<servers-view></servers-view>`;
      case 'developer':
        return html`<settings-developer
          .model=${this.model}
          .host=${this.host}
          .catalog=${this.catalog}
          .role=${this.role}
          .persistence=${this.persistence}
        ></settings-developer>`;
    }
  }
}

customElements.define('settings-view', SettingsView);

declare global {
  interface HTMLElementTagNameMap {
    'settings-view': SettingsView;
  }
}
