// Writes a NEW folder of frozen snapshot fixtures (see test/fixtures/snapshots/v1-2026-12-02/README.md):
//   npx vite-node test/support/write-snapshot-fixtures.ts test/fixtures/snapshots/v<N>-<yyyy-mm-dd>
// It refuses a folder that exists: old fixtures are never edited or regenerated.
import { existsSync } from 'node:fs';
import { generateSnapshotFixtures } from './snapshot-fixture-generator.js';

/** Generate the fixtures into `outDir`, which must not exist yet; returns the files written. */
export async function writeSnapshotFixtures(outDir: string | undefined): Promise<string[]> {
  if (!outDir) throw new Error('usage: vite-node test/support/write-snapshot-fixtures.ts <new fixture folder>');
  if (existsSync(outDir)) throw new Error(`${outDir} exists: frozen fixtures are never regenerated; name a new folder`);
  return generateSnapshotFixtures(outDir);
}

writeSnapshotFixtures(process.argv[2]).then(
  (files) => {
    process.stdout.write(`${files.join('\n')}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(
      `write-snapshot-fixtures failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
