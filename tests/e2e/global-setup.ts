import { existsSync, statSync } from 'node:fs';
import { build } from 'vite';
import { OPENAI_BUNDLE, SDKS_BUNDLE } from './helpers';
import { makeSites } from './sites/make.mjs';

/** Bundles `entry` for the browser as one script that sets a global, as a page would ship it. */
async function bundle(entry: URL, out: URL, name: string): Promise<void> {
  await build({
    configFile: false,
    logLevel: 'warn',
    publicDir: false,
    build: {
      outDir: new URL('.', out).pathname,
      emptyOutDir: true,
      minify: false,
      lib: {
        entry: entry.pathname,
        formats: ['iife'],
        name,
        fileName: () => out.pathname.split('/').at(-1)!,
      },
    },
  });
}

/** Whether `out` exists and is newer than every file in `inputs`. */
function fresh(out: URL, inputs: URL[]): boolean {
  if (!existsSync(out)) return false;
  const built = statSync(out).mtimeMs;
  return inputs.every((input) => statSync(input).mtimeMs < built);
}

/**
 * Bundles the official `openai` SDK for the browser, and the Vercel AI SDK with LangChain's
 * OpenAI embeddings (sdk-embeddings.spec.ts). Each is bundled again only when its entry or the
 * installed packages (package-lock.json) change: `npm test`'s lanes start several runs.
 */
export default async function globalSetup(): Promise<void> {
  const lock = new URL('../../package-lock.json', import.meta.url);
  const openaiEntry = new URL('./fixtures/openai-global.ts', import.meta.url);
  if (!fresh(OPENAI_BUNDLE, [openaiEntry, lock])) {
    await bundle(openaiEntry, OPENAI_BUNDLE, 'OpenAIBundle');
  }
  const sdksEntry = new URL('./fixtures/sdks-global.ts', import.meta.url);
  if (!fresh(SDKS_BUNDLE, [sdksEntry, lock])) await bundle(sdksEntry, SDKS_BUNDLE, 'SdksBundle');
  // The sites that install the packed `hearth-llm` (site.spec.ts); they need the SDK's bundle.
  makeSites();
}
