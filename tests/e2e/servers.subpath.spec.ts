/**
 * Settings → Servers of the app built for a sub-path (HEARTH_BASE=/hearth/), as on a GitHub Pages
 * project site: the origin's other paths hold other pages, which could read the keys the app
 * stores; the view says so.
 */
import { expect, test } from '@playwright/test';
import { openApp } from './helpers';

test('warns that the origin is shared when the app lives under a path', async ({ page }) => {
  await openApp(page);
  await page.getByRole('link', { name: 'Settings' }).click();
  await page
    .getByRole('navigation', { name: 'Settings sections' })
    .getByRole('link', { name: 'Servers' })
    .click();
  const note = page.getByRole('region', { name: 'Servers' }).getByRole('note');
  await expect(note).toContainText('This origin is shared');
  await expect(note).toContainText('/hearth/');
  await expect(note).toContainText('Keep keys for this session only');
});
