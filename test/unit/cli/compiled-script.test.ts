import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeCacheFile } from '../../../build/compiled-script.mjs';
import { type CalmopsRun, collectOutput } from '../../support/calmops-bin.js';

/**
 * A bundled CommonJS file run through its code cache, in a process of its own as bin/calmops.js runs it: the cache
 * appears after a run that succeeds, is used as it is afterwards, and is replaced when V8 refuses it.
 */

const loader = pathToFileURL(fileURLToPath(new URL('../../../build/compiled-script.mjs', import.meta.url))).href;
let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'calmops-compiled-script-'));
  await mkdir(join(dir, 'lib'));
  await writeFile(join(dir, 'lib', 'words.cjs'), "module.exports = { word: 'cached' };\n");
  file = join(dir, 'tool.cjs');
  await writeFile(
    file,
    [
      "const { word } = require('./lib/words.cjs');",
      "const path = require('node:path');",
      'exports.run = async (code) => {',
      "  const { sep } = require('node:path');",
      '  const shout = (w) => w.toUpperCase();',
      "  process.stdout.write([shout(word), path.basename(__filename), path.basename(__dirname), sep].join(' '));",
      '  process.exitCode = code;',
      '};',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(code = 0): Promise<CalmopsRun> {
  const script = `const { requireCompiled } = await import(${JSON.stringify(loader)});
await requireCompiled(${JSON.stringify(file)}).run(${code});`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return collectOutput(child);
}

describe('a script compiled with its code cache', () => {
  it('runs as require() would, and writes no cache when the run fails', async () => {
    const failed = await run(3);
    expect(failed.code).toBe(3);
    expect(failed.stdout).toBe(`CACHED tool.cjs ${dir.split('/').pop()} /`);
    expect((await readdir(dir)).filter((n) => n.includes('v8cache'))).toEqual([]);
  });

  it('writes the cache after a run that succeeds, and reads it afterwards without writing it again', async () => {
    const first = await run();
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const cache = codeCacheFile(file);
    const written = await stat(cache);
    expect(written.size).toBeGreaterThan(0);
    const second = await run();
    expect(second).toEqual(first);
    expect((await stat(cache)).mtimeMs).toBe(written.mtimeMs);
    // Nothing but the cache itself is left beside the script.
    expect((await readdir(dir)).sort()).toEqual(['lib', 'tool.cjs', cache.split('/').pop()]);
  });

  it('replaces a cache that V8 refuses, and runs the same', async () => {
    const cache = codeCacheFile(file);
    const good = await run();
    await writeFile(cache, Buffer.from('not a code cache at all, but garbage of some length'));
    expect(await run()).toEqual(good);
    expect((await readFile(cache)).toString('latin1')).not.toContain('garbage');
  });

  it('runs without a cache where none can be written, and leaves nothing half-written', async () => {
    const cache = codeCacheFile(file);
    await rm(cache, { force: true });
    // A directory where the cache would go: the rename fails whatever the process's permissions.
    await mkdir(cache);
    const result = await run();
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    await rm(cache, { recursive: true });
  });
});
