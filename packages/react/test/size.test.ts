/**
 * The byte budget (issue 10): @latchkey/react adds at most 3 KB min+gzip to an app that already
 * has react and @latchkey/js. A failure names the files that take the bytes.
 */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const BUDGET = 3 * 1024;

describe('@latchkey/react bundle size', () => {
  it(`adds at most ${BUDGET} bytes min+gzip on top of react and @latchkey/js`, async () => {
    const result = await build({
      entryPoints: [new URL('../src/index.ts', import.meta.url).pathname],
      bundle: true,
      minify: true,
      format: 'esm',
      target: 'es2017',
      external: ['react', '@latchkey/js'],
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const bytes = gzipSync(result.outputFiles[0]?.contents ?? new Uint8Array(), {
      level: 9,
    }).length;
    const output = Object.values(result.metafile.outputs)[0];
    const byFile = Object.entries(output?.inputs ?? {})
      .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput)
      .map(
        ([file, { bytesInOutput }]) =>
          `${file.replace(/^.*packages\//, '')} ${bytesInOutput} B min`,
      )
      .join(', ');
    expect(
      bytes,
      `@latchkey/react grew to ${bytes} B min+gzip (budget ${BUDGET} B); by file: ${byFile}`,
    ).toBeLessThanOrEqual(BUDGET);
    console.info(`@latchkey/react: ${bytes} B min+gzip; ${byFile}`);
  });
});
