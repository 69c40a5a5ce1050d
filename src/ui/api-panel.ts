/**
 * @module
 * `<api-panel>`: what a developer needs to call this API from their own code on this origin —
 * the base URL, a key, and snippets for the `openai` SDK and for plain `fetch`.
 */
import { css, html, LitElement } from 'lit';
import { appKey, sdkBaseUrl } from './api-client';
import { shared } from './styles';

export class ApiPanel extends LitElement {
  static override properties = { model: {}, copied: { state: true } };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
        padding: 1em;
        max-width: 52em;
        margin: 0 auto;
      }
      h2 {
        font-size: 1.3em;
        margin: 0 0 0.6em;
      }
      h3 {
        font-size: 1.05em;
        margin: 1.2em 0 0.4em;
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
      .snippet {
        position: relative;
      }
      pre {
        background: var(--code-bg);
        padding: 0.8em;
        border-radius: 8px;
        overflow-x: auto;
        font: var(--mono);
        margin: 0;
      }
      .snippet button {
        position: absolute;
        top: 0.4em;
        right: 0.4em;
        font-size: 0.85em;
      }
    `,
  ];

  /** The model the snippets name. */
  declare model: string;
  declare private copied: string;

  constructor() {
    super();
    this.model = 'hearth/echo';
    this.copied = '';
  }

  async #copy(what: string, text: string): Promise<void> {
    await navigator.clipboard.writeText(text);
    this.copied = what;
    setTimeout(() => (this.copied = ''), 1500);
  }

  #copyButton(what: string, text: string, label: string) {
    return html`<button @click=${() => this.#copy(what, text)}>
      ${this.copied === what ? 'Copied' : label}
    </button>`;
  }

  protected override render() {
    const base = sdkBaseUrl();
    const key = appKey();
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
      <h2>Use the API from your code</h2>
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
      <h3>The <code>openai</code> SDK in a page</h3>
      <div class="snippet">
        <pre><code>${sdk}</code></pre>
        ${this.#copyButton('sdk', sdk, 'Copy')}
      </div>
      <h3>Plain <code>fetch</code></h3>
      <div class="snippet">
        <pre><code>${fetchSnippet}</code></pre>
        ${this.#copyButton('fetch', fetchSnippet, 'Copy')}
      </div>
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
