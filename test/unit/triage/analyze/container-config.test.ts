import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { parseConfigError } from '../../../../src/triage/analyze/container-config.js';
import { makePod, NS, podEvent, run, seriesEvent } from '../../../support/analyzers/units.js';

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
});
