// Renders public/favicon.svg into the PNG icons the web app manifest lists (Chromium wants
// 192 and 512 px PNGs to offer installation), with the system's Chromium. Run it after changing
// the SVG: `node scripts/make-icons.mjs`. The PNGs are committed.
import { readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { browserHelp, CHROMIUM_ARGS, findChromium } from './browsers.mjs';

const executablePath = await findChromium();
if (!executablePath) throw new Error(browserHelp('chromium'));
const svg = readFileSync(new URL('../public/favicon.svg', import.meta.url), 'utf8');
const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
const page = await browser.newPage();

/**
 * `padding`: the share of each side left empty (maskable icons keep their art in a safe zone).
 * @param {number} size
 * @param {string} file
 */
async function render(size, file, padding = 0, background = 'transparent') {
  await page.setViewportSize({ width: size, height: size });
  const inner = Math.round(size * (1 - 2 * padding));
  await page.setContent(
    `<style>html,body{margin:0;background:${background}}div{width:${size}px;height:${size}px;display:grid;place-items:center}svg{width:${inner}px;height:${inner}px}</style><div>${svg}</div>`,
  );
  await page.screenshot({
    path: new URL(`../public/icons/${file}`, import.meta.url).pathname,
    omitBackground: background === 'transparent',
  });
}

await render(192, 'icon-192.png');
await render(512, 'icon-512.png');
await render(512, 'maskable-512.png', 0.1, '#7a2e0e');
await browser.close();
console.log('public/icons: icon-192.png, icon-512.png, maskable-512.png');
