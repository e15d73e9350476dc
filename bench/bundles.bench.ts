import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { lambdaBuildOptions, OMITTED_MODULE } from '../cdk/bundling.js';
import { FUNCTION_ENTRIES, type FunctionName } from '../cdk/calmops-stack.js';
import { median } from './support/stats.js';

/**
 * The Lambda bundles as the CDK builds them (cdk/bundling.ts), without `cdk synth`: for each function its size, its
 * largest packages, and its cold import time, i.e. a fresh `node` importing the bundle minus a fresh `node` doing
 * nothing, both measured in this run, interleaved, median of RUNS. A function that bundles Bolt is built a second
 * time with Bolt's unused receivers left in, to show what leaving them out saves.
 */

const RUNS = 9;
const root = fileURLToPath(new URL('..', import.meta.url));

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

interface Built {
  outfile: string;
  bytes: number;
  gzipBytes: number;
  packages: Record<string, number>;
  omitsReceivers: boolean;
}

function packageOf(input: string): string {
  const found = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g);
  return found ? (found[found.length - 1] as string).slice('node_modules/'.length) : input.split('/', 2).join('/');
}

async function bundle(entry: string, outfile: string, keepReceivers = false): Promise<Built> {
  const options = lambdaBuildOptions({ projectRoot: root, entry, outfile });
  const result = await build({ ...options, ...(keepReceivers ? { alias: {} } : {}), metafile: true });
  const output = Object.values((result.metafile as Metafile).outputs).find((o) => o.entryPoint !== undefined);
  if (output === undefined) throw new Error(`esbuild wrote no bundle for ${entry}`);
  const packages: Record<string, number> = {};
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = packageOf(input);
    packages[name] = (packages[name] ?? 0) + bytesInOutput;
  }
  const code = await readFile(outfile);
  return {
    outfile,
    bytes: code.length,
    gzipBytes: gzipSync(code).length,
    packages,
    omitsReceivers: Object.keys(output.inputs).includes(OMITTED_MODULE.replace(/^\.\//, '')),
  };
}

/** Wall time of one fresh `node` process running `script`, from spawn to exit. */
function nodeRun(script: string): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env['PATH'] ?? '', CALMOPS_TEMPLATES_DIR: join(root, 'templates') },
    encoding: 'utf8',
  });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`node -e ${JSON.stringify(script)} failed: ${run.stderr}`);
  return ms;
}

export default async function bundlesBench() {
  const dir = await mkdtemp(join(tmpdir(), 'calmops-bundles-'));
  try {
    const names = Object.keys(FUNCTION_ENTRIES) as FunctionName[];
    const built = {} as Record<FunctionName, Built>;
    const unomitted: Partial<Record<FunctionName, Built>> = {};
    for (const name of names) {
      built[name] = await bundle(FUNCTION_ENTRIES[name], join(dir, name, 'index.mjs'));
      if (built[name].omitsReceivers) {
        unomitted[name] = await bundle(FUNCTION_ENTRIES[name], join(dir, `${name}-all`, 'index.mjs'), true);
      }
    }

    const importRun = (b: Built) => nodeRun(`await import(${JSON.stringify(pathToFileURL(b.outfile).href)});`);
    const empty: number[] = [];
    const imports = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<FunctionName, number[]>;
    const unomittedImports: Partial<Record<FunctionName, number[]>> = {};
    for (let i = 0; i < RUNS; i++) {
      empty.push(nodeRun(''));
      for (const name of names) {
        imports[name].push(importRun(built[name]));
        const all = unomitted[name];
        if (all !== undefined) unomittedImports[name] = [...(unomittedImports[name] ?? []), importRun(all)];
      }
    }
    const emptyMs = median(empty);

    const functions = Object.fromEntries(
      names.map((name) => {
        const b = built[name];
        const largest = Object.entries(b.packages)
          .sort((x, y) => y[1] - x[1])
          .slice(0, 8)
          .map(([pkg, bytes]) => ({ package: pkg, bytes }));
        const importMs = median(imports[name]);
        return [
          name,
          {
            entry: FUNCTION_ENTRIES[name],
            bytes: b.bytes,
            megabytes: round(b.bytes / 1_000_000, 2),
            gzipBytes: b.gzipBytes,
            ...(unomitted[name] === undefined
              ? {}
              : {
                  withBoltReceivers: {
                    bytes: unomitted[name].bytes,
                    coldImportMedianMs: round(median(unomittedImports[name] ?? []) - emptyMs),
                  },
                }),
            largestInputs: largest,
            coldImportMs: {
              median: round(importMs - emptyMs),
              processMedian: round(importMs),
              min: round(Math.min(...imports[name]) - emptyMs),
              max: round(Math.max(...imports[name]) - emptyMs),
            },
          },
        ];
      }),
    );

    for (const name of names) {
      const f = functions[name] as {
        megabytes: number;
        gzipBytes: number;
        coldImportMs: { median: number };
        withBoltReceivers?: { bytes: number; coldImportMedianMs: number };
      };
      const all = f.withBoltReceivers;
      process.stdout.write(
        `  ${name.padEnd(14)} ${String(f.megabytes).padStart(5)} MB (${Math.round(f.gzipBytes / 1024)} KB gzip)  ` +
          `cold import ${f.coldImportMs.median} ms` +
          (all
            ? `  (with Bolt's receivers: ${round(all.bytes / 1_000_000, 2)} MB, ${all.coldImportMedianMs} ms)`
            : '') +
          '\n',
      );
    }
    process.stdout.write(`  (an empty node process: ${round(emptyMs)} ms, subtracted above)\n`);
    return {
      description:
        'Each Lambda bundle built with cdk/bundling.ts (what the CDK deploys), its size, largest inputs, and cold ' +
        'import time: a fresh node importing the bundle minus a fresh empty node, interleaved, median of the runs.',
      runs: RUNS,
      emptyNodeMs: round(emptyMs),
      functions,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
