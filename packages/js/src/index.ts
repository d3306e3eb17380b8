/** @latchkey/js: the browser library (docs/design.md §10); `@latchkey/js/client` is headless.ts. See README.md. */
// Everything of the headless entry, but `Latchkey` with `mount` (a named export wins over `export *`).
export * from './headless.js';
export { Latchkey } from './mount.js';
export type { LatchkeyClient, MountOptions } from './types.js';
