/**
 * @module
 * What works without the network, said where a download could not reach its host: a GGUF file
 * from this computer (copied into the app, it needs no network), a model on a server of the
 * user's (on their own network), and the models already downloaded. Each is one step away, and
 * only what can act is offered: no downloaded models, no button for them.
 */
import { html, nothing } from 'lit';

/** What the ways act with. */
export interface OfflineWays {
  /** Opens "Add a model" at its file chooser. */
  addFile: () => void;
  /** How many models are on this device already (the echo engine and servers' models aside). */
  downloaded: number;
  /** Shows only those. */
  showDownloaded: () => void;
}

/** The ways, as one paragraph. */
export function renderOfflineWays(ways: OfflineWays) {
  const { downloaded } = ways;
  return html`<p class="offline-ways">
    Without the network, these work here:
    <button @click=${ways.addFile}>Add a GGUF file from this computer</button>, a model on
    <a href="#/settings/servers">a server of yours</a>${
      downloaded > 0
        ? html`, or
            <button @click=${ways.showDownloaded}>
              ${
                downloaded === 1
                  ? 'the model already downloaded'
                  : `the ${downloaded} models already downloaded`
              }
            </button>`
        : nothing
    }.
  </p>`;
}
