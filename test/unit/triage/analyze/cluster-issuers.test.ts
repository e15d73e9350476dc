import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';

const NOW = new Date('2026-07-14T09:00:00Z');
const MESSAGE = 'Error getting keypair for CA issuer: secrets "corp-root-ca" not found';

const controller = (namespace: string, flag: string): KubeObject =>
  ({
    kind: 'Pod',
    metadata: {
      name: 'cert-manager-7d9f8c6b5-q2x7m',
      namespace,
      labels: { 'app.kubernetes.io/component': 'controller' },
    },
    spec: { containers: [{ name: 'cert-manager-controller', args: ['--v=2', flag] }] },
    status: { phase: 'Running' },
  }) as KubeObject;

const issuer = (status: 'True' | 'False'): KubeObject =>
  ({
    apiVersion: 'cert-manager.io/v1',
    kind: 'ClusterIssuer',
    metadata: { name: 'corp-ca' },
    spec: { ca: { secretName: 'corp-root-ca' } },
    status: {
      conditions: [
        status === 'True'
          ? { type: 'Ready', status, reason: 'KeyPairVerified', message: 'Signing CA verified' }
          : { type: 'Ready', status, reason: 'ErrGetKeyPair', message: MESSAGE },
      ],
    },
  }) as KubeObject;

function analyze(namespace: string, objects: KubeObject[]) {
  const ctx = contextFromObjects({ namespace, now: NOW, objects });
  return runAnalyzers([getAnalyzer('add-ons')], ctx).filter((f) => f.code === 'ISSUER_NOT_READY');
}

describe('ClusterIssuers seen from the namespace cert-manager keeps their Secrets in', () => {
  it("names a ClusterIssuer that is not Ready, with cert-manager's reason, in the controller's namespace", () => {
    const [f] = analyze('platform-certs', [
      controller('platform-certs', '--cluster-resource-namespace=$(POD_NAMESPACE)'),
      issuer('False'),
    ]);
    expect(f).toMatchObject({ resource: { kind: 'ClusterIssuer', name: 'corp-ca' } });
    expect(f?.evidence.join('\n')).toContain(MESSAGE);
    expect(f?.evidence).toContain('spec.ca.secretName corp-root-ca');
    expect(f?.change).toContain(MESSAGE);
  });

  it('says nothing of a Ready ClusterIssuer', () => {
    expect(
      analyze('platform-certs', [
        controller('platform-certs', '--cluster-resource-namespace=platform-certs'),
        issuer('True'),
      ]),
    ).toEqual([]);
  });

  it('leaves ClusterIssuers to Certificates in a namespace whose Secrets cert-manager does not keep', () => {
    expect(
      analyze('platform-certs', [
        controller('platform-certs', '--cluster-resource-namespace=kube-system'),
        issuer('False'),
      ]),
    ).toEqual([]);
    expect(analyze('shop', [issuer('False')])).toEqual([]);
  });
});
