// @ts-check
// How `npm start` gets the stack into memory quickly. Plain JavaScript, so that nothing has to compile first.
//
// Loading the stack module by module costs seconds: thousands of small files (the Kubernetes client alone is over a
// thousand), resolved and compiled one at a time, or through tsx's loader for our own TypeScript. So the stack is
// bundled once with esbuild, packages included, into one file, and imported from there. The bundle is rebuilt only
// when a file it was built from has changed: the manifest beside it records the size and modification time of each
// of our sources, of each bundled package's package.json (an install or upgrade rewrites it) and of
// package-lock.json, so after the first start the check is a few hundred stat calls. Files edited by hand inside
// node_modules are not noticed: delete the cache directory to rebuild.

import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * @typedef {object} BundleLocation
 * @property {string} root the repository: `local/start.ts` and `node_modules` are found here
 * @property {string} cacheDir where the bundle (`start.mjs`) and its manifest (`start.json`) are kept
 */

// Left to Node at run time: native addons (dynalite's LevelDB), and esbuild, which bundles the sandbox page.
const EXTERNAL = ['classic-level', 'dynalite', 'esbuild'];
const ENTRY = "export { main, prepareStart } from './local/start.ts';\n";

/** @param {BundleLocation} at */
export function bundleFile(at) {
  return join(at.cacheDir, 'start.mjs');
}

/** @param {BundleLocation} at */
function manifestFile(at) {
  return join(at.cacheDir, 'start.json');
}

/**
 * What else decides the bundle's content: a change here rebuilds it even if no input changed. The repository's
 * location is part of it because every module's own location is written into the bundle: a moved or copied
 * checkout must not read the files of the old one.
 * @param {BundleLocation} at
 */
async function buildKey(at) {
  const esbuild = JSON.parse(await readFile(join(at.root, 'node_modules', 'esbuild', 'package.json'), 'utf8'));
  const builder = createHash('sha256')
    .update(await readFile(fileURLToPath(import.meta.url)))
    .digest('hex');
  return JSON.stringify({ root: resolve(at.root), esbuild: esbuild.version, node: process.versions.node, builder });
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
 * @param {BundleLocation} at
 * @returns {Promise<boolean>}
 */
export async function bundleIsFresh(at) {
  /** @type {{ key?: unknown, inputs?: Record<string, [number, number]> }} */
  let manifest;
  try {
    manifest = JSON.parse(await readFile(manifestFile(at), 'utf8'));
    await stat(bundleFile(at));
  } catch {
    return false;
  }
  if (manifest.key !== (await buildKey(at)) || typeof manifest.inputs !== 'object' || manifest.inputs === null) {
    return false;
  }
  const entries = Object.entries(manifest.inputs);
  const checks = await Promise.all(
    entries.map(async ([file, recorded]) => {
      try {
        const now = await fingerprint(join(at.root, file));
        return now[0] === recorded[0] && now[1] === recorded[1];
      } catch {
        return false;
      }
    }),
  );
  return entries.length > 0 && checks.every(Boolean);
}

/**
 * Bundles `local/start.ts` and everything it imports, then records what it was built from. Both files are written
 * under temporary names and renamed, so a concurrent start reads either the old pair or the new one.
 * @param {BundleLocation} at
 */
export async function buildBundle(at) {
  const { build, stop } = await import('esbuild');
  await mkdir(at.cacheDir, { recursive: true });
  // A file saved while esbuild runs may or may not be in the bundle: it is recorded as changed, so the next start
  // builds again.
  const startedAt = Date.now();
  const temporary = `${bundleFile(at)}.${process.pid}.tmp`;
  const result = await build({
    stdin: { contents: ENTRY, resolveDir: at.root, loader: 'ts', sourcefile: '<npm start>' },
    absWorkingDir: at.root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __calmopsCreateRequire } from 'node:module'; const require = __calmopsCreateRequire(import.meta.url);",
    },
    keepNames: true,
    metafile: true,
    outfile: temporary,
    logLevel: 'silent',
    plugins: [
      {
        // Our modules find files next to their sources (templates, state machines, the demo cluster, the sandbox
        // page): each keeps its own import.meta.url instead of the bundle's.
        name: 'keep-module-location',
        setup(builder) {
          builder.onLoad({ filter: /\.ts$/ }, async (args) => ({
            contents: (await readFile(args.path, 'utf8')).replace(
              /\bimport\.meta\.url\b/g,
              JSON.stringify(pathToFileURL(args.path).href),
            ),
            loader: 'ts',
          }));
        },
      },
    ],
  });
  // esbuild's service process would otherwise stay in calmops' process group for its whole life.
  await stop();
  const tracked = new Set(
    Object.keys(result.metafile.inputs)
      .filter((input) => !input.startsWith('<'))
      .map(trackedFile),
  );
  // A new install can change which copy of a package an import resolves to without touching the old copy; the
  // TypeScript settings decide how our sources compile.
  for (const setting of ['package-lock.json', 'tsconfig.json']) tracked.add(setting);
  /** @type {Record<string, [number, number]>} */
  const inputs = {};
  await Promise.all(
    [...tracked].map(async (file) => {
      const now = await fingerprint(resolve(at.root, file)).catch(() => undefined);
      if (now === undefined) return;
      inputs[file] = now[1] >= startedAt ? [-1, -1] : now;
    }),
  );
  await rename(temporary, bundleFile(at));
  const manifestTemporary = `${manifestFile(at)}.${process.pid}.tmp`;
  await writeFile(manifestTemporary, JSON.stringify({ key: await buildKey(at), inputs }));
  await rename(manifestTemporary, manifestFile(at));
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
