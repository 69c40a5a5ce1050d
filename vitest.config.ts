import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Its own file, so that unit tests do not load vite.config.ts and its service-worker build.
export default defineConfig({
  test: {
    include: ['tests/unit/**/*.test.ts'],
    // Hooks every file needs (a helper's own would belong to the first file importing it).
    setupFiles: ['tests/unit/setup.ts'],
    environment: 'node',
    // Every core (vitest leaves one free by default: on two cores, one file at a time, which
    // doubled the unit tests' time in `npm test`).
    maxWorkers: availableParallelism(),
    // Worker threads, not child processes: the same tests in about a sixth less CPU time, which
    // the browser suites running beside them in `npm test` get back.
    pool: 'threads',
    // The files of a worker share its modules instead of importing them all again for each file:
    // about 100 CPU-seconds → 65, and importing 12.6 s → 5.3 s. The tests keep no state between
    // files (they pass with the files shuffled: `--sequence.shuffle.files`).
    isolate: false,
  },
});
