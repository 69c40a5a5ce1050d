/**
 * @module
 * The chat app's install, set before any other module of the page runs: the app's elements open
 * the install's channels and database as soon as they are defined (src/protocol/install.ts).
 */
import { setInstall } from './protocol/install';

setInstall(new URL(import.meta.env.BASE_URL, location.href));
