#!/usr/bin/env node
/**
 * The relay's memory under large uploads: starts `relay/cli.js` (or the relay in `--relay-dir`,
 * e.g. an older one) as its users do, pairs a tab of this script's own that answers each request
 * once its body came, sends `--rounds` rounds of `--callers` uploads of `--mib` MiB at once, and
 * prints the relay process's peak resident memory (Linux: VmHWM) and how many uploads were
 * answered 429. The relay's cap of bodies held is 128 MiB; what it holds beyond its counted bodies
 * is copies.
 *
 *   node bench/relay-memory.mjs [--rounds 4] [--callers 60] [--mib 4] [--relay-dir relay]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    callers: { type: 'string', default: '60' },
    mib: { type: 'string', default: '4' },
    'relay-dir': { type: 'string', default: 'relay' },
  },
});
const rounds = Number(values.rounds);
const callers = Number(values.callers);
const size = Number(values.mib) * 1024 * 1024 - 64;

const child = spawn(
  process.execPath,
  [join(resolve(values['relay-dir']), 'cli.js'), '--port', '0'],
  {
    env: {
      ...process.env,
      HEARTH_RELAY_CONFIG: join(mkdtempSync(join(tmpdir(), 'relay-bench-')), 'r.json'),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
let banner = '';
await new Promise((done) =>
  child.stdout.on('data', (part) => {
    banner += part;
    if (banner.includes('Press Ctrl+C')) done(undefined);
  }),
);
const key = /API key:\s+(\S+)/.exec(banner)?.[1];
const link = new URL(/(http:\/\/\S+\?\S*relay=\S+)/.exec(banner)?.[1] ?? '');
const origin = /Base URL:\s+(http:\/\/[^/]+)/.exec(banner)?.[1];
const wsUrl = `${link.searchParams.get('relay')}?code=${link.searchParams.get('pair')}`;

// The tab: answers each request once its body came (protocol 2: a binary message; protocol 1:
// base64 in the request itself).
const tab = new WebSocket(wsUrl, { origin: link.origin });
const answer = (/** @type {number} */ id) => {
  tab.send(JSON.stringify({ type: 'head', id, status: 200, headers: {} }));
  tab.send(JSON.stringify({ type: 'end', id }));
};
tab.on('message', (data, binary) => {
  if (binary) return answer(/** @type {Buffer} */ (data).readUInt32BE(0));
  const message = JSON.parse(String(data));
  if (message.type === 'hello')
    tab.send(JSON.stringify({ type: 'ready', version: message.version }));
  if (message.type === 'request' && typeof message.body !== 'number') answer(message.id);
});
await new Promise((done) => setTimeout(done, 300));

const body = Buffer.from(JSON.stringify({ model: 'x', messages: [], pad: 'a'.repeat(size) }));
const upload = () =>
  new Promise((/** @type {(status: number) => void} */ done) => {
    const req = request(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('error', () => done(0));
    req.end(body);
  });
/** @type {number[]} */
const statuses = [];
for (let round = 0; round < rounds; round += 1) {
  statuses.push(...(await Promise.all(Array.from({ length: callers }, upload))));
}
const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
const peak = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
const count = (/** @type {number} */ code) => statuses.filter((s) => s === code).length;
console.log(
  `${values['relay-dir']}: peak RSS ${peak.toFixed(0)} MiB; ${count(200)} answered 200, ${count(429)} 429, ${statuses.length - count(200) - count(429)} other`,
);
tab.terminate();
child.kill();
