/**
 * @module
 * When `<chat-view>` shows the first-run card, and what follows from it: a newcomer with no real
 * model on the device gets the card in an empty conversation (until they dismiss it, remembered),
 * and a message sent before there was a model waits under the card and is answered once a model
 * is ready (the one the card got, or one that came to the device meanwhile). It also remembers
 * the echo engine's hint being dismissed, the other "not now" of an empty conversation.
 */
import { html, type ReactiveController, type ReactiveControllerHost } from 'lit';
import { ECHO_MODEL_ID } from '../../../models/models';
import type { HostStatus } from '../../../protocol/host/status';
import { leavesFor, type CatalogModel } from '../../shared/api-client';
import type { Conversation } from '../../conversations/conversation';
import { defaultModel, NO_MODEL } from '../chat-models';
import type { ReplyStreamController } from '../reply-stream';
import './first-run';

/** Remembered answers to the one-line hints ("not now"). */
const ECHO_HINT_KEY = 'hearth:echo-hint-dismissed';
const FIRST_RUN_KEY = 'hearth:first-run-dismissed';

function remembered(key: string): boolean {
  try {
    return localStorage.getItem(key) === '1';
  } catch {
    return false;
  }
}

function remember(key: string): void {
  try {
    localStorage.setItem(key, '1');
  } catch {
    // Storage blocked: the hint stays away for this page only.
  }
}

/** The view the card shows in: its conversation, the models and the host's status. */
export interface FirstRunView extends ReactiveControllerHost, EventTarget {
  readonly conversation: Conversation;
  readonly models: CatalogModel[];
  readonly catalog: CatalogModel[];
  readonly checking: boolean;
  readonly host: HostStatus | null;
  focusComposer(): void;
}

/** Decides on the first-run card and answers a message that waits for a model. */
export class FirstRunController implements ReactiveController {
  echoHintDismissed = remembered(ECHO_HINT_KEY);
  firstRunDismissed = remembered(FIRST_RUN_KEY);
  /**
   * A model the first-run card got: the conversation takes it once the catalogue lists it as
   * downloaded, and a waiting message is answered.
   */
  #ready: string | null = null;

  constructor(
    private readonly view: FirstRunView,
    private readonly replies: Pick<ReplyStreamController, 'streaming' | 'save' | 'reply'>,
  ) {
    view.addController(this);
  }

  /** The models and the catalogue's reading as the last update saw them. */
  #seen: { models: CatalogModel[]; checking: boolean } | null = null;

  /** The models or the catalogue's reading changed: a waiting message may have its model now. */
  hostUpdated(): void {
    const { models, checking } = this.view;
    if (this.#seen?.models === models && this.#seen.checking === checking) return;
    this.#seen = { models, checking };
    this.#answerWaiting();
  }

  /** The conversation's model, as the catalogue knows it. */
  get #model(): CatalogModel | undefined {
    return this.view.models.find((m) => m.id === this.view.conversation.model);
  }

  /** A message was sent before there was a model: the last one, with no reply yet. */
  get awaiting(): boolean {
    const c = this.view.conversation;
    return c.model === NO_MODEL && c.messages.at(-1)?.role === 'user';
  }

  /** No real model on the device: a newcomer gets the first-run card in an empty conversation. */
  get shown(): boolean {
    const view = this.view;
    if (this.awaiting) return true;
    if (this.firstRunDismissed || view.conversation.messages.length > 0) return false;
    if (view.checking) return true;
    // The user picked a server's model: they have a real one.
    if (leavesFor(this.#model)) return false;
    return !view.models.some((m) => m.id !== ECHO_MODEL_ID && !m.leaves_device);
  }

  /** The user does not want the echo engine's hint again. */
  dismissEchoHint(): void {
    remember(ECHO_HINT_KEY);
    this.echoHintDismissed = true;
    this.view.requestUpdate();
    this.view.focusComposer();
  }

  /** The conversation's model is now `id`; a message that waited for one is answered with it. */
  setModel(id: string): void {
    const waited = this.awaiting;
    this.view.conversation.model = id;
    void this.replies.save();
    this.view.requestUpdate();
    if (waited && this.#model) void this.replies.reply();
  }

  /** Gives a waiting message the model that became ready (the one got, or one on the device). */
  #answerWaiting(): void {
    const view = this.view;
    if (!this.awaiting || this.replies.streaming || view.checking) return;
    const ready = this.#ready ?? defaultModel(view.models);
    if (ready === NO_MODEL || !view.models.some((m) => m.id === ready)) return;
    this.#ready = null;
    this.setModel(ready);
  }

  /** The first-run card: in an empty conversation, or under a message that waits for a model. */
  render() {
    const view = this.view;
    return html`<first-run
      .catalog=${view.catalog}
      .host=${view.host}
      .checking=${view.checking}
      .waiting=${this.awaiting}
      @dismiss=${() => {
        remember(FIRST_RUN_KEY);
        this.firstRunDismissed = true;
        view.requestUpdate();
        view.focusComposer();
      }}
      @model-ready=${(e: CustomEvent<string>) => {
        // A waiting message takes the model once the catalogue lists it as downloaded.
        if (this.awaiting) this.#ready = e.detail;
        else this.setModel(e.detail);
        view.dispatchEvent(new CustomEvent('catalog-stale', { bubbles: true, composed: true }));
        view.focusComposer();
      }}
    ></first-run>`;
  }
}
