import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quote } from 'shell-quote';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLEAR_LINE } from '../../../src/cli/text.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { writeKubeconfig } from '../../../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../../../src/snapshot-api/server.js';
import { TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { readYaml as parseYaml } from '../../../src/yaml-text.js';
import { CALMOPS_BIN, type CalmopsRun, collectOutput, runCalmopsBin } from '../../support/calmops-bin.js';
import { pvcScenario } from '../../support/triage-helpers.js';

/**
 * The command line's conventions, kubectl's, checked on the installed command run as a user runs it: a child process
 * through bin/calmops.js, in a pipe, and where it matters on a terminal (a pseudo-terminal made by `script`).
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const fixture = join(root, 'test/fixtures/snapshots/scheduling-failures--insufficient-cpu.yaml');
const dir = mkdtempSync(join(tmpdir(), 'calmops-cli-conventions-'));
const ESC = '\u001b';
const SCRIPT = '/usr/bin/script';

/** The environment of a user with no colour preference and no cluster configured. */
function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', KUBECONFIG: '', HOME: dir, TERM: 'xterm' };
  for (const name of ['FORCE_COLOR', 'NO_COLOR', 'NODE_DISABLE_COLORS', 'CALMOPS_TABLE']) delete env[name];
  return { ...env, ...extra };
}

function calmops(args: string[], env: Record<string, string> = {}): Promise<CalmopsRun> {
  return runCalmopsBin(args, { cwd: dir, env: baseEnv(env) });
}

/** On a terminal: stdout and stderr both go to the pseudo-terminal, and come back merged, as a person sees them. */
function onTerminal(args: string[], env: Record<string, string> = {}): Promise<CalmopsRun> {
  const command = quote([process.execPath, CALMOPS_BIN, ...args]);
  return collectOutput(spawn(SCRIPT, ['-qec', command, '/dev/null'], { cwd: dir, env: baseEnv(env) }));
}

const hasTerminal = existsSync(SCRIPT);

