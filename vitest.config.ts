import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * How the suite is run (README, Tests). All three projects share one pool of workers, one more than the machine has
 * cores: most integration and end-to-end files spend part of their time waiting on a local stack, a child process, a
 * browser or a backoff, so another file fills the gap. The queue holds the end-to-end files first, then the
 * integration files, then the unit files, each project's longest files first (vitest's default order), so several
 * end-to-end files run at a time and one's long waits (an override's one-minute hold, Alertmanager's retries) overlap
 * another's work instead of adding to it. Unit and integration modules are kept between the files a worker runs
 * (`isolate: false`): every file imports the same SDKs and the same product modules, and importing them again for each
 * file was most of the unit project's time. No test relies on a fresh module: every test that changes the environment
 * or a global puts it back. End-to-end workers are kept between files too, but `npm start`'s stack writes the variables
 * the Lambda handlers read once, so before each end-to-end file `test/support/fresh-file.ts` puts the worker's starting
 * environment back and has the product's own modules evaluated again; only the packages stay loaded, which were most
 * of what a fresh worker per file spent.
 *
 * Timeouts guard against hangs and are sized for a busy shared machine, not for speed: speed is measured by
 * `npm run bench`.
 */
const workers = availableParallelism() + 1;

/**
 * The Go programs the tests run (kubectl, esbuild, Alertmanager) run their Go code on one thread. Each would otherwise
 * spread over every core of a machine the workers already fill, and its scheduler and collector threads then spend
 * CPU waiting on each other: forty kubectl reads four at a time, as kubectl-fidelity runs them, took 6.1 s of CPU
 * this way against 6.8 s (three rounds each, alternately). What they print does not change.
 */
process.env['GOMAXPROCS'] ??= '1';

export default defineConfig({
  test: {
    maxWorkers: workers,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          isolate: false,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/chromium-server.ts'],
          isolate: false,
          setupFiles: ['test/support/fresh-file.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
