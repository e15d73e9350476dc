import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleTarget, buildBundle, bundleEntry, bundleIsFresh } from '../../../build/bundle.mjs';
import { cliEntry, commandFile } from '../../../build/cli-bundle.mjs';
import { codeCacheFile } from '../../../build/compiled-script.mjs';
import { main } from '../../../src/cli/main.js';
import { parserFingerprint } from '../../../src/cluster/snapshot-cache.js';

/**
 * The bundles of build/bundle.mjs: a directory of modules with one entry per command, rebuilt when a source or a
 * file it was built from changes; and the real command line built from this repository into a cache of its own.
 */

const repository = fileURLToPath(new URL('../../..', import.meta.url));
const codeCacheSuffix = codeCacheFile('').slice(1);
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'calmops-cli-bundle-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

function node(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, NODE_OPTIONS: '', ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exited ${code}: ${err}`))));
  });
}

function capture() {
  const io = {
    out: '',
    err: '',
    env: {},
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}

describe('a bundle of chunks', () => {
  let root: string;
  let at: { root: string; cacheDir: string };
  const target: BundleTarget = {
    name: 'tool',
    layout: 'directory',
    entry: 'main.js',
    builders: [],
    options: async () => ({
      esbuild: { entryPoints: { main: 'src/main.ts', 'commands/hello': 'src/commands/hello.ts' } },
      inputs: ['src/words.txt', 'src/commands'],
    }),
  };
  /** Runs a command of the bundle in a process of its own, as bin/calmops.js does. */
  const run = async (name: string) => {
    const entry = await bundleEntry(at, target);
    if (!entry) throw new Error('no bundle');
    const script = `const { run } = await import(${JSON.stringify(pathToFileURL(entry).href)});
process.stdout.write(await run(${JSON.stringify(name)}));`;
    return node(['--input-type=module', '-e', script], {});
  };

  beforeAll(async () => {
    root = join(scratch, 'tool');
    at = { root, cacheDir: join(root, 'cache') };
    await mkdir(join(root, 'src', 'commands'), { recursive: true });
    await mkdir(join(root, 'node_modules'), { recursive: true });
    await symlink(join(repository, 'node_modules', 'esbuild'), join(root, 'node_modules', 'esbuild'));
    await writeFile(join(root, 'package-lock.json'), '{}\n');
    await writeFile(join(root, 'src', 'words.txt'), 'hello\n');
    // Loads a command by a name known only at run time, as src/cli/main.ts does (vitest, which loads this bundle
    // here, leaves such an import to Node only when told so).
    await writeFile(
      join(root, 'src', 'main.ts'),
      'export async function run(name: string): Promise<string> {\n' +
        "  const specifier = './commands/' + name + '.js';\n" +
        '  return (await import(/* @vite-ignore */ specifier)).greet();\n}\n',
    );
    await writeFile(join(root, 'src', 'commands', 'hello.ts'), "export const greet = () => 'hello';\n");
  });

  it('is built as a directory, and each command is found beside the entry at run time', async () => {
    expect(await bundleEntry(at, target)).toBeUndefined();
    expect(await bundleIsFresh(at, target)).toBe(false);
    await buildBundle(at, target);
    expect(await bundleIsFresh(at, target)).toBe(true);
    expect(await run('hello')).toBe('hello');
    const names = (await readdir(at.cacheDir)).sort();
    expect(names).toHaveLength(2);
    expect(names[1]).toBe('tool.json');
    expect(names[0]).toMatch(/^tool-[0-9a-z]+-\d+$/);
  });

  it('is stale when a file that builds it changes', async () => {
    const builder = join(root, 'build.mjs');
    await writeFile(builder, '// builds the tool\n');
    const earlier = new Date(Date.now() - 60_000);
    await utimes(builder, earlier, earlier);
    const built: BundleTarget = { ...target, builders: [builder] };
    await buildBundle(at, built);
    expect(await bundleIsFresh(at, built)).toBe(true);
    await writeFile(builder, '// builds the tool another way\n');
    expect(await bundleIsFresh(at, built)).toBe(false);
    await buildBundle(at, target);
  });

  it('is stale when a file named by the target changes, or a file is added to a tracked folder', async () => {
    const later = new Date(Date.now() - 60_000);
    await writeFile(join(root, 'src', 'words.txt'), 'hi\n');
    await utimes(join(root, 'src', 'words.txt'), later, later);
    expect(await bundleIsFresh(at, target)).toBe(false);
    await buildBundle(at, target);
    expect(await bundleIsFresh(at, target)).toBe(true);

    await writeFile(join(root, 'src', 'commands', 'bye.ts'), "export const greet = () => 'bye';\n");
    await utimes(join(root, 'src', 'commands'), new Date(), new Date(Date.now() + 1000));
    expect(await bundleIsFresh(at, target)).toBe(false);
  });

  it('keeps the bundle it has when a build fails', async () => {
    await buildBundle(at, target);
    const before = await bundleEntry(at, target);
    const builds = async () => (await readdir(at.cacheDir)).filter((n) => n.startsWith('tool-')).sort();
    const built = await builds();
    await writeFile(join(root, 'src', 'commands', 'hello.ts'), 'export const greet = ;\n');
    await expect(buildBundle(at, target)).rejects.toBeDefined();
    expect(await bundleEntry(at, target)).toBe(before);
    expect(await run('hello')).toBe('hello');
    // Nothing of the failed build is left behind.
    expect(await builds()).toEqual(built);
  });
});

describe('the calmops command line bundle', () => {
  let at: { root: string; cacheDir: string };
  let entry: string | undefined;

  beforeAll(async () => {
    at = { root: repository, cacheDir: join(scratch, 'cache') };
    // Commands started together build once: the second waits for the first's build.
    const [one, two] = await Promise.all([cliEntry({ at }), cliEntry({ at })]);
    expect(one).toBe(two);
    entry = one;
  }, 120_000);

  it('is built once for commands started together, and is fresh afterwards', async () => {
    expect(entry).toBeDefined();
    expect((await readdir(at.cacheDir)).filter((n) => /^cli-/.test(n))).toHaveLength(1);
    expect(await cliEntry({ at })).toBe(entry);
  });

  const command = (name: string) => readFile(commandFile(entry as string, name), 'utf8');

  it('answers as the sources do, with the templates built in', async () => {
    const bundled = (await import(pathToFileURL(entry as string).href)) as { main: typeof main };
    const fromBundle = capture();
    const fromSources = capture();
    expect(await bundled.main(['intents', '--json'], fromBundle)).toBe(0);
    expect(await main(['intents', '--json'], fromSources)).toBe(0);
    expect(fromBundle.out).toBe(fromSources.out);
    expect(JSON.parse(fromBundle.out).length).toBeGreaterThan(5);
    // A title found only in templates/crashloop-analysis.yaml: the bundle carries the parsed template itself.
    expect(await command('intents')).toContain('"title":"Containers that crash and restart"');
  });

  it('runs each command from a file of its own, compiled with a code cache written once a run has succeeded', async () => {
    const names = (await readdir(join(entry as string, '..', 'commands'))).filter((n) => n.endsWith('.cjs')).sort();
    expect(names).toEqual(
      (await readdir(join(repository, 'src', 'cli', 'commands')))
        .filter((n) => n.endsWith('.ts'))
        .map((n) => n.replace(/\.ts$/, '.cjs'))
        .sort(),
    );
    // As bin/calmops.js runs it.
    const built = (file: string) => JSON.stringify(pathToFileURL(join(repository, 'build', file)).href);
    const script = `import { requireCompiled } from ${built('compiled-script.mjs')};
import { commandFile } from ${built('cli-bundle.mjs')};
const entry = ${JSON.stringify(entry)};
const { runCli } = requireCompiled(entry);
await runCli(process.argv.slice(1), async (name) => requireCompiled(commandFile(entry, name)));`;
    const first = await node(['--input-type=module', '-e', script, 'intents', '--json'], {});
    const fromSources = capture();
    expect(await main(['intents', '--json'], fromSources)).toBe(0);
    expect(first).toBe(fromSources.out);
    const cached = (await readdir(join(entry as string, '..', 'commands'))).filter((n) => n.endsWith('.v8cache'));
    expect(cached).toEqual([`intents.cjs.${codeCacheSuffix}`]);
    expect(await node(['--input-type=module', '-e', script, 'intents', '--json'], {})).toBe(first);
  });

  it('is plain ASCII, so each file is read and held as one byte per character', async () => {
    // esbuild escapes non-ASCII text in strings and templates but not in regular expressions: write `\u2026`, not
    // the character itself, in a regular expression literal.
    const names = (await readdir(join(entry as string, '..', 'commands'))).filter((n) => n.endsWith('.cjs'));
    for (const name of ['main.cjs', ...names.map((n) => `commands/${n}`)]) {
      const text = await readFile(join(entry as string, '..', name), 'utf8');
      const at = text.search(/[^\x00-\x7f]/);
      expect(at < 0 ? undefined : `${name}: ${text.slice(Math.max(0, at - 40), at + 10)}`).toBeUndefined();
    }
  });

  it("carries the snapshot parser's fingerprint as the sources compute it, so both find the same cache entries", async () => {
    const fingerprint = parserFingerprint();
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    for (const name of ['triage', 'serve-snapshot']) expect(await command(name)).toContain(`"${fingerprint}"`);
  });

  it('still loads templates from CALMOPS_TEMPLATES_DIR when it is set', async () => {
    const templates = join(scratch, 'templates');
    await mkdir(templates);
    await cp(join(repository, 'templates', 'crashloop-analysis.yaml'), join(templates, 'crashloop-analysis.yaml'));
    const script = `const { main } = await import(${JSON.stringify(pathToFileURL(entry as string).href)});
let out = ''; await main(['intents', '--json'], { stdout: (t) => { out += t; }, stderr: (t) => process.stderr.write(t), env: {} });
process.stdout.write(out);`;
    const stdout = await node(['--input-type=module', '-e', script], { CALMOPS_TEMPLATES_DIR: templates });
    expect((JSON.parse(stdout) as { id: string }[]).map((t) => t.id)).toEqual(['crashloop-analysis']);
  });

  it('is not there to run, and says so, where it was never built and esbuild is not installed', async () => {
    const bare = join(scratch, 'bare');
    await mkdir(bare);
    expect(await cliEntry({ at: { root: bare, cacheDir: join(bare, 'cache') } })).toBeUndefined();
  });
});
