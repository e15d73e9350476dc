import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSnapshotFiles } from '../../../src/cluster/snapshot.js';
import { writeKubeconfig } from '../../../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../../../src/snapshot-api/server.js';
import { TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { type McpSession, startMcp, textOf } from '../../support/mcp-client.js';

/**
 * `calmops mcp` as a user runs it against a cluster: a kubeconfig naming an API server (the snapshot API server
 * serving the demo cluster), the namespaces taken from a channel policy. What its read tool answers is held to what
 * kubectl prints against the same server.
 */

const DEMO = new URL('../../../local/demo/demo-cluster.yaml', import.meta.url).pathname;
const run = promisify(execFile);
const kubectlFound = !spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).error;

let server: SnapshotServer;
let dir: string;
let kubeconfig: string;
let mcp: McpSession;

beforeAll(async () => {
  const { objects, logs, taken } = await loadSnapshotFiles(DEMO);
  server = await startSnapshotServer({ objects, logs, ...(taken ? { now: taken } : {}) });
  dir = await mkdtemp(join(tmpdir(), 'calmops-mcp-kube-'));
  kubeconfig = join(dir, 'kubeconfig');
  await writeKubeconfig(kubeconfig, { server: server.url });
  const policy = join(dir, 'policy.yaml');
  await writeFile(
    policy,
    [
      'defaults:',
      '  cluster: lab',
      '  approverGroup: S0APPROVERS',
      '  seniorGroup: S0SENIORS',
      '  allowedNamespaces: [payments]',
      'channels:',
      '  C0STORAGE01:',
      '    allowedNamespaces: [ml-team, orders]',
      '',
    ].join('\n'),
  );
  mcp = await startMcp(['--kubeconfig', kubeconfig, '--policy', policy, '--channel', 'C0STORAGE01'], { cwd: dir });
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args]);
  return stdout;
}

describe('calmops mcp with a kubeconfig and a channel policy', () => {
  it("triages the storage fault the words describe, in the channel policy's namespaces", async () => {
    const result = await mcp.call('triage', { text: 'the training job waits for its volume in ml-team' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const envelope = TriageEnvelopeSchema.parse(result.structuredContent);
    expect(envelope.routing).toMatchObject({ namespace: 'ml-team', intent: 'pvc-binding' });
    expect(envelope.rootCause[0]?.code).toMatch(/^PVC_/);
    expect(textOf(result)).toContain(`Root cause: ${envelope.rootCause[0]?.code}`);
  });

  it("keeps to the channel's list: the defaults' namespace is not in it", async () => {
    const result = await mcp.call('read', { command: 'kubectl get pods -n payments' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('it reads namespaces ml-team, orders,');
  });

  it.skipIf(!kubectlFound)('lists the objects kubectl lists against the same API server', async () => {
    for (const [command, kind] of [
      ['kubectl get pvc -n ml-team', 'persistentvolumeclaims'],
      ['kubectl get pods -n orders', 'pods'],
      ['kubectl get storageclasses', 'storageclasses'],
    ] as const) {
      const result = await mcp.call('read', { command });
      expect(result.isError, textOf(result)).toBeFalsy();
      const reply = result.structuredContent as { lines: string[] };
      const namespace = /-n (\S+)/.exec(command)?.[1];
      const names = (await kubectl('get', kind, ...(namespace ? ['-n', namespace] : []), '-o', 'name'))
        .trim()
        .split('\n')
        .map((line) => line.slice(line.indexOf('/') + 1));
      // The same table kubectl prints: its header, then one row per object kubectl lists.
      const printed = (await kubectl(...command.split(' ').slice(1))).trimEnd().split('\n');
      expect(reply.lines[0], command).toBe(printed[0]);
      expect(
        reply.lines
          .slice(1)
          .map((line) => line.split(' ')[0])
          .sort(),
        command,
      ).toEqual(names.sort());
    }
  });
});
