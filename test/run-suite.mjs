// @ts-check
// `npm test` after its prerequisites check: the type check and the lint run beside the tests instead of before them,
// since the tests spend much of their time waiting on their local stacks and child processes. The checks run at a
// lower priority, so on a busy machine the tests (which have timeouts) get the cores first; their output is printed
// whole after the tests', never interleaved with it. Arguments are passed to `vitest run`.
//
// Everything the run writes to the temporary directory (the tests' folders, synthesized stacks, the browser's profile,
// what a process killed on purpose leaves) goes to one folder of its own, removed when the run ends, so a test that
// fails before its cleanup leaves nothing behind, and two runs at once never share a folder.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @typedef {{ name: string, code: number | null, seconds: number, output: string }} Outcome */

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'calmops-test-'));
/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();

/**
 * @param {string} name
 * @param {string} command
 * @param {string[]} args
 * @param {{ buffered: boolean, nice: number }} how
 * @returns {Promise<Outcome>}
 */
function run(name, command, args, how) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: how.buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: { ...process.env, TMPDIR: scratch },
    });
    children.add(child);
    if (how.nice !== 0 && child.pid !== undefined) {
      try {
        setPriority(child.pid, how.nice);
      } catch {
        // Not permitted here: it runs at the same priority, which is only slower.
      }
    }
    /** @type {Buffer[]} */
    const output = [];
    child.stdout?.on('data', (chunk) => output.push(chunk));
    child.stderr?.on('data', (chunk) => output.push(chunk));
    const done = (/** @type {number | null} */ code) => {
      const seconds = Math.round((performance.now() - started) / 100) / 10;
      if (how.buffered) process.stdout.write(`${name} ${code === 0 ? 'passed' : 'FAILED'} (${seconds} s)\n`);
      resolve({ name, code, seconds, output: Buffer.concat(output).toString() });
    };
    child.on('error', (error) => {
      output.push(Buffer.from(`${error.message}\n`));
      done(null);
    });
    child.on('close', (code) => {
      children.delete(child);
      done(code);
    });
  });
}

// Ctrl-C reaches the children too (they share the terminal's process group); a SIGTERM is passed on. Either way this
// process waits for them, so the folder is removed once nothing writes to it.
let interrupted = false;
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(signal, () => {
    interrupted = true;
    if (signal === 'SIGTERM') for (const child of children) child.kill('SIGTERM');
  });
}

const outcomes = await Promise.all([
  run('typecheck', npm, ['run', '--silent', 'typecheck'], { buffered: true, nice: 10 }),
  run('lint', npm, ['run', '--silent', 'lint'], { buffered: true, nice: 10 }),
  run('tests', process.execPath, [vitest, 'run', ...process.argv.slice(2)], { buffered: false, nice: 0 }),
]);
rmSync(scratch, { recursive: true, force: true });
for (const { name, output } of outcomes) if (output !== '') process.stdout.write(`\n── ${name}\n${output}`);
const failed = outcomes.filter((o) => o.code !== 0);
process.stdout.write(
  `\n${outcomes.map((o) => `${o.name} ${o.code === 0 ? 'passed' : 'FAILED'} in ${o.seconds} s`).join(', ')}\n`,
);
process.exitCode = interrupted ? 130 : failed.length === 0 ? 0 : 1;
