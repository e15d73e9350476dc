import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildBundle,
  bundleFile,
  bundleIsFresh,
  describeBuildError,
  trackedFile,
} from '../../../local/start-bundle.mjs';

/**
 * The `npm start` bundle on a small project of its own: a `local/start.ts` importing a sibling module and a
 * package, with esbuild and js-yaml linked from this repository's node_modules.
 */

const repository = fileURLToPath(new URL('../../..', import.meta.url));
let root: string;
let at: { root: string; cacheDir: string };

/**
 * Writes the files as saved a second ago: a build counts a file modified in the millisecond it starts, or later, as
 * saved during the build, and these are saved before it.
 */
async function project(files: Record<string, string>): Promise<void> {
  const saved = new Date(Date.now() - 1000);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
    await utimes(join(root, path), saved, saved);
  }
}

const START = `import { dump } from 'js-yaml';
import { suffix } from 'calm-words';
import { where, word } from './helper.ts';
export async function main() { return dump({ word: word + suffix }); }
export async function prepareStart() { return where; }
`;

async function load(): Promise<{ main: () => Promise<string>; prepareStart: () => Promise<string> }> {
  // A query string per load: the module cache would otherwise return the first bundle again.
  return import(`${pathToFileURL(bundleFile(at)).href}?${Date.now()}-${Math.random()}`);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'calmops-bundle-'));
  at = { root, cacheDir: join(root, 'cache') };
  await mkdir(join(root, 'node_modules'), { recursive: true });
  await symlink(join(repository, 'node_modules', 'esbuild'), join(root, 'node_modules', 'esbuild'));
  await symlink(join(repository, 'node_modules', 'js-yaml'), join(root, 'node_modules', 'js-yaml'));
  await project({
    'package-lock.json': '{}\n',
    'node_modules/calm-words/package.json': '{ "name": "calm-words", "version": "1.0.0", "main": "lib/index.js" }\n',
    'node_modules/calm-words/lib/index.js': "exports.suffix = '';\n",
    'local/start.ts': START,
    'local/helper.ts': "export const word = 'calm';\nexport const where = import.meta.url;\n",
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the npm start bundle', () => {
  it('is built when absent, runs the entry points, and keeps each module its own location', async () => {
    expect(await bundleIsFresh(at)).toBe(false);
    await buildBundle(at);
    expect(await bundleIsFresh(at)).toBe(true);
    const bundle = await load();
    expect(await bundle.main()).toBe('word: calm\n');
    // Files found next to a module's source (templates, state machines) are found from the bundle too.
    expect(await bundle.prepareStart()).toBe(pathToFileURL(join(root, 'local', 'helper.ts')).href);
    // Nothing temporary is left beside the bundle.
    expect((await readdir(at.cacheDir)).sort()).toEqual(['start.json', 'start.mjs']);
  });

  it('tracks packages by their package.json, and every source of ours by itself', async () => {
    const manifest = JSON.parse(await readFile(join(at.cacheDir, 'start.json'), 'utf8')) as {
      inputs: Record<string, unknown>;
    };
    const inputs = Object.keys(manifest.inputs);
    expect(inputs).toContain('local/start.ts');
    expect(inputs).toContain('local/helper.ts');
    expect(inputs).toContain('package-lock.json');
    expect(inputs).toContain('node_modules/calm-words/package.json');
    expect(inputs).not.toContain('node_modules/calm-words/lib/index.js');
    const yaml = inputs.filter((input) => input.includes('node_modules/js-yaml/'));
    expect(yaml).toHaveLength(1);
    expect(yaml[0]).toMatch(/node_modules\/js-yaml\/package\.json$/);
    expect(trackedFile('node_modules/@scope/pkg/dist/a.js')).toBe('node_modules/@scope/pkg/package.json');
    expect(trackedFile('node_modules/a/node_modules/b/lib/x.js')).toBe('node_modules/a/node_modules/b/package.json');
    expect(trackedFile('src/x.ts')).toBe('src/x.ts');
  });

  it('is rebuilt after a source changes, with the change in it', async () => {
    await project({ 'local/helper.ts': "export const word = 'calmer';\nexport const where = import.meta.url;\n" });
    expect(await bundleIsFresh(at)).toBe(false);
    await buildBundle(at);
    expect(await bundleIsFresh(at)).toBe(true);
    expect(await (await load()).main()).toBe('word: calmer\n');
  });

  it('is stale when a package is reinstalled or the lock file changes', async () => {
    // An install rewrites the package's files, package.json among them.
    await project({ 'node_modules/calm-words/lib/index.js': "exports.suffix = '!';\n" });
    const earlier = new Date(Date.now() - 3_600_000);
    await utimes(join(root, 'node_modules/calm-words/package.json'), earlier, earlier);
    expect(await bundleIsFresh(at)).toBe(false);
    await buildBundle(at);
    expect(await bundleIsFresh(at)).toBe(true);
    expect(await (await load()).main()).toBe('word: calmer!\n');

    await utimes(join(root, 'package-lock.json'), earlier, new Date(Date.now() - 7_200_000));
    expect(await bundleIsFresh(at)).toBe(false);
    await buildBundle(at);
    expect(await bundleIsFresh(at)).toBe(true);
  });

  it('builds again next time when a source changes while it builds', async () => {
    // A modification time at or after the build's start stands for a save during the build.
    const during = new Date(Date.now() + 60_000);
    await utimes(join(root, 'local/helper.ts'), during, during);
    await buildBundle(at);
    expect(await bundleIsFresh(at)).toBe(false);
    const earlier = new Date(Date.now() - 3_600_000);
    await utimes(join(root, 'local/helper.ts'), earlier, earlier);
    await buildBundle(at);
    expect(await bundleIsFresh(at)).toBe(true);
  });

  it('is stale for a moved or copied checkout, whose modules live elsewhere', async () => {
    const copy = await mkdtemp(join(tmpdir(), 'calmops-bundle-copy-'));
    try {
      // A copy that keeps modification times, with the same cache directory.
      await cp(root, copy, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      expect(await bundleIsFresh(at)).toBe(true);
      expect(await bundleIsFresh({ root: copy, cacheDir: at.cacheDir })).toBe(false);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it('reports a source error with its place and keeps the previous bundle', async () => {
    const before = await readFile(bundleFile(at), 'utf8');
    await project({ 'local/helper.ts': 'export const word = ;\n' });
    const failure = await buildBundle(at).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeDefined();
    expect(describeBuildError(failure)).toMatch(/local\/helper\.ts:1: /);
    expect(await readFile(bundleFile(at), 'utf8')).toBe(before);
    expect(await bundleIsFresh(at)).toBe(false);
    expect((await readdir(at.cacheDir)).sort()).toEqual(['start.json', 'start.mjs']);
  });

  it('is rebuilt when its manifest is unreadable', async () => {
    await project({ 'local/helper.ts': "export const word = 'calm';\nexport const where = import.meta.url;\n" });
    await buildBundle(at);
    await writeFile(join(at.cacheDir, 'start.json'), '{"key": ');
    expect(await bundleIsFresh(at)).toBe(false);
  });
});
