/**
 * @module
 * The page's Content Security Policy, as a `<meta>` tag added at build time: scripts, styles and
 * workers from the app itself; images only from itself, `data:` and `blob:`; connections only to
 * itself, the hosts models come from and a relay on this machine. Nothing a model writes can make
 * the page send a conversation anywhere (markdown.ts sanitizes too; this is the second line).
 *
 * The policy is the page's alone. The engines run in the engine worker, a dedicated worker whose
 * policy comes from its own script's response (which carries none), not from this `<meta>`: so
 * WebLLM's and llama.cpp's WebAssembly (`'wasm-unsafe-eval'`), wllama's `blob:` workers and the
 * downloads of models from any URL a user adds are not this policy's business, and the page needs
 * none of them (notes/wllama-3.13.md). The service worker, which checks an added model's first
 * bytes, has no policy either.
 */
import type { Plugin } from 'vite';
import { buildCatalog } from './catalog-plugin.ts';
import { ggufModelFiles } from '../src/models/catalog.ts';

/** Where WebLLM's prebuilt models and libraries come from, redirects included. */
const MODEL_HOSTS = [
  'https://huggingface.co',
  'https://*.huggingface.co',
  'https://*.hf.co',
  'https://raw.githubusercontent.com',
];

/**
 * The relay on this machine (relay/): the pairing accepts only loopback addresses, on any port.
 * (Chromium takes no IPv6 literal such as `[::1]` in a policy: the pairing refuses it too.)
 */
const RELAY_HOSTS = [
  'ws://127.0.0.1:*',
  'ws://localhost:*',
  'wss://127.0.0.1:*',
  'wss://localhost:*',
];

/** The origins of every absolute URL the catalogue names (self-hosted models included). */
export function catalogOrigins(urls: readonly string[]): string[] {
  const origins = new Set<string>();
  for (const url of urls) {
    try {
      const { origin, protocol } = new URL(url);
      if (protocol === 'https:' || protocol === 'http:') origins.add(origin);
    } catch {
      // Relative: the app's own origin, which 'self' covers.
    }
  }
  return [...origins];
}

/** Whether one of the model hosts (wildcards included) already covers `origin`. */
function coveredByModelHosts(origin: string): boolean {
  const { protocol, hostname } = new URL(origin);
  return MODEL_HOSTS.some((host) => {
    const pattern = new URL(host.replace('*.', 'wildcard.'));
    if (pattern.protocol !== protocol) return false;
    return host.includes('*.')
      ? hostname.endsWith(pattern.hostname.slice('wildcard'.length))
      : hostname === pattern.hostname;
  });
}

/** The policy, with the model hosts given. */
export function contentSecurityPolicy(modelHosts: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self' ${[...modelHosts, ...RELAY_HOSTS].join(' ')}`,
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "frame-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join('; ');
}

/** Adds the policy to the built `index.html`. */
export function hearthCsp(selfHostedFile: string): Plugin {
  return {
    name: 'hearth-csp',
    apply: 'build',
    async transformIndexHtml(_html, context) {
      // The app's page only: the bench pages beside it are tools, not the product.
      if (context.path !== '/index.html') return undefined;
      const catalog = await buildCatalog(selfHostedFile);
      const urls = catalog.flatMap((e) =>
        e.engine === 'webllm' ? [e.model_url, e.model_lib] : ggufModelFiles(e),
      );
      const extra = catalogOrigins(urls).filter((origin) => !coveredByModelHosts(origin));
      const hosts = [...MODEL_HOSTS, ...extra];
      return [
        {
          tag: 'meta',
          attrs: {
            'http-equiv': 'Content-Security-Policy',
            content: contentSecurityPolicy([...hosts]),
          },
          injectTo: 'head-prepend',
        },
      ];
    },
  };
}
