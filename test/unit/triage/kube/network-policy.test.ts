import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects } from '../../../../src/triage/analyze/index.js';
import { policiesDroppingControlPlane } from '../../../../src/triage/kube/network-policy.js';

const NOW = new Date('2026-06-23T11:50:00Z');

const backend = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'injector-0', namespace: 'vault', labels: { app: 'injector' } },
  spec: { containers: [{ name: 'injector', ports: [{ containerPort: 8080 }] }] },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
} as KubeObject;

function policy(name: string, ingress: unknown[], created = '2026-06-23T10:15:00Z'): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace: 'vault', creationTimestamp: created },
    spec: { podSelector: {}, policyTypes: ['Ingress'], ingress },
  } as KubeObject;
}

const dropped = (...policies: KubeObject[]) =>
  policiesDroppingControlPlane(
    contextFromObjects({ namespace: 'ledger', now: NOW, objects: [backend, ...policies], logs: {}, unavailable: [] }),
    [backend],
    new Set([8080]),
  ).map((p) => p.metadata.name);

describe('NetworkPolicies that drop the API server’s calls to a backend', () => {
  it('names an isolating policy whose rules admit only pods and namespaces, newest first', () => {
    const selectors = [{ from: [{ namespaceSelector: { matchLabels: { client: 'true' } } }] }];
    expect(dropped(policy('old', selectors, '2025-01-01T00:00:00Z'), policy('default-deny-ingress', []))).toEqual([
      'default-deny-ingress',
      'old',
    ]);
  });

  it('names none when a rule admits every source or an ipBlock on the backend port', () => {
    expect(dropped(policy('deny', []), policy('allow-all', [{ ports: [{ port: 8080 }] }]))).toEqual([]);
    expect(dropped(policy('cidr', [{ from: [{ ipBlock: { cidr: '10.0.0.0/8' } }] }]))).toEqual([]);
  });

  it('names the policy when the only open rule is on another port', () => {
    expect(dropped(policy('vault-only', [{ ports: [{ port: 8200 }] }]))).toEqual(['vault-only']);
  });

  it('names none when no policy isolates the pods', () => {
    expect(dropped()).toEqual([]);
  });
});
