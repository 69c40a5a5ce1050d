/**
 * @module
 * `<chat-view>`'s bar: the phone's menu, the conversation's title, the model picker (a server's
 * model marked as leaving the device, and for where), the model's load progress, Chat options and
 * the phone's New chat. A render helper: the view keeps the state and the events.
 */
import { html, nothing } from 'lit';
import { ECHO_MODEL_ID } from '../../models/models';
import type { HostStatus } from '../../protocol/host/status';
import { leavesFor, type CatalogModel } from '../shared/api-client';
import type { Conversation } from '../conversations/conversation';
import { describeModel } from '../models/model-info';
import { NO_MODEL } from './chat-models';

/** What the bar shows. */
export interface BarState {
  conversation: Conversation;
  /** The conversation's model, as the catalogue knows it. */
  model: CatalogModel | undefined;
  models: CatalogModel[];
  checking: boolean;
  /** Send can: else the picker is described by why not (`send-why`). */
  canSend: boolean;
  /** Chat options is open. */
  showSettings: boolean;
  host: HostStatus | null;
}

/** What the bar's controls do. */
export interface BarActions {
  /** Fires an event of the view's (`open-drawer`, `new-chat`). */
  emit(name: string): void;
  /** The user picked the model `id`. */
  pick(id: string): void;
  /** Chat options opens, or closes. */
  toggleOptions(): void;
}

export function renderBar(state: BarState, actions: BarActions) {
  const { conversation: c, model, checking } = state;
  return html`<div class="bar">
    <button
      class="menu"
      aria-label="Menu"
      aria-expanded="false"
      title="Menu"
      @click=${() => actions.emit('open-drawer')}
    >
      ☰
    </button>
    <h2 id="title" title=${c.title}>${c.title}</h2>
    <label for="model">Model</label>
    <select
      id="model"
      aria-describedby=${state.canSend ? nothing : 'send-why'}
      @change=${(e: Event) => actions.pick((e.target as HTMLSelectElement).value)}
    >
      ${
        model
          ? nothing
          : c.model === NO_MODEL
            ? html`<option value="" selected>
                ${checking ? 'Checking this device…' : 'Choose a model'}
              </option>`
            : checking
              ? html`<option value=${c.model} selected>Checking this device…</option>`
              : html`<option value=${c.model} selected>${c.model} (not on this device)</option>`
      }
      ${state.models.map(
        (m) => html`<option value=${m.id} ?selected=${m.id === c.model}>${optionText(m)}</option>`,
      )}
    </select>
    ${renderLoading(c.model, state.host)}
    <button
      class="options"
      aria-label="Chat options"
      aria-expanded=${state.showSettings ? 'true' : 'false'}
      aria-controls="settings"
      @click=${() => actions.toggleOptions()}
    >
      <span class="long">Chat options</span><span class="short">Options</span>
    </button>
    <button
      class="new"
      aria-label="New chat"
      title="New chat"
      @click=${() => actions.emit('new-chat')}
    >
      +
    </button>
  </div>`;
}

/** The model's load progress, or that it is loaded. */
function renderLoading(model: string, host: HostStatus | null) {
  const loading = host?.loading;
  if (loading && loading.model === model) {
    return html`<span class="muted" role="status">
      Loading ${Math.round(loading.progress * 100)} %
    </span>`;
  }
  if (host?.loaded_model === model) {
    return html`<span class="badge ok">loaded</span>`;
  }
  return nothing;
}

/**
 * A model as the picker lists it, by the name people know it by and its quantisation; a server's
 * model by its id, and that it leaves the device, and for where.
 */
export function optionText(m: CatalogModel): string {
  if (m.id === ECHO_MODEL_ID) return 'Echo (test engine)';
  const remote = leavesFor(m);
  if (remote) return `${m.id} — leaves this device (${remote})`;
  const info = describeModel(m);
  const name = info.quantisation ? `${info.name} · ${info.quantisation.label}` : info.name;
  return m.vision ? `${name} · sees images` : name;
}
