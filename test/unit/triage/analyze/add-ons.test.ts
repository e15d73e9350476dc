import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';

const ISSUER_NOW = new Date('2026-07-14T09:00:00Z');
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

function analyzeIssuers(namespace: string, objects: KubeObject[]) {
  const ctx = contextFromObjects({ namespace, now: ISSUER_NOW, objects });
  return runAnalyzers([getAnalyzer('add-ons')], ctx).filter((f) => f.code === 'ISSUER_NOT_READY');
}

describe('ClusterIssuers seen from the namespace cert-manager keeps their Secrets in', () => {
  it("names a ClusterIssuer that is not Ready, with cert-manager's reason, in the controller's namespace", () => {
    const [f] = analyzeIssuers('platform-certs', [
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
      analyzeIssuers('platform-certs', [
        controller('platform-certs', '--cluster-resource-namespace=platform-certs'),
        issuer('True'),
      ]),
    ).toEqual([]);
  });

  it('leaves ClusterIssuers to Certificates in a namespace whose Secrets cert-manager does not keep', () => {
    expect(
      analyzeIssuers('platform-certs', [
        controller('platform-certs', '--cluster-resource-namespace=kube-system'),
        issuer('False'),
      ]),
    ).toEqual([]);
    expect(analyzeIssuers('shop', [issuer('False')])).toEqual([]);
  });
});

const POOL_NOW = new Date('2026-06-02T10:00:00Z');

const nodePool = (used: string): KubeObject =>
  ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'burst' },
    spec: { limits: { cpu: '32' } },
    status: { resources: { cpu: used, nodes: '4' } },
  }) as KubeObject;

const karpenterEvent = (namespace: string, pod: string): KubeObject =>
  ({
    kind: 'Event',
    metadata: { name: `${pod}.1`, namespace },
    involvedObject: { kind: 'Pod', name: pod, namespace },
    reason: 'FailedScheduling',
    type: 'Warning',
    source: { component: 'karpenter' },
    message: 'Failed to schedule pod, all available instance types exceed limits for nodepool: "burst"',
    lastTimestamp: '2026-06-02T09:58:00Z',
    count: 9,
  }) as KubeObject;

function analyzePools(objects: KubeObject[]) {
  const ctx = contextFromObjects({ namespace: 'shop', now: POOL_NOW, objects });
  return runAnalyzers([getAnalyzer('add-ons')], ctx).filter((f) => f.code === 'NODEPOOL_LIMIT_REACHED');
}

describe('NodePool limits seen from another namespace', () => {
  it('names the NodePool when pods of another namespace wait on it and its status shows the limit reached', () => {
    const [f] = analyzePools([
      nodePool('32'),
      karpenterEvent('batch', 'renderer-1'),
      karpenterEvent('batch', 'renderer-2'),
    ]);
    expect(f).toMatchObject({ resource: { kind: 'NodePool', name: 'burst' } });
    expect(f?.related).toContainEqual({ kind: 'Pod', name: 'renderer-1', namespace: 'batch' });
    expect(f?.message).toContain('2 pending pod(s)');
  });

  it('stays quiet when the NodePool has room now, whatever older pods of another namespace said', () => {
    expect(analyzePools([nodePool('20'), karpenterEvent('batch', 'renderer-1')])).toEqual([]);
  });
});
