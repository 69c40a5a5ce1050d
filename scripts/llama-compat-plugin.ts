/**
 * @module
 * Puts llama.cpp's compatibility build (`@wllama/wllama-compat`: for browsers without JSPI or
 * 64-bit WebAssembly memory) into the app at `LLAMA_COMPAT_DIR`, so that it is served by the app
 * itself, never a CDN (src/models/llama-compat.ts). The files are copied as they are: the
 * worker fetches them by URL.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'vite';
import { LLAMA_COMPAT_DIR, LLAMA_COMPAT_FILES } from '../src/models/llama-compat.ts';

const TYPES: Record<string, string> = { wasm: 'application/wasm', js: 'text/javascript' };

/** The package's `wasm/` folder. */
function compatFolder(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@wllama/wllama-compat/package.json')), 'wasm');
}

export function llamaCompat(): Plugin {
  return {
    name: 'hearth-llama-compat',
    // `vite` (dev): served from node_modules as they are.
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        const file = LLAMA_COMPAT_FILES.find(
          (name) => path === `${server.config.base}${LLAMA_COMPAT_DIR}${name}`,
        );
        if (!file) return next();
        res.setHeader(
          'content-type',
          TYPES[file.split('.').pop() ?? ''] ?? 'application/octet-stream',
        );
        res.end(readFileSync(join(compatFolder(), file)));
      });
    },
    // `vite build`: copied into the output.
    generateBundle() {
      for (const name of LLAMA_COMPAT_FILES) {
        this.emitFile({
          type: 'asset',
          fileName: `${LLAMA_COMPAT_DIR}${name}`,
          source: readFileSync(join(compatFolder(), name)),
        });
      }
    },
  };
}
