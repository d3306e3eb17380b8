/**
 * Runs a suite against React 17, 18 or 19 (LATCHKEY_TEST_REACT), installed side by side under
 * npm aliases (react-17, react-dom-17, …). Vite's aliases (vitest.config.ts) cover the code
 * Vite loads; this hook covers what Node loads itself: react-dom's and Testing Library's own
 * `require('react')`.
 */
import { registerHooks } from 'node:module';
import { aliasesFor } from './versions.js';

export const REACT_VERSION = process.env.LATCHKEY_TEST_REACT ?? '19';

const aliases = aliasesFor(REACT_VERSION);
const PATTERN = /^(react|react-dom|@testing-library\/react)(\/.*)?$/;

registerHooks({
  resolve(specifier, context, next) {
    const match = PATTERN.exec(specifier);
    const to = match && aliases[match[1] as string];
    return next(to ? to + (match[2] ?? '') : specifier, context);
  },
});
