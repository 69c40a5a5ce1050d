import { defineConfig } from 'vitest/config';

// Its own file, so that unit tests do not load vite.config.ts and its service-worker build.
export default defineConfig({
  test: {
    include: ['tests/unit/**/*.test.ts'],
    environment: 'node',
  },
});
