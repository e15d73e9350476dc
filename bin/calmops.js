#!/usr/bin/env node
// The installed `calmops` command. It runs from a bundle of the command line (local/cli-bundle.mjs), made by the
// package's prepare script and made again here when a source has changed since; with no esbuild installed (a
// production install) the bundle there is is used as it is.
import { pathToFileURL } from 'node:url';
import { describeBuildError } from '../local/bundle.mjs';
import { cliEntry, cliLocation } from '../local/cli-bundle.mjs';

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
