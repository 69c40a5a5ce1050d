/**
 * @module
 * What Settings → Servers reads and changes, as a reactive controller: the servers as the API
 * lists them, adding one (the form waits while its `/models` is read), the models each offers,
 * a key taken again, a removal; each server's change in flight and its last error; and what the
 * last action did. Every change tells the app that the catalogue is stale. Focus goes where the
 * user carries on once a change is shown. `<servers-view>` renders it.
 */
import type { LitElement, ReactiveController } from 'lit';
import {
  addServer,
  ApiError,
  listServers,
  offerServerModels,
  removeServer,
  type ServerInfo,
} from '../../shared/api-client';
import { confirmPrivateNetwork } from '../../shared/private-network-confirm';
import { setServerKey } from './server-key-keeping';
import {
  errorField,
  fieldId,
  headingId,
  messageOf,
  nameFromUrl,
  type FormError,
} from './server-form';

export class ServersState implements ReactiveController {
  /** The servers as the API lists them; null until read. */
  servers: ServerInfo[] | null = null;
  /** A server is being added (its `/models` read). */
  adding = false;
  formError: FormError | null = null;
  /** What the last action did, for the status line. */
  said = '';
  /** Servers with a change in flight. */
  busy: ReadonlySet<string> = new Set();
  /** The last failed change of a server, by name. */
  errors: ReadonlyMap<string, string> = new Map();

  constructor(private readonly host: LitElement) {
    host.addController(this);
  }

  hostConnected(): void {
    void this.refresh();
  }

  #changed(): void {
    this.host.requestUpdate();
  }

  #focus(id: string): void {
    this.host.renderRoot.querySelector<HTMLElement>(`#${id}`)?.focus();
  }

  /** Reads the servers again. */
  async refresh(): Promise<void> {
    try {
      this.servers = await listServers();
    } catch (err) {
      this.servers ??= [];
      this.said = `The servers could not be read: ${messageOf(err)}`;
    }
    this.#changed();
  }

  /** Tells the app to read the catalogue again: the servers' models changed. */
  #stale(): void {
    this.host.dispatchEvent(new CustomEvent('catalog-stale', { bubbles: true, composed: true }));
  }

  /** Adds the server `form` describes; focus then goes to its card, or to the field in error. */
  async add(form: HTMLFormElement): Promise<void> {
    if (this.adding) return;
    const data = new FormData(form);
    const baseUrl = String(data.get('base_url') ?? '').trim();
    const name = String(data.get('name') ?? '').trim() || nameFromUrl(baseUrl);
    const key = String(data.get('api_key') ?? '').trim();
    const session = data.get('keep_key') === 'session';
    const allow = confirmPrivateNetwork(baseUrl);
    if (!allow) return;
    this.adding = true;
    this.formError = null;
    this.said = '';
    this.#changed();
    let added: ServerInfo | undefined;
    try {
      added = await addServer({
        name,
        base_url: baseUrl,
        ...allow,
        ...(key && { api_key: key, ...(session && { keep_key: 'session' as const }) }),
      });
    } catch (err) {
      const param = err instanceof ApiError ? err.param : null;
      this.formError = { text: messageOf(err), field: errorField(param, baseUrl) };
    } finally {
      this.adding = false;
      this.#changed();
    }
    await this.host.updateComplete;
    if (!added) {
      if (this.formError?.field) this.#focus(fieldId(this.formError.field));
      return;
    }
    form.reset();
    const count = added.models.length;
    this.said = `Added ${added.name}: ${count} model${count === 1 ? '' : 's'} found, all offered.`;
    this.#changed();
    await this.refresh();
    this.#stale();
    await this.host.updateComplete;
    this.#focus(headingId(added.name));
  }

  /** Offers the models whose boxes are ticked now (several quick clicks: the last one wins). */
  async offer(server: ServerInfo, box: HTMLInputElement, model: string): Promise<void> {
    const boxes = [...(box.closest('fieldset')?.querySelectorAll('input') ?? [])];
    const next = server.models.filter((_, i) => boxes[i]?.checked);
    const offered = box.checked;
    // Shown at once (renders meanwhile keep the boxes as ticked); a failure reads them back.
    this.servers = (this.servers ?? []).map((s) =>
      s.name === server.name ? { ...s, offered: next } : s,
    );
    this.#changed();
    await this.#change(server.name, async () => {
      const updated = await offerServerModels(server.name, next);
      this.servers = (this.servers ?? []).map((s) => (s.name === updated.name ? updated : s));
      this.said = `${server.name}/${model} is ${offered ? 'offered' : 'no longer offered'}.`;
    });
  }

  /** Takes a server's key again (one kept for the session only, gone with the worker). */
  async keyAgain(name: string, key: string): Promise<void> {
    await this.#change(name, async () => {
      const updated = await setServerKey(name, key);
      this.servers = (this.servers ?? []).map((s) => (s.name === updated.name ? updated : s));
      this.said = `${name} has its key again, for this session only.`;
    });
  }

  /** Removes a server; focus then goes to the form's first field. */
  async remove(name: string): Promise<void> {
    const removed = await this.#change(name, async () => {
      await removeServer(name);
      this.said = `Removed ${name}: its models are no longer offered.`;
    });
    await this.refresh();
    await this.host.updateComplete;
    if (removed) this.#focus('server-name');
  }

  /** Runs a change of one server: busy meanwhile, its error shown with it; the catalogue after. */
  async #change(name: string, action: () => Promise<void>): Promise<boolean> {
    this.busy = new Set([...this.busy, name]);
    const errors = new Map(this.errors);
    errors.delete(name);
    this.errors = errors;
    this.#changed();
    let ok = false;
    try {
      await action();
      ok = true;
    } catch (err) {
      this.errors = new Map([...this.errors, [name, messageOf(err)]]);
      await this.refresh();
    } finally {
      const busy = new Set(this.busy);
      busy.delete(name);
      this.busy = busy;
      this.#changed();
      this.#stale();
    }
    return ok;
  }
}
