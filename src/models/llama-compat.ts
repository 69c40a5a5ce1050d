/**
 * @module
 * Which of llama.cpp's two WebAssembly builds a browser runs. wllama's default build needs JSPI
 * (`WebAssembly.Suspending`) and 64-bit memory; where either is missing (Safari, Firefox before
 * JSPI, Firefox with it turned off) its compatibility build (`@wllama/wllama-compat`, Asyncify,
 * 32-bit memory, slower) runs instead. Hearth serves that build itself, so that it works offline:
 * at `LLAMA_COMPAT_DIR` in the app, outside the precache (18.7 MB that most browsers never need);
 * the service worker caches it when it installs on a browser that does need it.
 */

/** The compatibility build's files under the app's base URL, versioned as the package is. */
export const LLAMA_COMPAT_DIR = 'wllama-compat/3.13.0/';
export const LLAMA_COMPAT_FILES = ['wllama.wasm', 'wllama.js'] as const;

/** What the choice depends on: this realm's WebAssembly, or a stand-in for a test. */
export interface WasmFeatures {
  Suspending?: unknown;
  /** With `address: 'i64'`, which TypeScript's WebAssembly types do not know yet. */
  Memory: new (descriptor: { address: 'i64'; initial: bigint }) => unknown;
}

/** Whether this browser needs the compatibility build: no JSPI, or no 64-bit memory. */
export function llamaNeedsCompat(
  wasm: WasmFeatures = WebAssembly as unknown as WasmFeatures,
): boolean {
  if (typeof wasm.Suspending !== 'function') return true;
  try {
    new wasm.Memory({ address: 'i64', initial: 1n });
    return false;
  } catch {
    return true;
  }
}

/** The compatibility build's URLs under the app's base URL. */
export function llamaCompatUrls(appUrl: string): { wasm: string; worker: string } {
  const dir = new URL(LLAMA_COMPAT_DIR, appUrl);
  return { wasm: new URL('wllama.wasm', dir).href, worker: new URL('wllama.js', dir).href };
}
