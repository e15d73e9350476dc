// @ts-check
// Bundles a part of calmops with esbuild, packages included, and knows whether a bundle on disk is still fresh.
// Plain JavaScript, so that nothing has to compile first.
//
// Loading calmops module by module costs seconds: thousands of small files (the Kubernetes client alone is over a
// thousand), resolved and compiled one at a time, or through tsx's loader for our own TypeScript. So `npm start`
// (local/start-bundle.mjs) and the `calmops` command (cli-bundle.mjs) each run from a bundle built once and imported
// from the cache directory. A bundle is rebuilt only when a file it was built from has changed: the manifest beside it
// records the size and modification time of each of our sources, of each bundled package's package.json (an install
// or upgrade rewrites it), of package-lock.json and of any other file the target names, so after the first run the
// check is a few hundred stat calls. Files edited by hand inside node_modules are not noticed: delete the cache
// directory to rebuild.

import { readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * @typedef {object} BundleLocation
 * @property {string} root the repository: sources and `node_modules` are found here
 * @property {string} cacheDir where bundles and their manifests are kept
 */

/**
 * @typedef {object} BundleTarget
 * @property {string} name names the manifest (`<name>.json`) and the output in the cache directory
 * @property {'file' | 'directory'} layout one file `<name>.mjs`, or a directory of files (chunks shared by code
 *   splitting, unless the target turns it off) whose `entry` file is loaded
 * @property {string} entry for the directory layout: the file inside it to import
 * @property {string[]} builders files that decide how the bundle is built (the target's own module): a change to
 *   one makes the bundle stale
 * @property {(at: BundleLocation) => Promise<TargetBuild>} options esbuild options of this target
 */

/**
 * @typedef {object} TargetBuild
 * @property {import('esbuild').BuildOptions} esbuild entry points and anything else the target adds
 * @property {string[]} [inputs] files the bundle depends on that esbuild does not see (data read at build time),
 *   relative to the repository
 */

// Left to Node at run time: native addons (dynalite's LevelDB), and esbuild, which bundles the sandbox page.
export const EXTERNAL = ['classic-level', 'dynalite', 'esbuild'];

// Bundled CommonJS packages call require(); an ES module has none of its own.
export const REQUIRE_BANNER =
  "import { createRequire as __calmopsCreateRequire } from 'node:module'; const require = __calmopsCreateRequire(import.meta.url);";

/**
 * How every bundle is built: one ES module for Node 20, with the packages above left out.
 * @type {import('esbuild').BuildOptions}
 */
export const NODE_ESM = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  banner: { js: REQUIRE_BANNER },
};

/**
 * Our modules find files next to their sources (templates, state machines, the demo cluster, the sandbox page): each
 * keeps its own import.meta.url instead of the bundle's.
 * @type {import('esbuild').Plugin}
 */
export const keepModuleLocation = {
  name: 'keep-module-location',
  setup(builder) {
    builder.onLoad({ filter: /\.ts$/, namespace: 'file' }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replace(
        /\bimport\.meta\.url\b/g,
        JSON.stringify(pathToFileURL(args.path).href),
      ),
      loader: 'ts',
    }));
  },
};

/** @param {BundleLocation} at @param {BundleTarget} target */
function manifestFile(at, target) {
  return join(at.cacheDir, `${target.name}.json`);
}

/**
 * @typedef {object} Manifest
 * @property {unknown} key
 * @property {Record<string, [number, number]>} inputs
 * @property {string} [directory]
 */

/**
 * @param {BundleLocation} at @param {BundleTarget} target
 * @returns {Manifest | undefined}
 */
function readManifest(at, target) {
  try {
    const manifest = JSON.parse(readFileSync(manifestFile(at, target), 'utf8'));
    if (typeof manifest !== 'object' || manifest === null) return undefined;
    if (typeof manifest.inputs !== 'object' || manifest.inputs === null) return undefined;
    return manifest;
  } catch {
    return undefined;
  }
}

/**
 * The file to import, whether or not it is fresh; undefined when there is none.
 * @param {BundleLocation} at @param {BundleTarget} target
 */
