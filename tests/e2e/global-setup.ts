import { build } from 'vite';
import { OPENAI_BUNDLE } from './helpers';

/** Bundles the official `openai` SDK for the browser, as a page would ship it. */
export default async function globalSetup(): Promise<void> {
  await build({
    configFile: false,
    logLevel: 'warn',
    publicDir: false,
    build: {
      outDir: new URL('.', OPENAI_BUNDLE).pathname,
      emptyOutDir: true,
      minify: false,
      lib: {
        entry: new URL('./fixtures/openai-global.ts', import.meta.url).pathname,
        formats: ['iife'],
        name: 'OpenAIBundle',
        fileName: () => 'openai.js',
      },
    },
  });
}
