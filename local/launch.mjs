// @ts-check
// `npm start`, and with `--prepare` the package's prepare script (run by `npm install`), which also builds the
// `calmops` command's bundle. See build/bundle.mjs for why both run from a bundle.

import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliEntry } from '../build/cli-bundle.mjs';
import { buildBundle, bundleFile, bundleIsFresh, describeBuildError } from './start-bundle.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const at = { root, cacheDir: join(root, 'node_modules', '.cache', 'calmops') };

// Preparing never fails the install: whatever went wrong is reported again, in full, by the `npm start` (or the
// `calmops` command) that retries it.
const preparing = process.argv.includes('--prepare');
if (preparing) {
  try {
    await cliEntry();
  } catch (error) {
    process.stderr.write(
      `calmops: bundling the command line failed (calmops will retry):\n${describeBuildError(error)}\n`,
    );
  }
}
try {
  if (!(await bundleIsFresh(at))) {
    if (!preparing) process.stdout.write('Preparing calmops (once after install or a change)…\n');
    await buildBundle(at);
  }
} catch (error) {
  process.stderr.write(`calmops: bundling local/start.ts failed:\n${describeBuildError(error)}\n`);
  process.exit(preparing ? 0 : 1);
}
if (preparing) {
  try {
    const started = await import(pathToFileURL(bundleFile(at)).href);
    await started.prepareStart();
  } catch (error) {
    process.stderr.write(
      `calmops: preparing the local stack failed (npm start will retry):\n${describeBuildError(error)}\n`,
    );
  }
} else {
  const started = await import(pathToFileURL(bundleFile(at)).href);
  await started.main();
}