export async function bundleEntry(at, target) {
  return entryOf(at, target, target.layout === 'file' ? undefined : readManifest(at, target));
}

/**
 * The checks that run before every command are synchronous: a handful of small reads and a few hundred stat calls
 * take a millisecond or two that way, and several times that through the thread pool.
 * @param {BundleLocation} at @param {BundleTarget} target @param {Manifest | undefined} manifest
 */
function entryOf(at, target, manifest) {
  let file;
  if (target.layout === 'file') file = join(at.cacheDir, `${target.name}.mjs`);
  else {
    const directory = manifest?.directory;
    if (typeof directory !== 'string' || directory.includes('/')) return undefined;
    file = join(at.cacheDir, directory, target.entry);
  }
  return statSync(file, { throwIfNoEntry: false }) ? file : undefined;
}

/**
 * What else decides the bundle's content. The repository's location is part of it because every module's own
 * location is written into the bundle: a moved or copied checkout must not read the files of the old one. The files
 * that build it (this module and the target's) and esbuild's version are recorded as inputs instead, checked by
 * their status like every other input rather than read on every run.
 * @param {BundleLocation} at
 */
function buildKey(at) {
  return JSON.stringify({ root: resolve(at.root), node: process.versions.node });
}

/**
 * Whether esbuild can be loaded from the repository: production installs leave it out, and then a bundle on disk
 * is used as it is.
 * @param {BundleLocation} at
 */
export async function canBuild(at) {
  return statSync(join(at.root, 'node_modules', 'esbuild', 'package.json'), { throwIfNoEntry: false }) !== undefined;
}

/**
 * The file that stands for a bundled input: a package is tracked by its package.json (the innermost node_modules
 * wins for nested copies), anything else by itself.
 * @param {string} input a path relative to the repository, as esbuild's metafile names it
 */
export function trackedFile(input) {
  const inPackage = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  return inPackage ? `${inPackage[1]}/package.json` : input;
}

/**
 * @param {string} file
 * @returns {Promise<[number, number]>}
 */
async function fingerprint(file) {
  const info = await stat(file);
  return [info.size, info.mtimeMs];
}

/**
 * Whether the bundle on disk was built from the files as they are now.
 * @param {BundleLocation} at @param {BundleTarget} target
 * @returns {Promise<boolean>}
 */
export async function bundleIsFresh(at, target) {
  return freshEntry(at, target) !== undefined;
}

/**
 * The file to load when the bundle on disk was built from the files as they are now; undefined when it was not, or
 * there is none.
 * @param {BundleLocation} at @param {BundleTarget} target
 */
export function freshEntry(at, target) {
  const manifest = readManifest(at, target);
  const entry = manifest === undefined ? undefined : entryOf(at, target, manifest);
  if (manifest === undefined || entry === undefined || manifest.key !== buildKey(at)) return undefined;
  const entries = Object.entries(manifest.inputs);
  // A few hundred stat calls: one after another, without the thread pool, they take a millisecond or two. The paths
  // are joined by hand: path.join normalizes each one character by character, which costs more than the stat.
  const base = at.root.endsWith('/') ? at.root : `${at.root}/`;
  const fresh =
    entries.length > 0 &&
    entries.every(([file, recorded]) => {
      const now = statSync(`${base}${file}`, { throwIfNoEntry: false });
      return now !== undefined && now.size === recorded[0] && now.mtimeMs === recorded[1];
    });
  return fresh ? entry : undefined;
}

// A directory of an earlier build is kept this long after it was replaced, for a process still loading its chunks.
const REPLACED_DIRECTORY_GRACE_MS = 10 * 60 * 1000;

/**
 * Bundles the target, then records what it was built from. The output and the manifest are written under new names
 * and renamed (a directory is named anew for each build and named by the manifest), so a concurrent run reads
 * either the old bundle or the new one.
 * @param {BundleLocation} at @param {BundleTarget} target
 */
