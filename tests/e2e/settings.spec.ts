/**
 * Changes to the settings from several tabs at once, through the real service worker and its
 * IndexedDB store: each change starts from what the one before it wrote.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import { KEY, openApp } from './helpers';

/** A request of the settings API from `page`. */
function call(page: Page, method: string, path: string, body?: unknown) {
  return page.evaluate(
    async ({ method, path, body, KEY }) => {
      const response = await fetch(`v1/hearth/${path}`, {
        method,
        headers: KEY,
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    { method, path, body, KEY },
  );
}

test('keys issued from two tabs at once are all kept, and deleting two at once removes both', async ({
  context,
}) => {
  const tabs = [await context.newPage(), await context.newPage()];
  for (const tab of tabs) await openApp(tab);
  const before = ((await call(tabs[0]!, 'GET', 'keys')).body.data as unknown[]).length;
  const issued = await Promise.all(
    [0, 1, 0, 1].map((i, n) => call(tabs[i]!, 'POST', 'keys', { name: `tab key ${n}` })),
  );
  expect(issued.map((r) => r.status)).toEqual([201, 201, 201, 201]);
  const listed = (await call(tabs[1]!, 'GET', 'keys')).body.data as { id: string }[];
  expect(listed).toHaveLength(before + 4);
  const [a, b] = issued.map((r) => r.body.id as string);
  const deleted = await Promise.all([
    call(tabs[0]!, 'DELETE', `keys/${a}`),
    call(tabs[1]!, 'DELETE', `keys/${b}`),
  ]);
  expect(deleted.map((r) => r.status)).toEqual([200, 200]);
  const left = ((await call(tabs[0]!, 'GET', 'keys')).body.data as { id: string }[]).map(
    (k) => k.id,
  );
  expect(left).toHaveLength(before + 2);
  expect(left).not.toContain(a);
  expect(left).not.toContain(b);
});
