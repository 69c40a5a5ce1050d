/**
 * @module
 * The catalogue's entries for what is not a catalogue model: the echo engine, and a model of a
 * server the user added. Each says its fit as the catalogue does (src/models/fit.ts) — neither
 * runs on this device's GPU or CPU, so `backend` is null.
 */
import type { CatalogModel } from '../src/models/catalog';
import { ECHO_MODEL } from '../src/models/models';
import type { ServerModel } from '../src/servers/servers';

/** The echo engine: it runs anywhere, at once, on nothing — as good a fit as there is. */
export function echoCatalogModel(): CatalogModel {
  return {
    id: ECHO_MODEL.id,
    object: 'model',
    owned_by: ECHO_MODEL.owned_by,
    engine: 'echo',
    size_mb: 0,
    vram_required_mb: 0,
    context_window: ECHO_MODEL.context_window,
    required_features: [],
    available: true,
    backend: null,
    fit: 'good',
    downloaded: true,
    loaded: false,
    source: 'built-in',
    tools: false,
    reasoning: false,
    vision: ECHO_MODEL.capabilities.vision,
  };
}

/**
 * A server's model, leaving the device for the server's `host`. Its server runs it at whatever
 * speed it has: `good` while the device is online, `no` with `offline` (why) when it is not.
 */
export function remoteCatalogModel(
  model: ServerModel,
  origin: { server: string; host: string },
  offline: string | null,
): CatalogModel {
  const online = offline === null;
  return {
    id: model.id,
    object: 'model',
    owned_by: origin.server,
    engine: 'server',
    size_mb: null,
    vram_required_mb: null,
    context_window: 0,
    required_features: [],
    available: online,
    ...(!online && { unavailable_reason: offline }),
    backend: null,
    fit: online ? 'good' : 'no',
    ...(!online && { fit_reason: offline }),
    // Nothing to download: it is ready whenever the server is.
    downloaded: true,
    loaded: false,
    source: 'server',
    tools: true,
    reasoning: false,
    vision: null,
    leaves_device: true,
    server: { name: origin.server, host: origin.host, upstream_id: model.upstream },
  };
}
