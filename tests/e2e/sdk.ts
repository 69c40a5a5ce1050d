import { expect, type Page } from '@playwright/test';
import type OpenAIClass from 'openai';

/** Where global-setup writes the browser bundle of the `openai` SDK. */
export const OPENAI_BUNDLE = new URL('./.cache/openai/openai.js', import.meta.url);

declare global {
  /** The `openai` SDK's client class, injected by `openApp`. */
  var OpenAI: typeof OpenAIClass;
}

/** Opens the app, waits until its API answers, and loads the `openai` SDK into the page. */
export async function openApp(page: Page, path = './'): Promise<void> {
  await page.goto(path);
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  await page.addScriptTag({ path: OPENAI_BUNDLE.pathname });
}

/** `GET /v1/hearth/status` from a page of the app. */
export function hostStatus(page: Page) {
  return page.evaluate(async () => {
    const response = await fetch('v1/hearth/status', { headers: { authorization: 'Bearer k' } });
    return (await response.json()) as {
      host: { id: string; build: string };
      models: string[];
      loaded_model: string | null;
      queue: { running: number; waiting: number };
      open_ports: number;
    };
  });
}