describe('calmops commands and help', () => {
  it('lists every command, doctor and manifest among them', async () => {
    const result = await calmops(['--help']);
    expect(result.code).toBe(0);
    for (const name of ['triage', 'intents', 'snapshot', 'serve-snapshot', 'stats', 'doctor', 'manifest', 'version']) {
      expect(result.stdout).toMatch(new RegExp(`^ {2}${name} +\\S`, 'm'));
    }
  });

  it('`help <command>` prints what `<command> --help` prints, and exits 0', async () => {
    for (const name of ['doctor', 'manifest', 'triage']) {
      const [help, flag] = await Promise.all([calmops(['help', name]), calmops([name, '--help'])]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: calmops ${name}`));
      expect(help.stdout).toBe(flag.stdout);
      expect(help.stderr).toBe('');
    }
  });

  it('`help` with an unknown command is a usage error with a suggestion', async () => {
    const [nosuch, typo] = await Promise.all([calmops(['help', 'nosuch']), calmops(['help', 'doctr'])]);
    expect(nosuch.code).toBe(2);
    expect(nosuch.stderr).toMatch(/^calmops: unknown command "nosuch"\n/);
    expect(nosuch.stdout).toBe('');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown command "doctr"; did you mean "doctor"\?/);
  });

  it('prints the version of package.json with --version and `version`', async () => {
    const [flag, command, json, yaml] = await Promise.all([
      calmops(['--version']),
      calmops(['version']),
      calmops(['version', '-o', 'json']),
      calmops(['version', '--output=yaml']),
    ]);
    expect(flag).toEqual({ code: 0, stdout: `calmops ${pkg.version}\n`, stderr: '' });
    expect(command).toEqual(flag);
    expect(JSON.parse(json.stdout)).toEqual({ version: pkg.version, node: process.version });
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout));
  });
});

describe('calmops on bad input', () => {
  it('answers an unknown command or global flag with what was meant, exit 2', async () => {
    const [command, flag] = await Promise.all([calmops(['tirage']), calmops(['--verison'])]);
    expect(command.code).toBe(2);
    expect(command.stdout).toBe('');
    expect(command.stderr).toMatch(/^calmops: unknown command "tirage"; did you mean "triage"\?\n/);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/^calmops: unknown flag "--verison"; did you mean --version\?\n/);
  });

  const typos: Array<[string[], string]> = [
    [['triage', 'pods pending', '--nmespace', 'shop'], '--namespace'],
    [['intents', '--jsn'], '--json'],
    [['snapshot', '-n', 'shop', '--kubconfig', 'x'], '--kubeconfig'],
    [['serve-snapshot', fixture, '--prot', '1'], '--port'],
    [['stats', '--limt', '5'], '--limit'],
    [['doctor', '--stak', 'x'], '--stack'],
    [['manifest', '--ulr', 'https://example.com/slack/events'], '--url'],
    [['version', '--outptu', 'json'], '--output'],
  ];

  it('answers an unknown flag of every command in its own words, with what was meant, exit 2', async () => {
    const results = await Promise.all(typos.map(([args]) => calmops(args)));
    typos.forEach(([args, meant], i) => {
      const result = results[i] as CalmopsRun;
      const typed = args.find((a) => a.startsWith('--')) as string;
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout, args.join(' ')).toBe('');
      expect(result.stderr, args.join(' ')).toContain(
        `calmops ${args[0]}: unknown flag "${typed}"; did you mean ${meant}?`,
      );
      expect(result.stderr, args.join(' ')).toContain(`Usage: calmops ${args[0]}`);
      expect(result.stderr, args.join(' ')).not.toMatch(/place it|Unknown option/);
    });
  });

  it('exits 2 for every other usage error too, intents among them', async () => {
    const cases: string[][] = [
      ['intents', 'extra'],
      ['intents', '-o'],
      ['manifest'],
      ['doctor', '--clusters', 'a'],
      ['triage', '-n', 'shop'],
      ['snapshot'],
    ];
    const results = await Promise.all(cases.map((args) => calmops(args)));
    cases.forEach((args, i) => {
      expect(results[i]?.code, args.join(' ')).toBe(2);
      expect(results[i]?.stderr, args.join(' ')).toMatch(new RegExp(`^calmops ${args[0]}: `));
    });
    expect(results[0]?.stderr).toContain('unexpected argument "extra": calmops intents takes no positional arguments');
    expect(results[1]?.stderr).toContain('flag -o, --output needs a value');
  });
});

describe('-o json|yaml|text', () => {
  it('prints the same data as JSON and YAML, with --json as -o json', async () => {
    const [json, yaml, alias] = await Promise.all([
      calmops(['intents', '-o', 'json']),
      calmops(['intents', '--output=yaml']),
      calmops(['intents', '--json']),
    ]);
    expect(json.code).toBe(0);
    const list = JSON.parse(json.stdout) as Array<{ id: string }>;
    expect(list.map((i) => i.id)).toContain('pvc-binding');
    expect(parseYaml(yaml.stdout)).toEqual(list);
    expect(alias.stdout).toBe(json.stdout);
  });

  it('prints the triage envelope as YAML', async () => {
    const args = ['triage', 'pods stuck pending in payments', '--snapshot', fixture];
    const [json, yaml] = await Promise.all([calmops([...args, '-o', 'json']), calmops([...args, '-o', 'yaml'])]);
    expect(yaml.code).toBe(0);
    const fromYaml = TriageEnvelopeSchema.parse(parseYaml(yaml.stdout));
    const fromJson = TriageEnvelopeSchema.parse(JSON.parse(json.stdout));
    expect(fromYaml.rootCause).toEqual(fromJson.rootCause);
    expect(fromYaml.routing).toEqual(fromJson.routing);
  });

  it('refuses an unknown format naming the allowed ones, exit 2, for every command that prints results', async () => {
    const cases: Array<[string[], string]> = [
      [['intents', '-o', 'xml'], 'text, json, yaml'],
      [['triage', 'pods pending', '--snapshot', fixture, '-o', 'wide'], 'text, json, yaml'],
      [['stats', '-o', 'jsno'], 'text, json, yaml'],
      [['doctor', '-o', 'table'], 'text, json, yaml'],
      [['serve-snapshot', fixture, '-o', 'xml'], 'text, json, yaml'],
      [['manifest', '--url', 'https://example.com/slack/events', '-o', 'text'], 'yaml, json'],
      [['version', '-o', 'xml'], 'text, json, yaml'],
    ];
    const results = await Promise.all(cases.map(([args]) => calmops(args)));
    cases.forEach(([args, allowed], i) => {
      const format = args.at(-1) as string;
      expect(results[i]?.code, args.join(' ')).toBe(2);
      expect(results[i]?.stdout, args.join(' ')).toBe('');
      expect(results[i]?.stderr, args.join(' ')).toMatch(
        new RegExp(`unknown output format "${format}"(; did you mean "\\w+"\\?)?; -o takes ${allowed}\\n`),
      );
    });
    expect(results[2]?.stderr).toContain('did you mean "json"?');
  });

  it('refuses --json with another -o, and a format word given to snapshot -o as a file name', async () => {
    const [both, snapshot] = await Promise.all([
      calmops(['intents', '--json', '-o', 'yaml']),
      calmops(['snapshot', '-n', 'shop', '-o', 'json']),
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--json is -o json, so it cannot go with -o yaml');
    expect(snapshot.code).toBe(2);
    expect(snapshot.stderr).toContain('-o json: a snapshot is always YAML');
  });

  it('serve-snapshot -o json prints where it serves as one JSON document, and stops on Ctrl-C', async () => {
    const kubeconfig = join(dir, 'served.kubeconfig');
    const child = spawn(
      process.execPath,
      [CALMOPS_BIN, 'serve-snapshot', fixture, '--kubeconfig', kubeconfig, '-o', 'json'],
      {
        cwd: dir,
        env: baseEnv(),
      },
    );
    const done = collectOutput(child);
    let printed = '';
    const banner = await new Promise<{ server: string; kubeconfig: string; namespace: string; objects: number }>(
      (resolve) => {
        child.stdout?.on('data', (d: Buffer) => {
          printed += d.toString();
          try {
            resolve(JSON.parse(printed));
          } catch {
            // Not the whole document yet.
          }
        });
      },
    );
    child.kill('SIGINT');
    const result = await done;
    expect(banner).toMatchObject({ kubeconfig, namespace: 'payments', objects: 16 });
    expect(banner.server).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(banner);
    expect(result.stderr).toBe('Snapshot server stopped.\n');
  });
});

describe('colour and the progress line', () => {
  const args = ['triage', 'pods stuck pending in payments', '--snapshot', fixture];
  const severity = `[${ESC}[31mhigh${ESC}[39m] POD_INSUFFICIENT_CPU`;

  it('in a pipe: no colour and no progress line, unless FORCE_COLOR asks for colour', async () => {
    const [plain, forced, forcedOff] = await Promise.all([
      calmops(args),
      calmops(args, { FORCE_COLOR: '1' }),
      calmops(args, { FORCE_COLOR: '0' }),
    ]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('[high] POD_INSUFFICIENT_CPU');
    expect(plain.stdout).not.toContain(ESC);
    expect(plain.stderr).toBe('');
    expect(forced.stdout).toContain(severity);
    // FORCE_COLOR is about colour: the progress line still needs a terminal.
    expect(forced.stderr).toBe('');
    expect(forcedOff.stdout).toContain('[high] POD_INSUFFICIENT_CPU');
    expect(forcedOff.stdout).not.toContain(ESC);
  });

  it.skipIf(!hasTerminal)(
    'on a terminal: coloured severities, and a progress line rewritten in place, then erased',
    async () => {
      const result = await onTerminal(args);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(severity);
      expect(result.stdout).toContain(`${CLEAR_LINE}calmops triage: reading the cluster (snapshot:`);
      // Erased before the report starts: the report's first line follows the last rewrite directly.
      expect(result.stdout).toMatch(/\r\u001b\[K\u001b\[1mTriage: /);
    },
  );

  it.skipIf(!hasTerminal)('on a terminal with NO_COLOR set: no colour, still the progress line', async () => {
    const result = await onTerminal(args, { NO_COLOR: '1' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('[high] POD_INSUFFICIENT_CPU');
    expect(result.stdout.replaceAll(CLEAR_LINE, '')).not.toContain(ESC);
    expect(result.stdout).toContain(`${CLEAR_LINE}calmops triage: reading`);
  });
});

describe('calmops triage of a namespace that is not there', () => {
  it('in a snapshot: says so and lists the namespaces present, exit 1, never "no fault found"', async () => {
    const [given, named, json] = await Promise.all([
      calmops(['triage', 'scheduling-failures', '-n', 'nosuch', '--snapshot', fixture]),
      calmops(['triage', 'pods pending in paymnts', '--snapshot', fixture]),
      calmops(['triage', 'scheduling-failures', '-n', 'nosuch', '--snapshot', fixture, '-o', 'json']),
    ]);
    expect(given).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'calmops triage: namespace "nosuch" not found in snapshot scheduling-failures--insufficient-cpu.yaml; ' +
        'namespaces present: payments\n',
    });
    expect(named.code).toBe(1);
    expect(named.stderr).toContain('namespace "paymnts" not found in snapshot');
    expect(named.stderr).toContain('(did you mean "payments"?)');
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
  });

  describe('on a cluster', () => {
    const servers: SnapshotServer[] = [];
    const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const objects = [...pvcScenario('payments'), namespace('payments'), namespace('default'), namespace('kube-system')];
    const open = join(dir, 'open.kubeconfig');
    const denied = join(dir, 'denied.kubeconfig');

    beforeAll(async () => {
      const lab = await startSnapshotServer({ objects, port: 0 });
      // An identity that may read what triage reads, but no namespace.
      const restricted = await startSnapshotServer({
        objects,
        port: 0,
        faults: [{ match: { resource: 'namespaces' }, effect: { type: 'status', status: 403 } }],
      });
      servers.push(lab, restricted);
      await writeKubeconfig(open, { server: lab.url, context: 'lab' });
      await writeKubeconfig(denied, { server: restricted.url, context: 'restricted' });
    });
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.close()));
    });

    it('says the namespace is not found when the permitted read finds no such Namespace', async () => {
      const [missing, present] = await Promise.all([
        calmops(['triage', 'pvc-binding', '-n', 'paymnts', '--kubeconfig', open]),
        calmops(['triage', 'pvc-binding', '-n', 'payments', '--kubeconfig', open, '-o', 'json']),
      ]);
      expect(missing).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'calmops triage: namespace "paymnts" not found in cluster lab (did you mean "payments"?); namespaces ' +
          'present: payments, default, kube-system\n',
      });
      expect(present.code).toBe(0);
      expect(JSON.parse(present.stdout).rootCause[0].code).toBe('PVC_NO_DEFAULT_STORAGECLASS');
    });

    it('says it could not confirm when the identity may not read namespaces, and still reports', async () => {
      const result = await calmops(['triage', 'pvc-binding', '-n', 'nosuch', '--kubeconfig', denied]);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(
        /^calmops triage: warning: could not confirm that namespace "nosuch" exists: the identity may not read namespaces/,
      );
      expect(result.stderr).not.toContain('not found');
      expect(result.stdout).toMatch(/^Triage: pvc-binding in nosuch \(restricted\)/);
    });
  });
});
