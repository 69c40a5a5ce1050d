/**
 * @module
 * Hears the service worker say that the models the user added, or the servers, changed (a tab
 * added or removed one), so that every tab reads the catalogue again.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { addedModelsChannelName, type AddedModelsMessage } from '../../models/added/added-models';

/** Calls `onChange` whenever the added models change, while its element is connected. */
export class AddedModelsWatch implements ReactiveController {
  #channel: BroadcastChannel | undefined;

  constructor(
    host: ReactiveControllerHost,
    private readonly onChange: () => void,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    this.#channel = new BroadcastChannel(addedModelsChannelName());
    this.#channel.addEventListener('message', (event: MessageEvent<AddedModelsMessage>) => {
      if (event.data.type === 'added-models/changed' || event.data.type === 'servers/changed') {
        this.onChange();
      }
    });
  }

  hostDisconnected(): void {
    this.#channel?.close();
  }
}
