import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  LLAMA_COMPAT_DIR,
  llamaCompatUrls,
  llamaNeedsCompat,
  type WasmFeatures,
} from '../../../src/models/llama-compat';

const version = (pkg: string) =>
  (
    JSON.parse(
      readFileSync(new URL(`../../../node_modules/${pkg}/package.json`, import.meta.url), 'utf8'),
    ) as { version: string }
  ).version;

/** A WebAssembly with or without JSPI and 64-bit memory. */
function wasm({ jspi, memory64 }: { jspi: boolean; memory64: boolean }): WasmFeatures {
  return {
    ...(jspi && { Suspending: function Suspending() {} }),
    Memory: class {
      constructor(descriptor: { address?: string }) {
        if (descriptor.address === 'i64' && !memory64) throw new TypeError('no memory64');
      }
    },
  };
}

describe('llamaNeedsCompat', () => {
  it('chooses the default build only with both JSPI and 64-bit memory', () => {
    expect(llamaNeedsCompat(wasm({ jspi: true, memory64: true }))).toBe(false);
    expect(llamaNeedsCompat(wasm({ jspi: false, memory64: true }))).toBe(true);
    expect(llamaNeedsCompat(wasm({ jspi: true, memory64: false }))).toBe(true);
    expect(llamaNeedsCompat(wasm({ jspi: false, memory64: false }))).toBe(true);
  });

  it('names the compatibility build of the version installed, the same as wllama’s', () => {
    expect(version('@wllama/wllama-compat')).toBe(version('@wllama/wllama'));
    expect(LLAMA_COMPAT_DIR).toBe(`wllama-compat/${version('@wllama/wllama-compat')}/`);
  });

  it('resolves the build’s files under the app’s base URL, a sub-path too', () => {
    expect(llamaCompatUrls('https://example.org/hearth/')).toEqual({
      wasm: `https://example.org/hearth/${LLAMA_COMPAT_DIR}wllama.wasm`,
      worker: `https://example.org/hearth/${LLAMA_COMPAT_DIR}wllama.js`,
    });
  });
});
