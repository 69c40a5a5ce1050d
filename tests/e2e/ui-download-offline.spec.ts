/**
 * A download whose host cannot be reached (offline, on a plane, behind a firewall: here Hugging
 * Face's requests are aborted by a Playwright route). The Models view says so in words, by the
 * model's name; points to what works without the network (a GGUF from this computer, a server of
 * the user's, the models already downloaded); and offers nothing that cannot act: nothing was
 * stored, so there is nothing to resume or delete, only a retry. In Chromium the suggestion is a
 * WebLLM model, in Firefox (no WebGPU) a GGUF: both come from Hugging Face.
 */
import { expect } from '@playwright/test';
import { axe, violations } from './axe';
import { test } from './warm-context';
import { openChat } from './ui';

test("a download whose host cannot be reached says so by the model's name, points to what works offline, and offers only a retry", async ({
  page,
  context,
}) => {
  test.setTimeout(60_000);
  const asked: string[] = [];
  await context.route('https://huggingface.co/**', (route) => {
    asked.push(route.request().url());
    return route.abort('internetdisconnected');
  });
  await openChat(page);
  await page.getByRole('link', { name: 'Models' }).click();
  const device = page.getByRole('region', { name: 'What this device can run' });
  const name = (await device.locator('strong').innerText()).trim();
  await device.getByRole('button', { name: `Download ${name}` }).click();

  const words = `${name} could not be downloaded: the model host (huggingface.co) can't be reached — are you offline?`;
  await expect(device).toContainText(words, { timeout: 30_000 });
  expect(asked.length).toBeGreaterThan(0);
  // Not the browser's jargon, nor the model's id.
  await expect(device).not.toContainText('Failed to fetch');
  await expect(device).not.toContainText('NetworkError');
  await expect(device.getByText(words)).not.toContainText('/');
  // What works without the network, each one step away.
  await expect(device.getByRole('link', { name: 'a server of yours' })).toHaveAttribute(
    'href',
    '#/settings/servers',
  );
  await expect(device.getByRole('button', { name: 'Retry' })).toBeVisible();

  // Its card says it too; nothing of it was stored: no Resume, no Delete, a Retry.
  const card = page
    .getByRole('list', { name: 'Models' })
    .getByRole('listitem', { name, exact: true });
  await expect(card.getByRole('alert')).toHaveText(words);
  await expect(card.getByRole('button', { name: 'Resume download' })).toHaveCount(0);
  await expect(card.getByRole('button', { name: 'Delete' })).toHaveCount(0);
  await expect(card.getByRole('button', { name: 'Retry' })).toBeVisible();
  // What the failure changed passes axe: the device's summary and the model's card. (a11y.spec
  // audits the whole view; all of it here took most of this test's time, Models being long.)
  const results = await axe(page)
    .include({ fromShadowDom: ['hearth-app', 'model-manager', 'section.device'] })
    .include({ fromShadowDom: ['hearth-app', 'model-manager', `li.card[aria-label="${name}"]`] })
    .analyze();
  expect(violations(results)).toEqual([]);
  // It audited something: more than ten rules found what they check there, and it passed.
  expect(results.passes.length).toBeGreaterThan(10);

  // A retry asks the host again, and says the same when it still cannot be reached.
  const before = asked.length;
  await card.getByRole('button', { name: 'Retry' }).click();
  await expect(card.getByRole('alert')).toHaveText(words, { timeout: 30_000 });
  expect(asked.length).toBeGreaterThan(before);
  await expect(card.getByRole('button', { name: 'Resume download' })).toHaveCount(0);

  // A GGUF from this computer: the form that adds one opens, at its file chooser.
  await device.getByRole('button', { name: 'Add a GGUF file from this computer' }).click();
  await expect(page.getByRole('region', { name: 'Add a model' })).toBeVisible();
  await expect(page.getByLabel('Choose a .gguf file')).toBeFocused();
});
