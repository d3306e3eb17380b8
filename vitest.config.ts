import { defineConfig } from 'vitest/config';
import { reactProjects } from './packages/react/test/projects.js';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for something to happen (a frame reloaded, a mail arrived): a busy
    // machine may need more than vitest's 1 s; a passing poll returns as soon as it holds.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
        },
      },
      ...reactProjects,
    ],
  },
});
