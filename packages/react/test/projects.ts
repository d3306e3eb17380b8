/**
 * The React suites, once per React version (17, 18, 19), in happy-dom against the real server.
 * The root vitest.config.ts adds these projects.
 */
import { fileURLToPath } from 'node:url';
import type { TestProjectInlineConfiguration } from 'vitest/config';
import { aliasesFor } from './versions.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

function project(version: string): TestProjectInlineConfiguration {
  return {
    extends: true,
    resolve: {
      alias: Object.entries(aliasesFor(version)).map(([name, to]) => ({
        find: new RegExp(`^${name.replace('/', '\\/')}(\\/.*)?$`),
        replacement: `${to}$1`,
      })),
    },
    test: {
      name: `react-${version}`,
      include: ['packages/react/test/**/*.test.tsx'],
      environment: 'happy-dom',
      env: { LATCHKEY_TEST_REACT: version },
      setupFiles: [here('react-version.ts')],
      globalSetup: [here('global-setup.ts')],
    },
  };
}

export const reactProjects = ['17', '18', '19'].map(project);
