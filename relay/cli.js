#!/usr/bin/env node
/**
 * @module
 * `hearth-relay` (`npm run relay`): starts the relay and prints how to use it.
 */
import { parseArgs } from 'node:util';
import { defaultConfigFile } from './config.js';
import { startRelay } from './relay.js';

const HELP = `Usage: hearth-relay [options]

Serves the API of a Hearth tab on this machine, for curl, scripts, editors and AI gateways.

Options:
  --port <n>      Port to listen on (env HEARTH_RELAY_PORT; default 8788)
  --host <addr>   Address to listen on (env HEARTH_RELAY_HOST; default 127.0.0.1).
                  An address of this machine on the network (e.g. 192.168.1.5) serves the
                  network, called by that address; the tab's keys decide who may call.
  --app <url>     The page to pair: where the app runs, or any page that calls startHearth()
                  (env HEARTH_RELAY_APP; default http://127.0.0.1:4173/). Only tabs of its
                  origin may pair, and the pairing link opens that page.
  --config <file> The relay's key file (env HEARTH_RELAY_CONFIG;
                  default ${defaultConfigFile()})
  -h, --help      This text.`;

/**
 * @param {string} message
 * @returns {never}
 */
function exit(message) {
  console.error(`hearth-relay: ${message}`);
  process.exit(2);
}

function readOptions() {
  try {
    return parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        app: { type: 'string' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    return exit(`${/** @type {Error} */ (error).message}\n\n${HELP}`);
  }
}

const values = readOptions();
if (values.help) {
  console.log(HELP);
  process.exit(0);
}

const env = process.env;
const portText = String(values.port ?? env.HEARTH_RELAY_PORT ?? '8788');
const port = Number(portText);
if (!/^\d+$/.test(portText) || port > 65535)
  exit(`--port must be a port number, not '${portText}'.`);
const app = String(values.app ?? env.HEARTH_RELAY_APP ?? 'http://127.0.0.1:4173/');
try {
  const { protocol } = new URL(app);
  if (protocol !== 'http:' && protocol !== 'https:') throw new Error(protocol);
} catch {
  exit(
    `--app must be the http(s) address of the app or of a page that calls startHearth(), not '${app}'.`,
  );
}

let relay;
try {
  relay = await startRelay({
    port,
    host: String(values.host ?? env.HEARTH_RELAY_HOST ?? '127.0.0.1'),
    app,
    configFile: String(values.config ?? defaultConfigFile()),
  });
} catch (error) {
  const { code, message } = /** @type {NodeJS.ErrnoException} */ (error);
  exit(
    code === 'EADDRINUSE'
      ? `port ${port} is in use (another relay?). Choose another with --port.`
      : message,
  );
}

console.log(`Hearth relay is running.
  Base URL:      ${relay.baseUrl}   (gateways, curl)
  SDK base URL:  ${relay.sdkBaseUrl}
  API key:       ${relay.key}
  Fingerprint:   ${relay.fingerprint}   (of the key: the browser's confirmation shows the same)

${relay.exposure}

Pair a tab of the app: open this link in the browser where Hearth runs, check that the
confirmation shows the fingerprint above, and confirm.
  ${relay.pairingLink}

Press Ctrl+C to stop.`);

for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => void relay.close().then(() => process.exit(0)));
}
