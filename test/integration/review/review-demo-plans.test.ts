import { describe, expect, it } from 'vitest';
import { DEMO_NAMESPACES, DEMO_SNAPSHOT } from '../../../local/demo/index.js';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { loadSnapshotFiles, siblingLogsPath } from '../../../src/cluster/snapshot.js';
import { planInputFrom } from '../../../src/review/input.js';
import { filesUsed, guardPlan, type PlanStep, type RemediationPlan } from '../../../src/review/plan.js';
import { TemplateSynthesizer } from '../../../src/review/template-synthesizer.js';
import { kubeconfigYaml } from '../../../src/snapshot-api/kubeconfig.js';
import { startSnapshotServer } from '../../../src/snapshot-api/server.js';
import { silentLogger, triage } from '../../../src/triage/index.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';

/**
 * The plans of the demo incidents, as a reviewer would read them: every step after the steps whose results it uses,
 * the least destructive fix first, and no file or object that no step or the cluster provides.
 */

const DESTRUCTIVE = /\b(delete|drain|cordon|taint)\b|--force\b/;

async function demoPlans(): Promise<Map<string, RemediationPlan>> {
  const snapshot = await loadSnapshotFiles(DEMO_SNAPSHOT, siblingLogsPath(DEMO_SNAPSHOT));
  const server = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
  const templates = loadTemplates();
  const plans = new Map<string, RemediationPlan>();
  try {
    const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigYaml({ server: server.url }) } });
    for (const demo of DEMO_NAMESPACES.filter((d) => d.expectedRootCause)) {
      const text = demo.try.replace(/^\/triage /, '').replace(/ in [a-z-]+$/, '');
      const envelope = await triage({ text, namespace: demo.namespace }, { reader, logger: silentLogger });
      const input = planInputFrom(
        envelope,
        { sessionId: 's', namespace: demo.namespace, intent: envelope.routing.intent, author: 'U1' },
        templates,
      );
      if (!input) continue;
      const guarded = guardPlan(await new TemplateSynthesizer().synthesize(input));
      if (guarded.ok) plans.set(demo.namespace, guarded.plan);
    }
  } finally {
    await server.close();
  }
  return plans;
}

/** Where a step uses what an earlier change created or changed, it waits for that change (directly or not). */
function orderProblems(steps: readonly PlanStep[]): string[] {
  const problems: string[] = [];
  const waitsFor = (index: number): Set<string> => {
    const seen = new Set<string>();
    const queue = [...(steps[index]?.needs ?? [])];
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      if (seen.has(id)) continue;
      seen.add(id);
      queue.push(...(steps.find((s) => s.id === id)?.needs ?? []));
    }
    return seen;
  };
  steps.forEach((step, index) => {
    const before = waitsFor(index);
    steps.slice(0, index).forEach((earlier) => {
      if (earlier.mode === 'write' && step.mode === 'write' && !before.has(earlier.id)) {
        problems.push(`${step.id} does not wait for the change ${earlier.id} before it`);
      }
    });
    for (const file of filesUsed(`${step.command}\n${step.rollback ?? ''}`)) {
      const saver = steps.find((s) => (s.saves ?? []).includes(file));
      if (!saver || !before.has(saver.id)) problems.push(`${step.id} uses ${file} before a step saves it`);
    }
  });
  return problems;
}

describe('the demo incidents’ plans', () => {
  it('run each step after what it uses, lead with the least destructive fix, and invent no file', async () => {
    const plans = await demoPlans();
    expect([...plans.keys()].sort()).toEqual(['inventory', 'ml-team', 'orders', 'payments']);
    for (const [namespace, plan] of plans) {
      for (const steps of [plan.steps, ...(plan.alternatives ?? []).map((a) => a.steps)]) {
        expect({ namespace, problems: orderProblems(steps) }).toEqual({ namespace, problems: [] });
      }
      const leadsDestructive = plan.steps.some((s) => s.mode === 'write' && DESTRUCTIVE.test(s.command));
      const alternativeGentler = (plan.alternatives ?? []).some(
        (a) => !a.steps.some((s) => s.mode === 'write' && DESTRUCTIVE.test(s.command)),
      );
      expect({ namespace, leadsDestructive: leadsDestructive && alternativeGentler }).toEqual({
        namespace,
        leadsDestructive: false,
      });
    }
    // ml-team: creating the missing StorageClass (what the demo's own fix does) leads; recreating the claim is the
    // alternative, and its re-apply waits for its delete.
    const ml = plans.get('ml-team');
    expect(ml?.steps.filter((s) => s.mode === 'write').map((s) => s.command)).toEqual([
      'kubectl apply -f storageclass-fast-ssd.yaml',
    ]);
    const recreate = ml?.alternatives?.[0]?.steps ?? [];
    const apply = recreate.find((s) => s.command.includes('-with-class.yaml'));
    expect(apply?.needs).toContain(recreate.find((s) => s.command.startsWith('kubectl delete pvc'))?.id);
    // orders: no alternative edits a ConfigMap order-worker does not reference.
    const orders = plans.get('orders');
    expect((orders?.alternatives ?? []).flatMap((a) => a.steps).some((s) => /configmap/.test(s.command))).toBe(false);
  });
});
