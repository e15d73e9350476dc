import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { parseConfigError } from '../../../../src/triage/analyze/container-config.js';
import { deployment, makePod, NS, podEvent, replicaSet, run, seriesEvent } from '../../../support/analyzers/units.js';

describe('log and message classifiers', () => {
  it('names the missing ConfigMap or Secret and key', () => {
    expect(parseConfigError("couldn't find key LOG_LEVEL in ConfigMap billing/billing-config")).toEqual({
      kind: 'ConfigMap',
      name: 'billing-config',
      key: 'LOG_LEVEL',
    });
    expect(parseConfigError('secret "db-creds" not found')).toEqual({ kind: 'Secret', name: 'db-creds' });
  });
});

describe('container-config names what must change', () => {
  const worker = (name: string) =>
    makePod(name, {
      owner: { kind: 'ReplicaSet', name: 'billing-9c7d5' },
      containers: [
        {
          name: 'worker',
          image: 'r/w:2',
          env: [{ name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'stripe', key: 'API_KEY' } } }],
        },
      ],
      statuses: [
        {
          name: 'worker',
          ready: false,
          restartCount: 0,
          state: {
            waiting: {
              reason: 'CreateContainerConfigError',
              message: "couldn't find key API_KEY in Secret demo/stripe",
            },
          },
        },
      ],
    });

  it('names the controller that writes the Secret missing a key, since the Secret is overwritten on its next sync', () => {
    for (const written of [
      podEvent('stripe', 'Updated', 'Updated Secret', 12, { kind: 'ExternalSecret', type: 'Normal' }),
      seriesEvent('ExternalSecret', 'stripe', 'Updated', 'Updated Secret', 12),
    ]) {
      const [f] = run(['container-config'], [worker('billing-9c7d5-4wsw6'), written]);
      expect(f?.owner).toEqual({ kind: 'ExternalSecret', name: 'stripe', namespace: NS });
      expect(f?.related).toContainEqual({ kind: 'Secret', name: 'stripe', namespace: NS });
      expect(f?.message).toContain('key API_KEY is missing from Secret stripe (written by ExternalSecret stripe)');
    }
  });

  it('makes the ConfigMap missing a key the owner and shows the keys it has', () => {
    const pod = makePod('search-1', {
      containers: [
        {
          name: 'api',
          image: 'r/s:1',
          env: [{ name: 'URL', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'URL' } } }],
        },
      ],
      statuses: [
        {
          name: 'api',
          ready: false,
          restartCount: 0,
          state: {
            waiting: { reason: 'CreateContainerConfigError', message: "couldn't find key URL in ConfigMap demo/cfg" },
          },
        },
      ],
    });
    const cfg: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg', namespace: NS },
      data: { ES_URL: 'x' },
    };
    const [f] = run(['container-config'], [pod, cfg]);
    expect(f?.owner).toEqual({ kind: 'ConfigMap', name: 'cfg', namespace: NS });
    expect(f?.evidence).toContain('ConfigMap cfg has keys: ES_URL (no URL)');
  });

  describe('a key the newest revision is the first to ask for', () => {
    const asks = [{ name: 'CARRIER_URL', valueFrom: { configMapKeyRef: { name: 'planner', key: 'CARRIER_URL' } } }];
    const container = (env: unknown[]) => ({ name: 'planner', image: 'r/p:2', env });
    const cfg: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'planner', namespace: NS },
      data: { MODE: 'wave' },
    };
    const pod = makePod('planner-8tm-x', {
      owner: { kind: 'ReplicaSet', name: 'planner-8tm' },
      containers: [container(asks)],
      statuses: [
        {
          name: 'planner',
          ready: false,
          restartCount: 0,
          state: {
            waiting: {
              reason: 'CreateContainerConfigError',
              message: "couldn't find key CARRIER_URL in ConfigMap demo/planner",
            },
          },
        },
      ],
    });
    const current = replicaSet('planner-8tm', 'planner', 3, 2, 0, { containers: [container(asks)] });

    it('names the Deployment whose rollout added the reference, and adding the key as the alternative', () => {
      const before = replicaSet('planner-5c2', 'planner', 2, 0, 0, { containers: [container([])] });
      const [f] = run(['container-config'], [pod, cfg, current, before, deployment('planner', 3, 2, 0)]);
      expect(f?.owner).toEqual({ kind: 'Deployment', name: 'planner', namespace: NS });
      expect(f?.alternatives).toEqual([
        {
          resource: { kind: 'ConfigMap', name: 'planner', namespace: NS },
          change: 'add key CARRIER_URL to ConfigMap planner',
        },
      ]);
      expect(f?.evidence.join('\n')).toContain(
        'the revision before it (ReplicaSet planner-5c2, revision 2) ran container planner without it',
      );
    });

    it('keeps the ConfigMap as the owner when the revision before read the same key, or none was read', () => {
      const before = replicaSet('planner-5c2', 'planner', 2, 0, 0, { containers: [container(asks)] });
      const [same] = run(['container-config'], [pod, cfg, current, before, deployment('planner', 3, 2, 0)]);
      expect(same?.owner).toEqual({ kind: 'ConfigMap', name: 'planner', namespace: NS });
      const [unread] = run(['container-config'], [pod, cfg, current, deployment('planner', 3, 2, 0)]);
      expect(unread?.owner).toEqual({ kind: 'ConfigMap', name: 'planner', namespace: NS });
    });
  });
});
