import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKubeconfig } from '../../../src/snapshot-api/kubeconfig.js';
import type { SnapshotServer } from '../../../src/snapshot-api/server.js';
import { readYaml } from '../../../src/yaml-text.js';
import { kubectlInstructions } from '../../prerequisites.mjs';
import { startDemoServer } from '../../support/kube-demo.js';

const run = promisify(execFile);
const kubectlFound = !spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).error;
const title = kubectlFound
  ? 'kubectl against the snapshot API server'
  : `kubectl against the snapshot API server (skipped: kubectl is not on PATH; ${kubectlInstructions({ root: false })})`;

describe.skipIf(!kubectlFound)(title, () => {
  let server: SnapshotServer;
  let dir: string;

  beforeAll(async () => {
    server = await startDemoServer();
    dir = await mkdtemp(join(tmpdir(), 'calmops-kubectl-'));
    await writeKubeconfig(join(dir, 'kubeconfig'), { server: server.url, namespace: 'shop' });
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(
        'kubectl',
        [
          '--kubeconfig',
          join(dir, 'kubeconfig'),
          '--cache-dir',
          join(dir, 'cache'),
          '--request-timeout',
          '10s',
          ...args,
        ],
        { env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 30_000 },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  it('get pods prints the usual columns for the context namespace', async () => {
    const { code, stdout, stderr } = await kubectl('get', 'pods');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines[0]?.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    expect(lines[1]?.split(/\s{2,}/)).toEqual([
      'checkout-6f5b9c7d4-x2k9p',
      '0/1',
      'CrashLoopBackOff',
      '6 (5m ago)',
      '45m',
    ]);
    expect(lines[2]).toMatch(/^web-5d8f7b6c9-q7x2m\s+2\/2\s+Running\s+0\s+26h$/);
  });

  it('get pods -n X -o yaml prints the objects as stored', async () => {
    const { code, stdout } = await kubectl('get', 'pods', '-n', 'payments', '-o', 'yaml');
    expect(code).toBe(0);
    const list = readYaml(stdout) as { kind: string; items: unknown[] };
    expect(list.kind).toBe('List');
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({
      kind: 'Pod',
      metadata: { name: 'ledger-0', namespace: 'payments' },
      status: { phase: 'Pending', conditions: [{ reason: 'Unschedulable' }] },
    });
  });

  it('get across all namespaces and cluster-scoped kinds', async () => {
    const pods = await kubectl('get', 'pods', '-A', '-o', 'wide');
    expect(pods.stdout).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE/);
    expect(pods.stdout).toMatch(/payments\s+ledger-0\s+0\/1\s+Pending/);
    const nodes = await kubectl('get', 'nodes');
    expect(nodes.stdout).toMatch(/worker-2\s+NotReady,SchedulingDisabled\s+worker\s+24d\s+v1\.29\.4/);
    const sc = await kubectl('get', 'storageclass');
    expect(sc.stdout).toMatch(/standard \(default\)\s+ebs\.csi\.aws\.com\s+Delete\s+WaitForFirstConsumer\s+true/);
  });

  it('describe pod shows the container state and its events', async () => {
    const { code, stdout } = await kubectl('describe', 'pod', 'checkout-6f5b9c7d4-x2k9p');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Name:\s+checkout-6f5b9c7d4-x2k9p$/m);
    expect(stdout).toMatch(/Reason:\s+CrashLoopBackOff/);
    expect(stdout).toMatch(/Exit Code:\s+1/);
    expect(stdout).toMatch(/Controlled By:\s+ReplicaSet\/checkout-6f5b9c7d4/);
    expect(stdout).toMatch(/Warning\s+BackOff\s+.*\(x27 over/);
    // Only this pod's events: describe asks with an involvedObject field selector.
    expect(stdout).not.toContain('Started container web');
  });

  it('logs, with --previous, -c and --tail', async () => {
    const previous = await kubectl('logs', 'checkout-6f5b9c7d4-x2k9p', '--previous');
    expect(previous.stdout).toContain('FATAL: required environment variable PAYMENTS_API_KEY is not set');
    const sidecar = await kubectl('logs', 'web-5d8f7b6c9-q7x2m', '-c', 'metrics');
    expect(sidecar.stdout).toContain('Starting StatsD');
    const tail = await kubectl('logs', 'web-5d8f7b6c9-q7x2m', '-c', 'web', '--tail=1');
    expect(tail.stdout).toBe('2024-05-14T10:05:00Z GET / 200\n');
  });

  it('get events --field-selector filters on the server', async () => {
    const { code, stdout } = await kubectl('get', 'events', '-A', '--field-selector', 'type=Warning,reason!=BackOff');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^NAMESPACE\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    expect(stdout).toMatch(/payments\s+0s\s+Warning\s+ProvisioningFailed\s+persistentvolumeclaim\/ledger-data/);
    expect(stdout).toContain('FailedScheduling');
    expect(stdout).not.toContain('BackOff ');
    const bad = await kubectl('get', 'events', '--field-selector', 'color=red');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('field label not supported: color');
  });

  it('get routes.route.openshift.io prints the OpenShift columns', async () => {
    const { code, stdout } = await kubectl('get', 'routes.route.openshift.io');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^NAME\s+HOST\/PORT\s+PATH\s+SERVICES\s+PORT\s+TERMINATION\s+WILDCARD/);
    expect(stdout).toMatch(/checkout\s+checkout-shop\.apps\.example\.com\s+checkout\s+http\s+edge\/Redirect\s+None/);
  });

  it('delete pod is refused by the server', async () => {
    const { code, stderr } = await kubectl('delete', 'pod', 'web-5d8f7b6c9-q7x2m', '--wait=false');
    expect(code).not.toBe(0);
    expect(stderr).toContain('Error from server (MethodNotAllowed)');
    expect((await kubectl('get', 'pod', 'web-5d8f7b6c9-q7x2m')).code).toBe(0);
  });

  it('a missing object reads as NotFound', async () => {
    const { code, stderr } = await kubectl('get', 'pod', 'ghost');
    expect(code).not.toBe(0);
    expect(stderr).toContain('Error from server (NotFound): pods "ghost" not found');
  });
});
