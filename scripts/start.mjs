// `npm start`: build the app and serve it on 127.0.0.1 (PORT, default 4173), then say where.
import { build, preview } from 'vite';

await build({ logLevel: 'warn' });
const server = await preview({ logLevel: 'warn' });
const address = server.resolvedUrls?.local[0];
if (!address) throw new Error('vite preview did not report an address');
const app = new URL(address);
const sdk = new URL('v1/openai', app);
console.log(`
Hearth is running.
  App:           ${app.href}
  SDK base URL:  ${sdk.href}   (any non-empty API key)

Open the app in a tab: the tab runs the engine that answers the API.
For curl, scripts and AI gateways outside the browser: npm run relay -- --app ${app.href}
Press Ctrl+C to stop.`);
