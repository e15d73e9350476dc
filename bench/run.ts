import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * `npm run bench [-- NAME ...]`: runs every `bench/*.bench.ts` (or the named ones) one after another, each in
 * this process, and writes what each returns to `bench/results/<name>.json`. Benchmarks print their own table.
 */

const here = fileURLToPath(new URL('.', import.meta.url));
const resultsDir = join(here, 'results');

async function benches(): Promise<string[]> {
  return (await readdir(here))
    .filter((f) => f.endsWith('.bench.ts'))
    .map((f) => basename(f, '.bench.ts'))
    .sort();
}

async function main(args: string[]): Promise<number> {
  const available = await benches();
  const unknown = args.filter((a) => !available.includes(a));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; available: ${available.join(', ')}\n`);
    return 2;
  }
  const selected = args.length > 0 ? args : available;
  await mkdir(resultsDir, { recursive: true });
  for (const name of selected) {
    process.stdout.write(`\n▶ ${name}\n`);
    const module = (await import(pathToFileURL(join(here, `${name}.bench.ts`)).href)) as {
      default?: () => Promise<object>;
    };
    if (typeof module.default !== 'function') {
      process.stderr.write(`${name}.bench.ts has no default export function\n`);
      return 1;
    }
    const started = Date.now();
    const result = await module.default();
    const file = join(resultsDir, `${name}.json`);
    const record = { benchmark: name, finishedAt: new Date().toISOString(), node: process.version, ...result };
    await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
    process.stdout.write(`✓ ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s → ${file}\n`);
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
