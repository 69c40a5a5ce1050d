/**
 * @module
 * What Settings → Developer reads and changes, as a reactive controller: the device's status, the
 * settings (who may call the API, the prices) and the issued keys, read again after every change
 * and whenever the relay's pairing changes (a pairing registers a key); and what the last action
 * said, beside the control that made it. `<settings-developer>` renders it.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import {
  call,
  callJson,
  issueKey,
  setAuthMode,
  status,
  type FullStatus,
  type KeyInfo,
  type SettingsBody,
} from '../shared/api-client';
import { relayPairing } from '../relay/relay-pairing';

/** Where a message about the last action is shown: beside the control that made it. */
export type Where = 'top' | 'keys' | 'prices' | 'responses';

export class DeveloperState implements ReactiveController {
  device: FullStatus | null = null;
  settings: SettingsBody | null = null;
  keys: KeyInfo[] = [];
  /** A key just issued: shown this once. */
  issued: { name: string; key: string } | null = null;
  message: { text: string; error: boolean; where: Where } | null = null;
  /** The Responses API's conversations kept on this device: how many, in how many bytes. */
  kept: { count: number; bytes: number } | null = null;

  constructor(private readonly host: ReactiveControllerHost) {
    host.addController(this);
  }

  hostConnected(): void {
    relayPairing.addEventListener('change', this.#onRelay);
    void this.refresh();
  }

  hostDisconnected(): void {
    relayPairing.removeEventListener('change', this.#onRelay);
  }

  /** The pairing changed: show it at once, and the keys (a pairing registers one) once read. */
  readonly #onRelay = () => {
    this.host.requestUpdate();
    void this.refresh();
  };

  /** Reads the device's status, the settings and the keys again. */
  async refresh(): Promise<void> {
    try {
      const [device, settings, keys, kept] = await Promise.all([
        status(),
        callJson<SettingsBody>('hearth/settings'),
        callJson<{ data: KeyInfo[] }>('hearth/keys'),
        callJson<{ data: { bytes: number }[] }>('hearth/responses'),
      ]);
      this.device = device;
      this.settings = settings;
      this.keys = keys.data;
      this.kept = {
        count: kept.data.length,
        bytes: kept.data.reduce((sum, r) => sum + r.bytes, 0),
      };
      this.host.requestUpdate();
    } catch (err) {
      this.#say(err, 'top', true);
    }
  }

  #say(text: unknown, where: Where, error = false): void {
    this.message = { text: text instanceof Error ? text.message : String(text), error, where };
    this.host.requestUpdate();
  }

  async setAuth(mode: 'any' | 'issued'): Promise<void> {
    try {
      this.settings = await setAuthMode(mode);
      this.#say(
        mode === 'issued'
          ? 'Only issued keys may call the API now.'
          : 'Any non-empty key may call the API now.',
        'keys',
      );
    } catch (err) {
      this.#say(err, 'keys', true);
    }
    await this.refresh();
  }

  /** Issues a key named by `form`'s input (emptied once issued). */
  async issue(form: HTMLFormElement): Promise<void> {
    const input = form.querySelector('input');
    const name = input?.value.trim() || 'Key';
    try {
      const key = await issueKey({ name });
      this.issued = { name: key.name, key: key.key };
      this.host.requestUpdate();
      if (input) input.value = '';
    } catch (err) {
      this.#say(err, 'keys', true);
    }
    await this.refresh();
  }

  async revoke(id: string): Promise<void> {
    try {
      await call(`hearth/keys/${id}`, { method: 'DELETE' });
      this.#say('The key was revoked.', 'keys');
    } catch (err) {
      this.#say(err, 'keys', true);
    }
    await this.refresh();
  }

  /** Saves `model`'s prices as its `row`'s two inputs say (both empty: no price). */
  async setPrice(model: string, row: HTMLElement): Promise<void> {
    const [prompt, completion] = [...row.querySelectorAll('input')].map((i) => i.value.trim());
    const price =
      prompt === '' && completion === ''
        ? null
        : { prompt: Number(prompt || 0), completion: Number(completion || 0) };
    try {
      this.settings = await callJson<SettingsBody>('hearth/settings', {
        method: 'PATCH',
        body: { prices: { [model]: price } },
      });
      this.#say(`Prices of ${model} saved.`, 'prices');
    } catch (err) {
      this.#say(err, 'prices', true);
    }
  }

  /** Forgets every response the Responses API kept on this device. */
  async forgetResponses(): Promise<void> {
    try {
      const { deleted } = await callJson<{ deleted: number }>('hearth/responses', {
        method: 'DELETE',
      });
      this.#say(
        `${deleted} kept ${deleted === 1 ? 'response was' : 'responses were'} forgotten.`,
        'responses',
      );
    } catch (err) {
      this.#say(err, 'responses', true);
    }
    await this.refresh();
  }
}
