import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects } from '../../../../src/triage/analyze/index.js';
import { webhookBehind } from '../../../../src/triage/kube/admission.js';

const NOW = new Date('2026-09-03T12:00:00Z');
const CALL =
  'Error creating: Internal error occurred: failed calling webhook "vdeploy.policy.example.io": failed to call webhook: Post "https://policy-webhook.policy-system.svc:443/validate?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority';

const config: KubeObject = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: {
    name: 'policy-validation',
    annotations: { 'cert-manager.io/inject-ca-from': 'policy-system/policy-serving-cert' },
  },
  webhooks: [
    {
      name: 'vdeploy.policy.example.io',
      failurePolicy: 'Fail',
      clientConfig: { service: { name: 'policy-webhook', namespace: 'policy-system', port: 443 } },
    },
  ],
} as KubeObject;

const injector = (ready: boolean): KubeObject =>
  ({
    kind: 'Pod',
    metadata: {
      name: 'cert-manager-cainjector-5c8d7f9b6-h4k2p',
      namespace: 'cert-manager',
      labels: { 'app.kubernetes.io/component': 'cainjector', 'pod-template-hash': '5c8d7f9b6' },
      ownerReferences: [{ kind: 'ReplicaSet', name: 'cert-manager-cainjector-5c8d7f9b6', controller: true }],
    },
    spec: { containers: [{ name: 'cert-manager-cainjector', resources: { limits: { memory: '96Mi' } } }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: [
        {
          name: 'cert-manager-cainjector',
          ready,
          restartCount: ready ? 0 : 57,
          ...(ready
            ? { state: { running: {} } }
            : {
                state: { waiting: { reason: 'CrashLoopBackOff' } },
                lastState: { terminated: { reason: 'OOMKilled', exitCode: 137 } },
              }),
        },
      ],
    },
  }) as KubeObject;

const replicaSet: KubeObject = {
  kind: 'ReplicaSet',
  metadata: {
    name: 'cert-manager-cainjector-5c8d7f9b6',
    namespace: 'cert-manager',
    ownerReferences: [{ kind: 'Deployment', name: 'cert-manager-cainjector', controller: true }],
  },
} as KubeObject;

function behind(objects: KubeObject[], message = CALL) {
  return webhookBehind(contextFromObjects({ namespace: 'orders', now: NOW, objects }), message);
}

describe('a webhook whose caBundle cert-manager injects', () => {
  it("names the OOM-killed cainjector's Deployment when the call fails on an unknown authority", () => {
    const c = behind([config, injector(false), replicaSet]);
    expect(c?.owner).toEqual({ kind: 'Deployment', name: 'cert-manager-cainjector', namespace: 'cert-manager' });
    expect(c?.change).toContain('raise the memory limit');
    expect(c?.change).toContain('96Mi');
    expect(c?.evidence.join('\n')).toContain('policy-system/policy-serving-cert');
    expect(c?.evidence.join('\n')).toContain('OOMKilled');
  });

  it('keeps to the backend when the cainjector runs, or none was read, or the error is not an unknown authority', () => {
    expect(behind([config, injector(true), replicaSet])?.owner.name).not.toBe('cert-manager-cainjector');
    expect(behind([config])?.owner.name).not.toBe('cert-manager-cainjector');
    const refused = CALL.replace(
      'tls: failed to verify certificate: x509: certificate signed by unknown authority',
      'dial tcp 10.0.3.4:443: connect: connection refused',
    );
    expect(behind([config, injector(false), replicaSet], refused)?.owner.name).not.toBe('cert-manager-cainjector');
  });
});
