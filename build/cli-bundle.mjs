// @ts-check
// The `calmops` command runs from a bundle (bundle.mjs explains why, and when it is rebuilt): `src/cli/main.ts` and
// each command module are bundled each into one CommonJS file, so a command loads its own file and nothing else, and
// bin/calmops.js finds `commands/<name>.cjs` beside `main.cjs`. They are CommonJS so that bin/calmops.js can compile
// them with V8's code cache (compiled-script.mjs), which Node 20 offers for scripts but not for ES modules; a file
// of its own per command means each command's cache holds the code that command runs. The shipped triage templates
// are parsed and validated while building and written into the bundle, and so is the snapshot parser's fingerprint,
// so no run reads their YAML or hashes the parser's sources again.

import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildBundle, bundleEntry, canBuild, freshEntry, keepModuleLocation, NODE_ESM } from './bundle.mjs';

/** @typedef {import('./bundle.mjs').BundleLocation} BundleLocation */

const root = fileURLToPath(new URL('..', import.meta.url));

/** This checkout, with the cache directory every calmops cache shares (see local/cache-dir.ts). */
export const cliLocation = { root, cacheDir: join(root, 'node_modules', '.cache', 'calmops') };

const COMMANDS_DIR = 'src/cli/commands';
// The bundle's files are CommonJS scripts: `main.cjs`, and `commands/<name>.cjs` beside it.
const SCRIPT_EXTENSION = '.cjs';
const TEMPLATES_DIR = 'templates';

/**
 * What the bundle carries precomputed, and the files that decided it: the shipped templates as `loadTemplates`
 * returns them, and the snapshot parser's fingerprint as `parserFingerprint` computes it. Both functions are bundled
 * on their own and run here, so what the bundle holds is exactly what the sources would compute.
 * @param {BundleLocation} at
 */
async function builtData(at) {
  const { build } = await import('esbuild');
  const result = await build({
    stdin: {
      contents:
        "export { loadTemplates } from './src/triage/templates/index.ts';\n" +
        "export { parserFingerprint } from './src/cluster/snapshot-cache.ts';\n",
      resolveDir: at.root,
      loader: 'ts',
      sourcefile: '<built-data>',
    },
    absWorkingDir: at.root,
    ...NODE_ESM,
    write: false,
    metafile: true,
    outfile: 'built-data.mjs',
    logLevel: 'silent',
    plugins: [keepModuleLocation],
  });
  await mkdir(at.cacheDir, { recursive: true });
  const loader = join(at.cacheDir, `built-data.${process.pid}.${Date.now()}.mjs`);
  const dir = join(at.root, TEMPLATES_DIR);
  let list;
  let fingerprint;
  try {
    await writeFile(loader, result.outputFiles?.[0]?.contents ?? '');
    const built = await import(pathToFileURL(loader).href);
    list = built.loadTemplates(dir).list();
    fingerprint = built.parserFingerprint();
  } finally {
    await rm(loader, { force: true });
  }
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'));
  return {
    list,
    fingerprint,
    // The folder itself stands for the list of files in it: adding or removing a template changes its mtime.
    inputs: [
      ...Object.keys(result.metafile.inputs).filter((input) => !input.startsWith('<')),
      TEMPLATES_DIR,
      ...files.map((f) => `${TEMPLATES_DIR}/${f}`),
    ],
  };
}

const CLIENT = '@kubernetes/client-node';
const UNRESOLVED = {};

/**
 * Where each name the Kubernetes client exports is defined: the first module of its `dist` that declares it, unless
 * several do. Names the index exports under another name are not here.
 * @param {string} root
 */
async function clientDefinitions(root) {
  const dist = join(root, 'node_modules', CLIENT, 'dist');
  /** @type {Map<string, string | null>} */
  const sites = new Map();
  for (const file of await readdir(dist, { recursive: true })) {
    if (!file.endsWith('.js')) continue;
    const text = await readFile(join(dist, file), 'utf8');
    for (const match of text.matchAll(
      /^export (?:class|function\*?|async function|const|let|var) ([A-Za-z_$][\w$]*)/gm,
    )) {
      const name = /** @type {string} */ (match[1]);
      sites.set(name, sites.has(name) ? null : join(dist, file));
    }
  }
  return sites;
}

/**
 * The names `text` imports from `specifier` with named imports only; undefined when it imports it any other way
 * (a namespace, a default, a re-export), or imports nothing from it.
 * @param {string} text
 * @param {string} specifier
 */