export async function buildBundle(at, target) {
  const { build, stop } = await import('esbuild');
  await mkdir(at.cacheDir, { recursive: true });
  // A file saved while esbuild runs may or may not be in the bundle: it is recorded as changed, so the next run
  // builds again.
  const startedAt = Date.now();
  const previous = readManifest(at, target);
  const directory = `${target.name}-${startedAt.toString(36)}-${process.pid}`;
  const temporary = join(at.cacheDir, `${target.name}.mjs.${process.pid}.tmp`);
  let result;
  let extra;
  try {
    const options = await target.options(at);
    extra = options.inputs ?? [];
    result = await build({
      absWorkingDir: at.root,
      ...NODE_ESM,
      keepNames: true,
      metafile: true,
      logLevel: 'silent',
      ...(target.layout === 'file'
        ? { outfile: temporary }
        : { outdir: join(at.cacheDir, directory), splitting: true, chunkNames: 'chunks/[name]-[hash]' }),
      ...options.esbuild,
      plugins: [keepModuleLocation, ...(options.esbuild.plugins ?? [])],
    });
  } catch (error) {
    if (target.layout === 'directory') await rm(join(at.cacheDir, directory), { recursive: true, force: true });
    throw error;
  } finally {
    // esbuild's service process would otherwise stay in calmops' process group for its whole life.
    await stop();
  }
  const tracked = new Set(
    Object.keys(result.metafile?.inputs ?? {})
      .filter((input) => !input.startsWith('<'))
      .map(trackedFile),
  );
  // A new install can change which copy of a package an import resolves to without touching the old copy; the
  // TypeScript settings decide how our sources compile.
  for (const setting of ['package-lock.json', 'tsconfig.json']) tracked.add(setting);
  for (const input of extra) tracked.add(trackedFile(input));
  // How it is built: these modules, the target's own, and esbuild itself.
  for (const builder of [fileURLToPath(import.meta.url), ...target.builders]) tracked.add(relative(at.root, builder));
  tracked.add('node_modules/esbuild/package.json');
  /** @type {Record<string, [number, number]>} */
  const inputs = {};
  await Promise.all(
    [...tracked].map(async (file) => {
      const now = await fingerprint(resolve(at.root, file)).catch(() => undefined);
      if (now === undefined) return;
      inputs[file] = now[1] >= startedAt ? [-1, -1] : now;
    }),
  );
  if (target.layout === 'file') await rename(temporary, join(at.cacheDir, `${target.name}.mjs`));
  /** @type {Manifest} */
  const manifest = {
    key: buildKey(at),
    inputs,
    ...(target.layout === 'directory' ? { directory } : {}),
  };
  const manifestTemporary = `${manifestFile(at, target)}.${process.pid}.tmp`;
  await writeFile(manifestTemporary, JSON.stringify(manifest));
  await rename(manifestTemporary, manifestFile(at, target));
  if (target.layout === 'directory') {
    await removeReplacedDirectories(at, target, [directory, previous?.directory]);
  }
}

/**
 * Directories of earlier builds, once no run can still be loading them.
 * @param {BundleLocation} at @param {BundleTarget} target @param {unknown[]} keep
 */
async function removeReplacedDirectories(at, target, keep) {
  const pattern = new RegExp(`^${target.name}-[0-9a-z]+-\\d+$`);
  for (const name of await readdir(at.cacheDir)) {
    if (!pattern.test(name) || keep.includes(name)) continue;
    const path = join(at.cacheDir, name);
    const info = await stat(path).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > REPLACED_DIRECTORY_GRACE_MS) {
      await rm(path, { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/**
 * esbuild's errors with their locations, or the message.
 * @param {unknown} error
 */
export function describeBuildError(error) {
  const errors = /** @type {{ errors?: { text: string, location?: { file: string, line: number } | null }[] }} */ (
    error
  ).errors;
  return errors?.length
    ? errors.map((e) => `  ${e.location ? `${e.location.file}:${e.location.line}: ` : ''}${e.text}`).join('\n')
    : `  ${error instanceof Error ? error.message : String(error)}`;
}
