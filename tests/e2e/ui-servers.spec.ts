/**
 * Settings → Servers in the chat app, as a person uses it: adding an OpenAI-compatible server by
 * its base URL (its models listed, all ticked), unticking one (it leaves the picker), chatting
 * with the other (marked, in the picker and above the messages, as leaving this device for the
 * server's host), the API's errors under the form, the Models view's card, and removing it.
 * The server is a tiny one of the test's own, with CORS for the app's origin.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import { chromiumOnly } from './helpers';
import { composer, openChat, replies, send } from './ui';

/** What the fake server was asked, for the assertions. */
const asked: { method: string; url: string; authorization: string | undefined; body: string }[] =
  [];
let upstream: Server;
let base: string;
let host: string;

const SSE = [
  { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
];

test.beforeAll(async () => {
  upstream = createServer((request, response) => {
    const cors = {
      'access-control-allow-origin': request.headers.origin ?? '*',
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      vary: 'origin',
    };
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.method === 'OPTIONS') {
        response.writeHead(204, cors).end();
        return;
      }
      asked.push({
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        body,
      });
      if (request.method === 'GET' && request.url === '/v1/models') {
        response
          .writeHead(200, { ...cors, 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'list', data: [{ id: 'm1' }, { id: 'org/m2' }] }));
      } else if (request.method === 'POST' && request.url === '/v1/chat/completions') {
        response.writeHead(200, { ...cors, 'content-type': 'text/event-stream' });
        for (const event of SSE) response.write(`data: ${JSON.stringify(event)}\n\n`);
        response.end('data: [DONE]\n\n');
      } else {
        response
          .writeHead(404, { ...cors, 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no route ${request.url}` } }));
      }
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as AddressInfo;
  host = `127.0.0.1:${port}`;
  base = `http://${host}/v1`;
});

test.afterAll(async () => {
  await new Promise((resolve) => upstream.close(resolve));
});

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function openServers(page: Page) {
  await page.getByRole('link', { name: 'Settings' }).click();
  await page
    .getByRole('navigation', { name: 'Settings sections' })
    .getByRole('link', { name: 'Servers' })
    .click();
  const section = page.getByRole('region', { name: 'Servers' });
  await expect(section).toBeVisible();
  return section;
}

/** Adds a server with the form, as a person does. */
async function addServer(page: Page, fields: { name?: string; url: string; key?: string }) {
  const section = await openServers(page);
  if (fields.name !== undefined) await section.getByLabel('Name').fill(fields.name);
  await section.getByLabel('Base URL').fill(fields.url);
  if (fields.key !== undefined) await section.getByLabel('Key (optional)').fill(fields.key);
  await section.getByRole('button', { name: 'Add' }).click();
  return section;
}

const picker = (page: Page) => page.getByLabel('Model', { exact: true });

test('a server added in Settings: its models ticked, one unticked, the other chats, marked as leaving the device; then removed', async ({
  page,
}) => {
  await openChat(page);
  // Nothing leaves this device before a server is added.
  await expect(page.getByText('Nothing leaves this device.')).toBeVisible();

  const section = await openServers(page);
  await expect(section).toContainText('No server added');
  await expect(section.getByLabel('Base URL')).toHaveAttribute(
    'placeholder',
    'http://gpu-box:8000/v1',
  );
  await expect(section.getByLabel('Key (optional)')).toHaveAttribute('type', 'password');
  await addServer(page, { name: 'gpu-box', url: base, key: 'sk-secret-1234' });

  // Listed with its host and the key's hint only; the focus on its heading.
  const heading = section.getByRole('heading', { name: 'gpu-box' });
  await expect(heading).toBeFocused();
  const card = section.getByRole('listitem', { name: 'gpu-box' });
  await expect(card).toContainText(`leaves this device · ${host}`);
  await expect(card).toContainText(`Messages to its models leave this device: they go to ${host}.`);
  await expect(card).toContainText('ends in …1234');
  await expect(card).not.toContainText('sk-secret');
  await expect(section.getByRole('status')).toContainText('Added gpu-box: 2 models found');
  const models = card.getByRole('group', { name: 'Models offered from gpu-box' });
  await expect(models.getByRole('checkbox', { name: 'm1' })).toBeChecked();
  await expect(models.getByRole('checkbox', { name: 'org/m2' })).toBeChecked();
  // The key went to the server, with the request for its models.
  expect(asked.find((a) => a.url === '/v1/models')?.authorization).toBe('Bearer sk-secret-1234');

  // The key's field is empty again: the key is not kept in the page.
  await expect(section.getByLabel('Key (optional)')).toHaveValue('');

  // Both in the picker, marked; one unticked leaves it.
  await page.getByRole('link', { name: 'Chat' }).click();
  await expect(picker(page).getByRole('option')).toContainText([
    `gpu-box/m1 — leaves this device (${host})`,
    `gpu-box/org/m2 — leaves this device (${host})`,
  ]);
  // A new conversation does not start on a server's model by itself.
  await expect(picker(page)).toHaveValue('hearth/echo');

  await openServers(page);
  await models.getByRole('checkbox', { name: 'm1' }).uncheck();
  await expect(section.getByRole('status')).toContainText('gpu-box/m1 is no longer offered.');
  await expect(models.getByRole('checkbox', { name: 'm1' })).not.toBeChecked();
  await page.getByRole('link', { name: 'Chat' }).click();
  await expect(picker(page).getByRole('option', { name: /gpu-box\/org\/m2/ })).toHaveCount(1);
  await expect(picker(page).getByRole('option', { name: /gpu-box\/m1/ })).toHaveCount(0);

  // Chosen: the option and a notice say where messages go.
  await picker(page).selectOption({ label: `gpu-box/org/m2 — leaves this device (${host})` });
  await expect(page.getByRole('note')).toContainText(
    `Messages in this conversation go to ${host}.`,
  );
  await expect(page.getByText('Nothing leaves this device.')).toHaveCount(0);
  await send(page, 'Hi there');
  await expect(replies(page)).toHaveText(['Hello']);
  const chat = asked.find((a) => a.url === '/v1/chat/completions');
  expect(JSON.parse(chat!.body)).toMatchObject({
    model: 'org/m2',
    messages: [{ role: 'user', content: 'Hi there' }],
  });
  expect(chat!.authorization).toBe('Bearer sk-secret-1234');

  // Chosen in Preferences (marked there too), a server's model is where new conversations start.
  await page.getByRole('link', { name: 'Settings' }).click();
  const preferred = page.getByLabel('Default model for new conversations');
  await expect(preferred.getByRole('option')).toContainText([
    'Automatic',
    'hearth/echo',
    `gpu-box/org/m2 — leaves this device (${host})`,
  ]);
  await preferred.selectOption({ label: `gpu-box/org/m2 — leaves this device (${host})` });
  await page.getByRole('link', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(picker(page)).toHaveValue('gpu-box/org/m2');

  // The Models view: marked, and nothing to download, load or delete.
  await page.getByRole('link', { name: 'Models' }).click();
  const modelCard = page.getByRole('listitem', { name: 'gpu-box/org/m2' });
  await expect(modelCard).toContainText(`leaves this device · ${host}`);
  await expect(modelCard.getByRole('button')).toHaveCount(0);
  await expect(page.getByRole('listitem', { name: 'gpu-box/m1' })).toHaveCount(0);

  // Removed, after a yes: gone from the picker; the focus back on the form.
  await openServers(page);
  await card.getByRole('button', { name: 'Remove gpu-box' }).click();
  const confirm = card.getByRole('group', { name: 'Confirm removal of gpu-box' });
  await expect(confirm.getByRole('button', { name: 'Yes, remove' })).toBeFocused();
  await confirm.getByRole('button', { name: 'Yes, remove' }).click();
  await expect(section.getByRole('status')).toContainText('Removed gpu-box');
  await expect(section.getByRole('listitem')).toHaveCount(0);
  await expect(section.getByLabel('Name')).toBeFocused();
  await page.getByRole('link', { name: 'Chat' }).click();
  await expect(composer(page)).toBeVisible();
  await expect(picker(page).getByRole('option', { name: /leaves this device/ })).toHaveCount(0);
});

test("the API's errors show under the form: a bad URL, a server down, one refusing CORS, a name taken", async ({
  page,
}) => {
  await openChat(page);
  const section = await addServer(page, { name: 'box', url: 'gpu-box port 8000' });
  const alert = section.getByRole('alert');
  await expect(alert).toContainText("Invalid value for 'base_url'");
  await expect(alert).toContainText('e.g. http://gpu-box:8000/v1');
  await expect(section.getByLabel('Base URL')).toBeFocused();
  await expect(section.getByLabel('Base URL')).toHaveAttribute('aria-invalid', 'true');
  // No name typed and no http://: the error is about the address, not the name.
  await section.getByLabel('Name').fill('');
  await section.getByLabel('Base URL').fill('gpu-box:8000/v1');
  await section.getByRole('button', { name: 'Add' }).click();
  await expect(alert).toContainText('has no http:// or https:// in front');
  await section.getByLabel('Name').fill('box');

  const port = await deadPort();
  await section.getByLabel('Base URL').fill(`http://127.0.0.1:${port}/v1`);
  await section.getByRole('button', { name: 'Add' }).click();
  await expect(alert).toContainText(
    `The server at 127.0.0.1:${port} could not be reached: is it running, and is the address right?`,
  );
  await expect(section).toContainText('No server added');

  // Up, but without CORS for this app: the message says so, and what to do.
  const closed = createServer((_, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
  });
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedHost = `127.0.0.1:${(closed.address() as AddressInfo).port}`;
  try {
    await section.getByLabel('Base URL').fill(`http://${closedHost}/v1`);
    await section.getByRole('button', { name: 'Add' }).click();
    await expect(alert).toContainText(
      `The server at ${closedHost} answered but does not let ${new URL(page.url()).origin} read its replies (CORS).`,
    );
    await expect(alert).toContainText('OLLAMA_ORIGINS');
  } finally {
    await new Promise((resolve) => closed.close(resolve));
  }

  await section.getByLabel('Name').fill('Hearth');
  await section.getByLabel('Base URL').fill(base);
  await section.getByRole('button', { name: 'Add' }).click();
  await expect(alert).toContainText("Invalid value for 'name'");
  await expect(section.getByLabel('Name')).toBeFocused();

  // Without a name, the host's becomes it.
  await section.getByLabel('Name').fill('');
  await section.getByRole('button', { name: 'Add' }).click();
  await expect(section.getByRole('heading', { name: '127-0-0-1' })).toBeFocused();
  await expect(alert).toHaveCount(0);
  await section.getByLabel('Base URL').fill(base);
  await section.getByLabel('Name').fill('127-0-0-1');
  await section.getByRole('button', { name: 'Add' }).click();
  await expect(alert).toContainText("The name '127-0-0-1' is taken by another server");

  // Clean up for the next test in this browser profile (each test has its own context anyway).
  await section.getByRole('button', { name: 'Remove 127-0-0-1' }).click();
  await section.getByRole('button', { name: 'Yes, remove' }).click();
  await expect(section.getByRole('listitem')).toHaveCount(0);
});

test('a server added in one tab shows in the other tab’s picker, and leaves it when removed', async ({
  page,
  context,
}) => {
  await openChat(page);
  const other = await context.newPage();
  await openChat(other);
  const option = other
    .getByRole('combobox', { name: 'Model', exact: true })
    .locator('option[value="tabs/m1"]');
  await expect(option).toHaveCount(0);
  const call = (method: string, path: string, body?: unknown) =>
    page.evaluate(
      async ({ method, path, body }) =>
        (
          await fetch(path, {
            method,
            headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
            ...(body !== undefined && { body: JSON.stringify(body) }),
          })
        ).status,
      { method, path, body },
    );
  expect(await call('POST', 'v1/hearth/servers', { name: 'tabs', base_url: base })).toBe(201);
  // The other tab is told (no reload), and reads the catalogue again.
  await expect(option).toHaveCount(1);
  expect(await call('DELETE', 'v1/hearth/servers/tabs')).toBe(200);
  await expect(option).toHaveCount(0);
});

test('a key kept for the session only: the form says what that means, IndexedDB never holds it, and it is gone with the worker until entered again', async ({
  page,
  browserName,
}) => {
  chromiumOnly(browserName, 'the service worker is stopped through the DevTools protocol');
  await openChat(page);
  const section = await openServers(page);
  // At the root of an origin of its own (127.0.0.1), no warning of a shared origin.
  await expect(section.getByRole('note')).toHaveCount(0);
  const session = section.getByRole('checkbox', { name: 'Keep the key for this session only' });
  await expect(session).not.toBeChecked();
  await expect(session).toHaveAccessibleDescription(/never stored.*gone then/);
  await section.getByLabel('Name').fill('session-box');
  await section.getByLabel('Base URL').fill(base);
  await section.getByLabel('Key (optional)').fill('sk-session-only-5678');
  await session.check();
  await section.getByRole('button', { name: 'Add' }).click();
  const card = section.getByRole('listitem', { name: 'session-box' });
  await expect(card).toContainText('ends in …5678, kept for this session only');
  expect(asked.findLast((a) => a.url === '/v1/models')?.authorization).toBe(
    'Bearer sk-session-only-5678',
  );
  // What the origin's scripts could read: the record, without the key.
  const stored = await page.evaluate(
    () =>
      new Promise<string>((resolve, reject) => {
        const open = indexedDB.open('hearth-servers');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const all = open.result.transaction('servers').objectStore('servers').getAll();
          all.onsuccess = () => resolve(JSON.stringify(all.result));
        };
      }),
  );
  expect(stored).toContain('"session-box"');
  expect(stored).not.toContain('sk-session-only');

  // The browser stops the service worker (as it does when Hearth is idle): the key goes with it.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await page.reload();
  const again = await openServers(page);
  const gone = again.getByRole('listitem', { name: 'session-box' });
  await expect(gone).toContainText('Kept for this session only, and gone');
  const form = gone.getByRole('form', { name: 'Key of session-box again' });
  await form.getByLabel('Key').fill('sk-session-only-5678');
  await form.getByRole('button', { name: 'Use this key' }).click();
  await expect(gone).toContainText('ends in …5678, kept for this session only');
  expect(asked.findLast((a) => a.url === '/v1/models')?.authorization).toBe(
    'Bearer sk-session-only-5678',
  );
  await gone.getByRole('button', { name: 'Remove session-box' }).click();
  await gone
    .getByRole('group', { name: 'Confirm removal of session-box' })
    .getByRole('button', { name: 'Yes, remove' })
    .click();
  await expect(gone).toHaveCount(0);
});
