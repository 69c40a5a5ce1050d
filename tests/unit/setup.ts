/**
 * @module
 * Run before each unit test file (`setupFiles` in vitest.config.ts). The files of a worker thread
 * share its modules (`isolate: false`), so a hook that a helper registers when it is imported
 * belongs to the first file that imports it, and no other: the hooks every file needs are here.
 */
import { afterEach } from 'vitest';
import { runCleanups } from './cleanups';

afterEach(runCleanups);
