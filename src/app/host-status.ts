/**
 * @module
 * The engine host's status, as the host publishes it to every tab on the `hearth:status`
 * BroadcastChannel, for any element that shows it.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { statusChannelName, type HostStatus, type StatusMessage } from '../protocol/host/status';

/** Keeps `value` at the host's last published status and updates the element on each. */
export class HostStatusController implements ReactiveController {
  value: HostStatus | null = null;
  #channel: BroadcastChannel | undefined;
  readonly #listeners = new Set<(status: HostStatus) => void>();

  constructor(private readonly host: ReactiveControllerHost) {
    host.addController(this);
  }

  /** Calls `listener` with every status from now on. */
  listen(listener: (status: HostStatus) => void): void {
    this.#listeners.add(listener);
  }

  hostConnected(): void {
    this.#channel = new BroadcastChannel(statusChannelName());
    this.#channel.addEventListener('message', (event: MessageEvent<StatusMessage>) => {
      if (event.data.type !== 'status') return;
      this.value = event.data.status;
      for (const listener of this.#listeners) listener(event.data.status);
      this.host.requestUpdate();
    });
    // A tab that just opened has seen nothing yet: the host sends its status at once.
    this.#channel.postMessage({ type: 'status/wanted' } satisfies StatusMessage);
  }

  hostDisconnected(): void {
    this.#channel?.close();
  }
}
