import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAlertmanagerBody } from '../../../src/alerts/alertmanager.js';
import type { AlertGroup } from '../../../src/alerts/group.js';
import { alertIntents, mapAlertGroup } from '../../../src/alerts/map.js';
import { SWEEP_INTENT } from '../../../src/triage/route/routing.js';
import {
  defaultTemplatesDir,
  loadTemplates,
  TemplateValidationError,
} from '../../../src/triage/templates/template-registry.js';
import {
  type AlertInput,
  alertmanagerBody,
  apiErrorBudgetBurn,
  clusterOperatorDown,
  crashLooping,
  customAlert,
  nodeNotReady,
  targetDown,
  volumeFillingUp,
} from '../../support/alertmanager.js';

const templates = loadTemplates();

function group(alerts: AlertInput[], status?: 'firing' | 'resolved'): AlertGroup {
  const parsed = parseAlertmanagerBody(JSON.stringify(alertmanagerBody({ alerts, ...(status ? { status } : {}) })));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.group;
}

describe('alert → intent, namespace, cluster', () => {
  it('finds a template for every kube-prometheus and OpenShift alert calmops documents', () => {
    const expected: Record<string, string> = {
      KubePodCrashLooping: 'crashloop-analysis',
      KubePodNotReady: 'scheduling-failures',
      KubeDeploymentReplicasMismatch: 'workload-rollout',
      KubeDeploymentRolloutStuck: 'workload-rollout',
      KubeStatefulSetReplicasMismatch: 'workload-rollout',
      KubePersistentVolumeFillingUp: 'volume-mount-failures',
      KubePersistentVolumeErrors: 'pvc-binding',
      KubeNodeNotReady: 'node-not-ready',
      KubeJobFailed: 'workload-rollout',
      KubeJobNotCompleted: 'workload-rollout',
      KubeContainerWaiting: SWEEP_INTENT,
      KubeHpaMaxedOut: 'workload-rollout',
      TargetDown: 'service-connectivity',
      CPUThrottlingHigh: 'oom-killed',
      KubeMemoryOvercommit: 'scheduling-failures',
      ClusterOperatorDown: SWEEP_INTENT,
      ClusterOperatorDegraded: SWEEP_INTENT,
      KubeAPIErrorBudgetBurn: SWEEP_INTENT,
      PodDisruptionBudgetAtLimit: 'workload-rollout',
    };
    const intents = alertIntents(templates);
    expect(Object.fromEntries(Object.keys(expected).map((name) => [name, intents.get(name)]))).toEqual(expected);
    // Every listed alert names a template that exists.
    for (const intent of intents.values()) expect(templates.get(intent)).toBeDefined();
  });

  it('reads the namespace and the cluster from the labels', () => {
    const target = mapAlertGroup(group([crashLooping('payments', 'checkout-1', { cluster: 'prod-eu' })]), templates);
    expect(target).toMatchObject({
      intent: 'crashloop-analysis',
      via: 'template',
      namespace: 'payments',
      cluster: 'prod-eu',
      severity: 'warning',
    });
    expect(target.alert.labels['pod']).toBe('checkout-1');
    const noCluster = mapAlertGroup(group([targetDown('payments', 'payments-api')]), templates);
    expect(noCluster).toMatchObject({ intent: 'service-connectivity', namespace: 'payments' });
    expect(noCluster.cluster).toBeUndefined();
    const claim = mapAlertGroup(group([volumeFillingUp('ml-team', 'data-postgres-0')]), templates);
    expect(claim).toMatchObject({ intent: 'volume-mount-failures', namespace: 'ml-team', severity: 'critical' });
  });

  it('leaves the namespace to be located when the labels name none, or name the reporter', () => {
    const node = mapAlertGroup(group([nodeNotReady('worker-2')]), templates);
    expect(node.intent).toBe('node-not-ready');
    expect(node.namespace).toBeUndefined();
    const operator = mapAlertGroup(group([clusterOperatorDown('ingress', 'IngressUnavailable')]), templates);
    expect(operator.intent).toBe(SWEEP_INTENT);
    expect(operator.via).toBe('template');
    // openshift-cluster-version is where the alert is computed, not where the ingress operator is broken.
    expect(operator.namespace).toBeUndefined();
    const slo = mapAlertGroup(group([apiErrorBudgetBurn()]), templates);
    expect(slo).toMatchObject({ intent: SWEEP_INTENT, severity: 'critical' });
    expect(slo.namespace).toBeUndefined();
  });

  it('drops label values that are not a namespace or a cluster name', () => {
    const odd = crashLooping('Payments_Prod', 'checkout-1', { cluster: 'prod eu' });
    const target = mapAlertGroup(group([odd]), templates);
    expect(target.intent).toBe('crashloop-analysis');
    expect(target.namespace).toBeUndefined();
    expect(target.cluster).toBeUndefined();
  });

  it('sends an alert no template lists to the sweep, never nowhere', () => {
    const target = mapAlertGroup(group([customAlert('payments')]), templates);
    expect(target).toMatchObject({ intent: SWEEP_INTENT, via: 'sweep', namespace: 'payments' });
    expect(target.alert.name).toBe('PaymentsQueueBacklogHigh');
  });

  it('lets the first firing alert a template lists decide a mixed group', () => {
    const mixed = group([
      customAlert('payments'),
      { ...crashLooping('payments', 'old-1'), status: 'resolved' },
      targetDown('payments', 'payments-api'),
    ]);
    const target = mapAlertGroup(mixed, templates);
    expect(target.intent).toBe('service-connectivity');
    expect(target.alert.name).toBe('TargetDown');
    // A resolved group has no firing alert: its alerts still say what it was about.
    const resolved = mapAlertGroup(group([crashLooping('payments', 'checkout-1')], 'resolved'), templates);
    expect(resolved.intent).toBe('crashloop-analysis');
  });

  it('documents exactly the mapping the templates make (docs/alerts.md)', () => {
    const doc = readFileSync(new URL('../../../docs/alerts.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('<!-- alert-mapping:start'), doc.indexOf('<!-- alert-mapping:end'));
    const rows = [...table.matchAll(/^\| `([^`]+)`\s*\| `([^`]+)`\s*\|$/gm)].map((m) => [m[1], m[2]]);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Map(rows as [string, string][])).toEqual(alertIntents(templates));
    expect(rows).toHaveLength(alertIntents(templates).size);
    expect(table).toContain(`| any other alert`);
    expect(table).toMatch(new RegExp(`any other alert\\s*\\| \`${SWEEP_INTENT}\``));
  });

  it('refuses templates that claim the same alert', () => {
    const dir = mkdtempSync(join(tmpdir(), 'calmops-alert-templates-'));
    try {
      for (const id of ['crashloop-analysis', 'oom-killed', 'namespace-sweep']) {
        copyFileSync(join(defaultTemplatesDir(), `${id}.yaml`), join(dir, `${id}.yaml`));
      }
      const file = join(dir, 'oom-killed.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('alerts:\n', 'alerts:\n  - KubePodCrashLooping\n'));
      expect(() => loadTemplates(dir)).toThrow(TemplateValidationError);
      expect(() => loadTemplates(dir)).toThrow(/alert "KubePodCrashLooping" is already listed by template/);
      writeFileSync(file, readFileSync(file, 'utf8').replace('  - KubePodCrashLooping\n', '  - CPUThrottlingHigh\n'));
      expect(() => loadTemplates(dir)).toThrow(/alerts\[1\]: alert "CPUThrottlingHigh" is listed twice/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
