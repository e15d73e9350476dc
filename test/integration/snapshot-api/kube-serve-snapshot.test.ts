import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/commands/serve-snapshot.js';
import type { CliIo } from '../../../src/cli/io.js';
import { readYaml } from '../../../src/yaml-text.js';
import { DEMO_SNAPSHOT } from '../../support/kube-demo.js';

/** The fields of the written kubeconfig these tests look at. */
interface Kubeconfig {
  clusters: { cluster: { server: string; 'insecure-skip-tls-verify'?: boolean } }[];
  contexts: { context: { namespace?: string } }[];
}

async function readKubeconfig(file: string): Promise<Kubeconfig> {
  return readYaml(await readFile(file, 'utf8')) as Kubeconfig;
}

interface Captured {
  io: CliIo;
  out: () => string;
  err: () => string;
  /** Resolves once the command has printed its "Press Ctrl-C" line: it is serving. */
  serving: Promise<void>;
  interrupt: () => void;
}

function capture(): Captured {
  let out = '';
  let err = '';
  let interrupt = () => {};
  const interrupted = new Promise<void>((resolve) => {
    interrupt = resolve;
  });
  let announced = () => {};
  const serving = new Promise<void>((resolve) => {
    announced = resolve;
  });
  const stdout = (text: string) => {
    out += text;
    if (out.includes('Press Ctrl-C')) announced();
  };
  return {
    io: { stdout, stderr: (t) => (err += t), env: {}, interrupted },
    out: () => out,
    err: () => err,
    serving,
    interrupt: () => interrupt(),
  };
}

/** Waits until the command serves; a command that ends first fails the test with what it printed. */
async function untilServing(cli: Captured, exit: Promise<number>): Promise<void> {
  let served = false;
  const ended = exit.then((code) => {
    if (!served) throw new Error(`serve-snapshot exited ${code} before serving:\n${cli.out()}${cli.err()}`);
  });
  await Promise.race([cli.serving, ended]);
  served = true;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'calmops-serve-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('calmops serve-snapshot', () => {
  it('serves the snapshot, writes a kubeconfig and stops on interrupt', async () => {
    const cli = capture();
    const kubeconfig = join(dir, 'nested', 'snap.kubeconfig');
    const exit = run([DEMO_SNAPSHOT, '--kubeconfig', kubeconfig], cli.io);
    await untilServing(cli, exit);

    expect(cli.out()).toMatch(/^Serving 26 objects from .*demo\.yaml at http:\/\/127\.0\.0\.1:\d+ \(read-only\)$/m);
    expect(cli.out()).toMatch(/^Logs: 4 container logs from .*demo\.logs\.json$/m);
    expect(cli.out()).toContain(`export KUBECONFIG=${kubeconfig}`);
    const config = await readKubeconfig(kubeconfig);
    expect(config.contexts[0]!.context.namespace).toBe('shop');
    expect(config.clusters[0]!.cluster['insecure-skip-tls-verify']).toBe(true);
    expect((await stat(kubeconfig)).mode & 0o077).toBe(0);

    const url: string = config.clusters[0]!.cluster.server;
    const pods = await (await fetch(`${url}/api/v1/namespaces/shop/pods`)).json();
    expect(pods.items).toHaveLength(2);

    cli.interrupt();
    expect(await exit).toBe(0);
    await expect(fetch(`${url}/version`)).rejects.toThrow();
    expect(cli.err()).toBe('');
  });

  it('honours --logs, --port, --namespace and injected latency', async () => {
    const logs = join(dir, 'other-logs.json');
    await writeFile(logs, JSON.stringify({ 'shop/web-5d8f7b6c9-q7x2m/web': 'hello\n' }));
    const cli = capture();
    const kubeconfig = join(dir, 'b.kubeconfig');
    const exit = run(
      [DEMO_SNAPSHOT, '--logs', logs, '--kubeconfig', kubeconfig, '-n', 'payments', '--latency', '5', '--port', '0'],
      cli.io,
    );
    await untilServing(cli, exit);
    expect(cli.out()).toContain('Logs: 1 container logs from');
    expect(cli.out()).toContain('Injected: 5 ms latency');
    const config = await readKubeconfig(kubeconfig);
    expect(config.contexts[0]!.context.namespace).toBe('payments');
    const url: string = config.clusters[0]!.cluster.server;
    expect(await (await fetch(`${url}/api/v1/namespaces/shop/pods/web-5d8f7b6c9-q7x2m/log?container=web`)).text()).toBe(
      'hello\n',
    );
    cli.interrupt();
    expect(await exit).toBe(0);
  });

  it.each([
    [[], 'missing snapshot FILE'],
    [['/nonexistent/snap.yaml'], 'cannot read snapshot file /nonexistent/snap.yaml: no such file'],
    [[DEMO_SNAPSHOT, '--port', 'http'], '--port: expected a whole number, got "http"'],
    [[DEMO_SNAPSHOT, '--port', '70000'], '--port: must be between 0 and 65535, got 70000'],
    [[DEMO_SNAPSHOT, '--fault-rate', '2'], '--fault-rate: expected a number between 0 and 1, got "2"'],
    [[DEMO_SNAPSHOT, '--now', 'yesterday'], '--now: not an ISO time: yesterday'],
    [[DEMO_SNAPSHOT, '--bogus'], 'unknown flag "--bogus"'],
    [[DEMO_SNAPSHOT, '--logs', '/nonexistent/logs.json'], 'cannot read logs file /nonexistent/logs.json'],
  ])('rejects %j with exit 2', async (args, message) => {
    const cli = capture();
    expect(await run(args, cli.io)).toBe(2);
    expect(cli.err()).toContain(message);
    expect(cli.out()).toBe('');
  });

  it('rejects a file that is not a snapshot', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'kind: Pod\nmetadata: [\n');
    const cli = capture();
    expect(await run([bad], cli.io)).toBe(2);
    expect(cli.err()).toMatch(/bad\.yaml: document 1 is not valid YAML/);
  });

  it('reports a port already in use', async () => {
    const first = capture();
    const kubeconfig = join(dir, 'c.kubeconfig');
    const exit = run([DEMO_SNAPSHOT, '--kubeconfig', kubeconfig], first.io);
    await untilServing(first, exit);
    const port = new URL((await readKubeconfig(kubeconfig)).clusters[0]!.cluster.server).port;
    const second = capture();
    expect(await run([DEMO_SNAPSHOT, '--port', port, '--kubeconfig', join(dir, 'd.kubeconfig')], second.io)).toBe(2);
    expect(second.err()).toContain('cannot listen');
    first.interrupt();
    expect(await exit).toBe(0);
  });

  it('prints usage with --help', async () => {
    const cli = capture();
    expect(await run(['--help'], cli.io)).toBe(0);
    expect(cli.out()).toContain('Usage: calmops serve-snapshot FILE');
  });
});
