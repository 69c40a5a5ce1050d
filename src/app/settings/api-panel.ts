/**
 * @module
 * `<api-panel>` (Settings → Developer): what a developer needs to call this API from their own
 * code on this origin — the base URL, a key, and snippets for the `openai` SDK and plain `fetch`.
 */
import { css, html, LitElement, nothing } from 'lit';
import { appKey, sdkBaseUrl } from '../shared/api-client';
import { shared } from '../shared/styles';

export class ApiPanel extends LitElement {
  static override properties = { model: {}, note: {}, key: {}, copied: { state: true } };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
      }
      h3 {
        font-size: 1.05em;
        margin: 0 0 0.4em;
      }
      h4 {
        font-size: 1em;
        margin: 0;
      }
      .field {
        display: flex;
        gap: 0.5em;
        align-items: center;
        flex-wrap: wrap;
        margin-bottom: 0.5em;
      }
      .field output {
        font: var(--mono);
        background: var(--code-bg);
        padding: 0.3em 0.5em;
        border-radius: 6px;
        overflow-wrap: anywhere;
      }
      .snippet-head {
        display: flex;
        gap: 0.5em;
        align-items: center;
        justify-content: space-between;
        flex-wrap: wrap;
        margin: 1.1em 0 0.4em;
      }
      pre {
        background: var(--code-bg);
        padding: 0.8em;
        border-radius: 8px;
        overflow-x: auto;
        font: var(--mono);
        margin: 0;
      }
      pre code {
        background: none;
        padding: 0;
        font: inherit;
      }
    `,
  ];

  /** The model the snippets name. */
  declare model: string;
  /** What to know about that model before calling it (that it must be downloaded first). */
  declare note: string | null;
  /** The key the snippets send: the one this app sends now. */
  declare key: string;
  declare private copied: string;

  constructor() {
    super();
    this.model = 'MODEL_ID';
    this.note = null;
    this.key = appKey();
    this.copied = '';
  }

  async #copy(what: string, text: string): Promise<void> {
    await navigator.clipboard.writeText(text);
    this.copied = what;
    setTimeout(() => (this.copied = ''), 1500);
  }

  /** A Copy button; `unseen` finishes its name for screen readers (“Copy the fetch snippet”). */
  #copyButton(what: string, text: string, label: string, unseen = '') {
    return html`<button @click=${() => this.#copy(what, text)}>
      ${this.copied === what ? 'Copied' : label}${unseen ? html`<span class="sr-only"> ${unseen}</span>` : ''}
    </button>`;
  }

  /** A snippet under its heading, its Copy button beside the heading (never over the code). */
  #snippet(what: string, heading: unknown, label: string, code: string) {
    return html`<div class="snippet-head">
        <h4 id="${what}-snippet">${heading}</h4>
        ${this.#copyButton(what, code, 'Copy', label)}
      </div>
      <pre tabindex="0" role="region" aria-labelledby="${what}-snippet"><code>${code}</code></pre>`;
  }

  protected override render() {
    const base = sdkBaseUrl();
    const key = this.key;
    const sdk = `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: '${base}',
  apiKey: '${key}',
  dangerouslyAllowBrowser: true, // the "server" is this browser
});

const stream = await client.chat.completions.create({
  model: '${this.model}',
  messages: [{ role: 'user', content: 'Hello!' }],
  stream: true,
});
for await (const chunk of stream) {
  console.log(chunk.choices[0]?.delta?.content ?? '');
}`;
    const fetchSnippet = `const response = await fetch('${base}/chat/completions', {
  method: 'POST',
  headers: {
    authorization: 'Bearer ${key}',
    'content-type': 'application/json',
  },
  body: JSON.stringify({
    model: '${this.model}',
    messages: [{ role: 'user', content: 'Hello!' }],
  }),
});
const reply = await response.json();
console.log(reply.choices[0].message.content);`;
    return html`
      <h3>Use the API from your code</h3>
      <p>
        Any page of this origin can call the model running in this browser with the tools it already
        knows. Nothing leaves the device.
      </p>
      <div class="field">
        <span>Base URL</span>
        <output aria-label="Base URL">${base}</output>
        ${this.#copyButton('base', base, 'Copy base URL')}
      </div>
      <div class="field">
        <span>Key</span>
        <output aria-label="Key">${key}</output>
        ${this.#copyButton('key', key, 'Copy key')}
      </div>
      ${this.note ? html`<p class="notice" role="note">${this.note}</p>` : nothing}
      ${this.#snippet('sdk', html`The <code>openai</code> SDK in a page`, 'the SDK snippet', sdk)}
      ${this.#snippet('fetch', html`Plain <code>fetch</code>`, 'the fetch snippet', fetchSnippet)}
      <p class="muted">
        Wait until the page is controlled by Hearth's service worker before the first call
        (<code>navigator.serviceWorker.ready</code>, then a <code>controller</code>); see the
        README.
      </p>
    `;
  }
}

customElements.define('api-panel', ApiPanel);

declare global {
  interface HTMLElementTagNameMap {
    'api-panel': ApiPanel;
  }
}
