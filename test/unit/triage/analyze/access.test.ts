import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { contextFromObjects, getAnalyzer, runAnalyzers } from '../../../../src/triage/analyze/index.js';

const NOW = new Date('2026-04-09T08:00:00Z');
const REFUSAL =
  'User "system:serviceaccount:telemetry:node-inventory" cannot list resource "nodes" in API group "" at the cluster scope';
// klog quotes the error inside err="…", so the API server's quotes come escaped.
const LINE = `E0409 07:58:12.004411       1 reflector.go:158] "Unhandled Error" err="k8s.io/client-go@v0.33.3/tools/cache/reflector.go:285: Failed to watch *v1.Node: failed to list *v1.Node: nodes is forbidden: ${REFUSAL.replaceAll('"', '\\"')}" logger="UnhandledError"`;

const pod: KubeObject = {
  kind: 'Pod',
  metadata: { name: 'node-inventory-7b9c5d6f4-k2v8q', namespace: 'telemetry' },
  spec: { serviceAccountName: 'node-inventory', containers: [{ name: 'inventory' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'inventory', ready: false, restartCount: 4 }] },
} as KubeObject;

const role: KubeObject = {
  kind: 'ClusterRole',
  metadata: { name: 'node-reader' },
  rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }],
} as KubeObject;

const binding: KubeObject = {
  kind: 'ClusterRoleBinding',
  metadata: { name: 'node-inventory' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-reader' },
  subjects: [{ kind: 'ServiceAccount', name: 'node-inventory', namespace: 'metrics' }],
} as KubeObject;

describe('access', () => {
  it("quotes the API server's refusal itself, unescaped and with its scope, not the logger's prefix", () => {
    const ctx = contextFromObjects({
      namespace: 'telemetry',
      now: NOW,
      objects: [pod, role, binding],
      logs: { 'telemetry/node-inventory-7b9c5d6f4-k2v8q/inventory': `${LINE}\n` },
    });
    const [f] = runAnalyzers([getAnalyzer('access')], ctx).filter((x) => x.code === 'RBAC_FORBIDDEN');
    expect(f?.resource).toEqual({ kind: 'ClusterRoleBinding', name: 'node-inventory' });
    expect(f?.evidence[0]).toBe(`node-inventory-7b9c5d6f4-k2v8q: ${REFUSAL}`);
  });
});
