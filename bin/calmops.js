#!/usr/bin/env node
// The installed `calmops` command. It runs from a bundle of the command line (build/cli-bundle.mjs), made by the
// package's prepare script and made again here when a source has changed since; with no esbuild installed (a
// production install) the bundle there is is used as it is. The bundle's files are compiled with their code cache
// (build/compiled-script.mjs).

import { existsSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import v8 from 'node:v8';
import { describeBuildError } from '../build/bundle.mjs';
import { cliEntry, cliLocation, commandFile } from '../build/cli-bundle.mjs';
import { requireCompiled } from '../build/compiled-script.mjs';

// A command runs for a second or two, and V8 would spend a good part of that optimising functions that run warm but
// briefly, on threads of their own beside the command: a run of `calmops triage` on thousands of objects costs a fifth
// less CPU when V8 waits eight times as long as by default before optimising a function, while the truly hot ones (the
// YAML parser's loops) are still optimised early in it.
// Nor does the young generation grow past the size it starts at (a megabyte per semi-space, rather than up to
// sixteen): on a machine whose memory is dear to touch the first time, the pages a bigger young generation would
// take cost more in page faults than its fewer collections save, and what a triage keeps (the objects it read) is
// promoted to the old generation all the same. A replay of thousands of objects takes a fifth fewer page faults,
// about 20 MiB less memory and a twentieth less CPU.
// Set before anything of the bundle is compiled, so the code caches beside it are always made and checked under the
// same flags.
v8.setFlagsFromString(`--interrupt-budget=${8 * 66 * 1024} --semi-space-growth-factor=1`);

// Node 22.1 and later can keep the compiled code of these ES modules on disk too.
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
  const { runCli } = requireCompiled(entry);
  await runCli(process.argv.slice(2), async (name) => {
    // Only names main.ts lists reach here; a command this build lacks is "not available", as in the sources.
    const file = commandFile(entry, name);
    return existsSync(file) ? requireCompiled(file) : undefined;
  });
} else if (process.exitCode === undefined) {
  process.stderr.write(
    `calmops: the command line is not built, and esbuild is not installed to build it: run \`npm install\` in ${cliLocation.root}\n`,
  );
  process.exitCode = 1;
}
