import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { expectedManifests, MANIFESTS } from '../../../cdk/kubernetes/generate-rbac.js';
import { clusterRoleRules, RBAC_NAMES, resourceUses } from '../../../cdk/kubernetes/rbac.js';
import { RESOURCES } from '../../../src/cluster/resources.js';
import { READABLE_KINDS } from '../../../src/cluster/types.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';
import type { TriageTemplate } from '../../../src/triage/templates/template-schema.js';
import { CORE_SCHEMA } from '../../../src/yaml-text.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

interface ManifestDocument {
  kind: string;
  rules?: Rule[];
  roleRef?: { name: string };
  subjects?: unknown;
}

const documents = (text: string) => loadAll(text, null, { schema: CORE_SCHEMA }) as ManifestDocument[];

const committed = (path: string) => readFileSync(path, 'utf8');

describe('committed RBAC manifests', () => {
  it('match what the templates and calmops snapshot read (regenerate: npx tsx cdk/kubernetes/generate-rbac.ts)', () => {
    for (const [path, text] of Object.entries(expectedManifests())) expect(committed(path)).toBe(text);
  });

  const docs = documents(committed(MANIFESTS.reader));
  const role = docs.find((d) => d.kind === 'ClusterRole')!;
  const rules = role.rules!;

  it('grant only reads, and nothing on Secrets, exec, attach, port-forward or proxy', () => {
    for (const rule of rules) {
      expect(rule.verbs.every((v) => ['get', 'list', 'watch'].includes(v))).toBe(true);
      for (const resource of rule.resources) {
        expect(resource).not.toMatch(/^(secrets|\*)$|\/(exec|attach|portforward|proxy)$/);
      }
      expect(rule.apiGroups).not.toContain('*');
    }
    expect(JSON.stringify(role)).not.toContain('nonResourceURLs');
  });

  it('cover every kind the reader may read, in its API group, plus get on pods/log', () => {
    const granted = new Set(rules.flatMap((r) => r.resources.map((res) => `${r.apiGroups[0]}/${res}`)));
    const expected = new Set([
      ...READABLE_KINDS.map((k) => `${RESOURCES[k].group}/${k}`),
      '/pods/log',
      'metrics.k8s.io/nodes',
      'metrics.k8s.io/pods',
    ]);
    expect(granted).toEqual(expected);
    expect(rules.find((r) => r.resources.includes('pods/log'))!.verbs).toEqual(['get']);
    // The Metrics API answers get and list; `kubectl top` and usage in triage need nothing more.
    expect(rules.find((r) => r.apiGroups[0] === 'metrics.k8s.io')).toEqual({
      apiGroups: ['metrics.k8s.io'],
      resources: ['nodes', 'pods'],
      verbs: ['get', 'list'],
    });
  });

  it('bind the role to the service account, and on EKS to the access entry group', () => {
    const binding = docs.find((d) => d.kind === 'ClusterRoleBinding')!;
    expect(binding.roleRef!.name).toBe(RBAC_NAMES.clusterRole);
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: RBAC_NAMES.serviceAccount, namespace: RBAC_NAMES.namespace },
    ]);
    const eks = documents(committed(MANIFESTS.eks));
    expect(eks).toHaveLength(1);
    expect(eks[0]!.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'calmops-readers' },
    ]);
  });
});

describe('deriving rules from templates', () => {
  const templates = loadTemplates().list();

  it('records which templates read each resource', () => {
    const uses = resourceUses(templates);
    const logs = uses.find((u) => u.resource === 'pods/log')!;
    const expected = templates.filter((t) => t.rounds.some((r) => r.reads.some((read) => read.kind === 'logs')));
    expect(logs.templates).toEqual(expected.map((t) => t.id).sort());
    expect(uses.find((u) => u.resource === 'deployments')).toMatchObject({
      templates: ['namespace-sweep', 'workload-rollout'],
      snapshot: true,
    });
    expect(uses.find((u) => u.resource === 'endpointslices')).toMatchObject({ templates: [], snapshot: true });
  });

  it('a template reading a kind changes the derived rules, so the committed file would drift', () => {
    const base = templates[0]!;
    const reading = (kind: string): TriageTemplate => ({
      ...base,
      id: 'probe',
      rounds: [{ name: 'r', reads: [{ ...base.rounds[0]!.reads[0]!, kind: kind as 'pods', forEach: undefined }] }],
    });
    const before = resourceUses(templates).find((u) => u.resource === 'statefulsets')!;
    const after = resourceUses([...templates, reading('statefulsets')]).find((u) => u.resource === 'statefulsets')!;
    expect(before.templates).not.toContain('probe');
    expect(after.templates).toContain('probe');
  });

  it('groups resources by API group and verbs', () => {
    const rules = clusterRoleRules(resourceUses(templates));
    expect(rules.map((r) => r.apiGroups[0])).toEqual([
      '',
      '',
      'acme.cert-manager.io',
      'admissionregistration.k8s.io',
      'apiregistration.k8s.io',
      'apps',
      'autoscaling',
      'batch',
      'cert-manager.io',
      'coordination.k8s.io',
      'discovery.k8s.io',
      'external-secrets.io',
      'gateway.networking.k8s.io',
      'k8s.ovn.org',
      'karpenter.sh',
      'metallb.io',
      'metrics.k8s.io',
      'networking.istio.io',
      'networking.k8s.io',
      'policy',
      'quota.openshift.io',
      'rbac.authorization.k8s.io',
      'route.openshift.io',
      'security.istio.io',
      'security.openshift.io',
      'storage.k8s.io',
    ]);
  });
});
