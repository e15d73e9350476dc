import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_SNAPSHOT } from '../../../../local/demo/index.js';
import {
  banner,
  clusterSource,
  policyClusterNames,
  policyFrom,
  type RunningCalmops,
  StartError,
} from '../../../../local/start.js';

describe('npm start configuration', () => {
  it('reads a real cluster from KUBECONFIG (its first file), else CALMOPS_SNAPSHOT, else the demo', () => {
    expect(clusterSource({ KUBECONFIG: '/k/a.yaml:/k/b.yaml', CALMOPS_SNAPSHOT: 'x.yaml' })).toEqual({
      kind: 'kubeconfig',
      file: '/k/a.yaml',
    });
    expect(clusterSource({ CALMOPS_SNAPSHOT: 'incident.yaml' })).toEqual({
      kind: 'snapshot',
      file: resolve('incident.yaml'),
    });
    expect(clusterSource({ KUBECONFIG: ' ', CALMOPS_SNAPSHOT: '' })).toEqual({ kind: 'demo', file: DEMO_SNAPSHOT });
  });

  it('prints one block: the sandbox URL, the namespaces, and how to use a real cluster', () => {
    const running = {
      mode: 'sandbox',
      origin: 'http://127.0.0.1:3000',
      sandboxUrl: 'http://127.0.0.1:3000/sandbox/',
      cluster: { kind: 'demo', file: DEMO_SNAPSHOT },
      namespaces: [
        { namespace: 'ml-team', problem: 'a PVC that never binds', try: '/triage pvc stuck pending in ml-team' },
        { namespace: 'wiki', problem: 'healthy', try: '/triage route returns 503 in wiki' },
      ],
    } as unknown as RunningCalmops;
    const text = banner(running);
    expect(text.split('\n')[0]).toBe('calmops is running: open http://127.0.0.1:3000/sandbox/');
    expect(text).toContain('  ml-team  a PVC that never binds  /triage pvc stuck pending in ml-team');
    expect(text).toContain('  wiki     healthy                 /triage route returns 503 in wiki');
    expect(text).toContain('KUBECONFIG=');
    expect(text).toContain('http://127.0.0.1:3000/healthz');
    const live = banner({ ...running, cluster: { kind: 'kubeconfig', file: '/k/a.yaml' }, namespaces: [] });
    expect(live).toContain('Reading your cluster (/k/a.yaml).');
    expect(live).not.toContain('KUBECONFIG=');
  });

  it('reads your channel policy from CALMOPS_POLICY or CALMOPS_POLICY_JSON, and stops on a mistake', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'calmops-policy-'));
    try {
      expect(await policyFrom({})).toBeUndefined();
      const file = join(dir, 'policy.yaml');
      await writeFile(file, 'defaults:\n  cluster: shared-dev\n  approverGroup: SAPPROVERS\n  seniorGroup: SSENIORS\n');
      const fromFile = await policyFrom({ CALMOPS_POLICY: file });
      expect(fromFile).toEqual({
        defaults: { cluster: 'shared-dev', approverGroup: 'SAPPROVERS', seniorGroup: 'SSENIORS' },
      });
      // The inline form wins, as it does in the functions.
      const inline = JSON.stringify({
        channels: { CINCIDENTS: { cluster: 'prod-eu', approverGroup: 'SAPPROVERS', seniorGroup: 'SSENIORS' } },
      });
      expect(await policyFrom({ CALMOPS_POLICY: file, CALMOPS_POLICY_JSON: inline })).toEqual(JSON.parse(inline));

      await expect(policyFrom({ CALMOPS_POLICY: join(dir, 'missing.yaml') })).rejects.toThrow(
        /cannot read CALMOPS_POLICY .*missing\.yaml/,
      );
      await writeFile(file, 'defaults:\n  aproverGroup: SAPPROVERS\n');
      const typo = await policyFrom({ CALMOPS_POLICY: file }).catch((e: unknown) => e);
      expect(typo).toBeInstanceOf(StartError);
      expect((typo as Error).message).toContain('aproverGroup');
      await writeFile(file, 'defaults: [unclosed\n');
      await expect(policyFrom({ CALMOPS_POLICY: file })).rejects.toThrow(/not valid YAML or JSON/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('serves every cluster name a policy uses from the one cluster it reads', () => {
    expect(
      policyClusterNames({
        defaults: { cluster: 'shared-dev' },
        channels: { C1: { cluster: 'prod-eu' }, C2: { cluster: 'shared-dev' }, C3: { approverGroup: 'S1' } },
      }),
    ).toEqual(['prod-eu', 'shared-dev']);
    expect(policyClusterNames({ defaults: { cluster: 'default' } })).toEqual([]);
    expect(policyClusterNames(undefined)).toEqual([]);
  });
});