function namedImports(text, specifier) {
  const quoted = `['"]${specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}['"]`;
  const statements = [...text.matchAll(new RegExp(`^(?:import|export)\\b[^;]*?from\\s*${quoted}`, 'gm'))];
  /** @type {Set<string>} */
  const names = new Set();
  for (const [statement] of statements) {
    const named = /^import\s*\{([^}]*)\}\s*from/.exec(statement);
    if (!named) return undefined;
    for (const part of (named[1] ?? '').split(',')) {
      const name =
        part
          .trim()
          .split(/\s+as\s+/)[0]
          ?.trim() ?? '';
      if (name && !name.startsWith('type ')) names.add(name);
    }
  }
  return names.size > 0 ? names : undefined;
}

/**
 * Only the modules of the Kubernetes client that calmops uses. The package's index (and its generated code's index)
 * re-exports every generated API and model class, over a thousand files: a command that only loads a kubeconfig and
 * makes requests would load them all, because `calmops doctor` makes one API client. So a named import of such an
 * index, by our sources or by the client itself, is answered by a module that exports those names straight from the
 * files that define them: the rest of the index is never reached, so it lands in no chunk that `calmops triage`
 * loads. An index reached anyway (an API class, which the index exports under another name) is marked free of
 * import-time effects, so that only the exports used from it are bundled.
 * @param {string} root
 * @returns {Promise<import('esbuild').Plugin>}
 */
async function kubernetesClientUsedModulesOnly(root) {
  const definitions = await clientDefinitions(root);
  const inClient = `/node_modules/${CLIENT}/`;
  /** @type {Map<string, boolean>} */
  const hubs = new Map();
  /** @param {string} path */
  const isHub = async (path) => {
    if (!hubs.has(path)) {
      hubs.set(path, /^export\s*(?:\*|\{[^}]*\}\s*from)/m.test(await readFile(path, 'utf8').catch(() => '')));
    }
    return hubs.get(path);
  };
  return {
    name: 'kubernetes-client-used-modules-only',
    setup(builder) {
      // Only the package itself and index modules: a callback for every import of every package would slow the
      // build down several times.
      builder.onResolve({ filter: /^(?:@kubernetes\/client-node|\.\.?\/(?:.*\/)?index\.js)$/ }, async (args) => {
        if (args.pluginData === UNRESOLVED || args.namespace !== 'file') return undefined;
        const fromClient = args.importer.includes(inClient);
        const ofClient = args.path === CLIENT || args.path.startsWith(`${CLIENT}/`) || args.path.includes(inClient);
        if (!fromClient && !(ofClient && !args.importer.includes('/node_modules/'))) return undefined;
        const resolved = await builder.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: UNRESOLVED,
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        if (resolved.external || !resolved.path.includes(inClient)) return undefined;
        if (args.kind === 'import-statement' && (await isHub(resolved.path))) {
          const names = namedImports(await readFile(args.importer, 'utf8'), args.path);
          if (names && [...names].every((name) => typeof definitions.get(name) === 'string')) {
            return {
              path: `${args.importer}:${args.path}`,
              namespace: 'kubernetes-client-imports',
              pluginData: [...names].map((name) => [name, definitions.get(name)]),
            };
          }
        }
        return { path: resolved.path, sideEffects: false };
      });
      builder.onLoad({ filter: /.*/, namespace: 'kubernetes-client-imports' }, (args) => ({
        contents: /** @type {[string, string][]} */ (args.pluginData)
          .map(([name, file]) => `export { ${name} } from ${JSON.stringify(file)};`)
          .join('\n'),
        loader: 'js',
        resolveDir: root,
      }));
    },
  };
}

/**
 * node-fetch 2 (which the Kubernetes client loads for its Headers) takes its URL class from `node:url` and falls
 * back to the `whatwg-url` package only where Node has none: `const URL = Url.URL || whatwgUrl.URL`. Node always has
 * one, yet loading the package evaluates its Unicode mapping table, a sizeable part of what `calmops triage` spends
 * loading its modules. node-fetch is given a module that answers with Node's own URL class instead.
 * @type {import('esbuild').Plugin}
 */
const whatwgUrlIsNodeUrl = {
  name: 'whatwg-url-is-node-url',
  setup(builder) {
    builder.onResolve({ filter: /^whatwg-url$/ }, (args) =>
      /[/\\]node_modules[/\\]node-fetch[/\\]/.test(args.importer)
        ? { path: 'whatwg-url', namespace: 'node-url' }
        : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'node-url' }, () => ({
      contents: "module.exports = { URL: require('node:url').URL };",
      loader: 'js',
    }));
  },
};

/**
 * The Kubernetes client's KubeConfig imports the SOCKS proxy agent, which it only constructs for a cluster whose
 * `proxy-url` is a socks5 address; loading it (with the socks and ip-address packages under it) is most of what the
 * client's own modules cost at start. The client is given a module whose `SocksProxyAgent` loads the package the
 * first time the client asks for it: the same class, evaluated when a kubeconfig needs it rather than always.
 * @type {import('esbuild').Plugin}
 */
