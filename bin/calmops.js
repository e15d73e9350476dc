#!/usr/bin/env node
// The installed `calmops` command. It runs from a bundle of the command line (local/cli-bundle.mjs), made by the
// package's prepare script and made again here when a source has changed since; with no esbuild installed (a
// production install) the bundle there is is used as it is.
import module from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describeBuildError } from '../local/bundle.mjs';
import { cliEntry, cliLocation } from '../local/cli-bundle.mjs';

// Node 22.1 and later can keep the compiled code of the bundle on disk, which spares most of the compile time of every
// later run; older versions have no such cache and run as they are.
module.enableCompileCache?.(join(cliLocation.cacheDir, 'compiled'));

let entry;
try {
  entry = await cliEntry({
    onBuild: () => {
      // Only a person at a terminal is told; stdout and stderr stay the command's own.
      if (process.stderr.isTTY) process.stderr.write('calmops: preparing the command line (once after a change)…\n');
    },
  });
} catch (error) {
  process.stderr.write(`calmops: bundling the command line failed:\n${describeBuildError(error)}\n`);
  process.exitCode = 1;
}
if (entry !== undefined) {
  const { runCli } = await import(pathToFileURL(entry).href);
  await runCli(process.argv.slice(2));
} else if (process.exitCode === undefined) {
  process.stderr.write(
    `calmops: the command line is not built, and esbuild is not installed to build it: run \`npm install\` in ${cliLocation.root}\n`,
  );
  process.exitCode = 1;
}
