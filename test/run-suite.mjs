// @ts-check
// `npm test` after its prerequisites check: the type check and the lint run beside the tests instead of before them,
// since the tests spend much of their time waiting on their local stacks and child processes. The checks run at a
// lower priority, so on a busy machine the tests (which have timeouts) get the cores first; their output is printed
// whole after the tests', never interleaved with it. Arguments are passed to `vitest run`.

import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';

/** @typedef {{ name: string, code: number | null, seconds: number, output: string }} Outcome */

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

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
    const child = spawn(command, args, { stdio: how.buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
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
    child.on('close', (code) => done(code));
  });
}

const outcomes = await Promise.all([
  run('typecheck', npm, ['run', '--silent', 'typecheck'], { buffered: true, nice: 10 }),
  run('lint', npm, ['run', '--silent', 'lint'], { buffered: true, nice: 10 }),
  run('tests', process.execPath, [vitest, 'run', ...process.argv.slice(2)], { buffered: false, nice: 0 }),
]);
for (const { name, output } of outcomes) if (output !== '') process.stdout.write(`\n── ${name}\n${output}`);
const failed = outcomes.filter((o) => o.code !== 0);
process.stdout.write(
  `\n${outcomes.map((o) => `${o.name} ${o.code === 0 ? 'passed' : 'FAILED'} in ${o.seconds} s`).join(', ')}\n`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