const socksAgentWhenUsed = {
  name: 'socks-agent-when-used',
  setup(builder) {
    builder.onResolve({ filter: /^socks-proxy-agent$/ }, (args) =>
      args.namespace === 'file' && /[/\\]@kubernetes[/\\]client-node[/\\]/.test(args.importer)
        ? { path: 'socks-proxy-agent', namespace: 'when-used', pluginData: { resolveDir: dirname(args.importer) } }
        : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'when-used' }, (args) => ({
      contents: "module.exports = { get SocksProxyAgent() { return require('socks-proxy-agent').SocksProxyAgent; } };",
      loader: 'js',
      resolveDir: /** @type {{ resolveDir: string }} */ (args.pluginData).resolveDir,
    }));
  },
};

/** @type {import('./bundle.mjs').BundleTarget} */
export const CLI = {
  name: 'cli',
  layout: 'directory',
  entry: `main${SCRIPT_EXTENSION}`,
  builders: [fileURLToPath(import.meta.url)],
  options: async (at) => {
    const commands = (await readdir(join(at.root, COMMANDS_DIR)))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .map((f) => f.slice(0, -'.ts'.length));
    const built = await builtData(at);
    return {
      esbuild: {
        entryPoints: {
          main: 'src/cli/main.ts',
          ...Object.fromEntries(commands.map((name) => [`commands/${name}`, `${COMMANDS_DIR}/${name}.ts`])),
        },
        format: 'cjs',
        // Each file whole: code splitting needs ES modules.
        splitting: false,
        outExtension: { '.js': SCRIPT_EXTENSION },
        // `import()` becomes `require`: a script compiled with a code cache may not import (compiled-script.mjs).
        supported: { 'dynamic-import': false },
        // What `import.meta.url` is in an ES module: the file's own URL. Our sources have theirs written in at
        // build time (keepModuleLocation); this is for the few bundled .mjs files that ask.
        banner: { js: "var __calmopsModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
        // A string for JSON.parse: much quicker to load than the same data as an object literal.
        define: {
          'import.meta.url': '__calmopsModuleUrl',
          CALMOPS_COMMAND_EXTENSION: JSON.stringify(SCRIPT_EXTENSION),
          CALMOPS_BUILT_TEMPLATES: JSON.stringify(JSON.stringify(built.list)),
          // No fingerprint (the sources were not readable) leaves the bundle to compute it as the sources do.
          ...(typeof built.fingerprint === 'string'
            ? { CALMOPS_PARSER_FINGERPRINT: JSON.stringify(built.fingerprint) }
            : {}),
        },
        plugins: [await kubernetesClientUsedModulesOnly(at.root), whatwgUrlIsNodeUrl, socksAgentWhenUsed],
        minifyWhitespace: true,
        minifySyntax: true,
      },
      // A new command module is a new entry point: the folder's mtime tells.
      inputs: [COMMANDS_DIR, ...built.inputs],
    };
  },
};

const LOCK_STALE_MS = 120_000;

/**
 * Run `fn` while holding the build lock, so that commands started together (a script, a test run) build once and
 * the others wait for that build. A lock older than any build is left over from a killed process and is taken over.
 * @param {BundleLocation} at
 * @param {() => Promise<void>} fn
 */
async function withBuildLock(at, fn) {
  const lock = join(at.cacheDir, 'cli.lock');
  await mkdir(at.cacheDir, { recursive: true });
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
      const info = await stat(lock).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > LOCK_STALE_MS) await rm(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * The bundled module of command `name`, beside the bundle's entry file.
 * @param {string} entry @param {string} name
 */
export function commandFile(entry, name) {
  return join(dirname(entry), 'commands', `${name}${SCRIPT_EXTENSION}`);
}

/**
 * The bundle's entry file, built first when it is missing or stale and esbuild is installed; without esbuild (a
 * production install) whatever bundle there is. Undefined when there is none and none can be built.
 * @param {{ at?: BundleLocation, onBuild?: () => void }} [options]
 */
export async function cliEntry({ at = cliLocation, onBuild } = {}) {
  if (!(await canBuild(at))) return bundleEntry(at, CLI);
  const fresh = freshEntry(at, CLI);
  if (fresh === undefined) {
    await withBuildLock(at, async () => {
      // Another command may have built it while this one waited.
      if (freshEntry(at, CLI) !== undefined) return;
      onBuild?.();
      await buildBundle(at, CLI);
    });
  }
  return fresh ?? bundleEntry(at, CLI);
}
