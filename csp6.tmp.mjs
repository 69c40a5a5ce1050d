import { chromium } from '@playwright/test';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const p = await b.newPage();
p.on('console', m => console.log('console:', m.text()));
await p.setContent(`<meta http-equiv="Content-Security-Policy" content="connect-src 'self' ws://[::1]:*">`);
const r = await p.evaluate(() => new Promise(res => {
  const seen = [];
  document.addEventListener('securitypolicyviolation', e => seen.push(e.blockedURI));
  try { const s = new WebSocket('ws://[::1]:9/relay'); s.onclose = () => setTimeout(() => res({seen, closed: true}), 100); }
  catch (e) { res({ seen, error: String(e) }); }
}));
console.log(JSON.stringify(r));
await b.close();
