import { describe, expect, it } from 'vitest';
import { CollectingEventSink } from '../../../src/review/events.js';
import { synthesizePlan } from '../../../src/review/guided-regeneration.js';
import { resolvePlanNames, UNKNOWN_NAME_PLACEHOLDERS } from '../../../src/review/names.js';
import { guardPlan, type RemediationPlan } from '../../../src/review/plan.js';
import { reviewPlan } from '../../../src/review/rubric.js';
import { type PlanSynthesisInput, TemplateSynthesizer } from '../../../src/review/template-synthesizer.js';
import type { Finding } from '../../../src/triage/envelope/findings.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';

const templates = loadTemplates();
const remediation = (intent: string) => [
  ...(templates.get(intent)?.remediation ?? []),
  ...templates
    .list()
    .filter((t) => t.id !== intent)
    .flatMap((t) => t.remediation),
];

/** The sandbox's orders incident, as the triage reports it. */
const ordersFinding: Finding = {
  code: 'CONTAINER_CRASHLOOP_CONFIG_ERROR',
  analyzer: 'crashloop',
  domain: 'compute',
  severity: 'high',
  resource: { kind: 'Pod', name: 'order-worker-69b7c4d8f5-fk2lp', namespace: 'orders' },
  owner: { kind: 'Deployment', name: 'order-worker', namespace: 'orders' },
  related: [{ kind: 'Deployment', name: 'order-worker', namespace: 'orders' }],
  message:
    'Container order-worker of pod order-worker-69b7c4d8f5-fk2lp is crash-looping because of its configuration: Error: missing required environment variable DATABASE_URL.',
  evidence: [
    'container order-worker: CrashLoopBackOff, 14 restarts, last exit code 1 (Error) = application error',
    'log of container order-worker (previous run): Error: missing required environment variable DATABASE_URL',
    'pods of ReplicaSet order-worker-69b7c4d8f5 (revision 4)',
  ],
  confidence: 0.9,
  remediation: ['fix-config'],
};

function ordersInput(finding: Finding = ordersFinding): PlanSynthesisInput {
  const owner = finding.owner ?? finding.resource;
  return {
    sessionId: 's-orders',
    namespace: 'orders',
    intent: 'crashloop-analysis',
    author: 'U1',
    rootCause: {
      code: finding.code,
      summary: finding.message,
      resource: owner,
      chain: [owner, finding.resource],
    },
    finding,
    findingCodes: [finding.code],
    remediation: remediation('crashloop-analysis'),
  };
}

async function synthesized(input: PlanSynthesisInput): Promise<RemediationPlan> {
  const guarded = guardPlan(await new TemplateSynthesizer().synthesize(input));
  if (!guarded.ok) throw new Error(guarded.errors.join('\n'));
  return guarded.plan;
}

const commands = (plan: RemediationPlan) => plan.steps.map((s) => [s.command, s.rollback ?? ''].join('\n')).join('\n');

describe('plans written with the cluster’s names', () => {
  it('names the deployment, container, pod and variable of the orders incident, with no placeholder for them', async () => {
    const plan = await synthesized(ordersInput());
    expect(plan.steps.map((s) => s.command)).toEqual([
      'kubectl logs order-worker-69b7c4d8f5-fk2lp -n orders -c order-worker --previous --tail=100',
      `kubectl get deployment order-worker -n orders -o jsonpath='{.spec.template.spec.containers[?(@.name=="order-worker")].env}'`,
      'kubectl set env deployment/order-worker -n orders -c order-worker DATABASE_URL=<correct-value>',
      'kubectl rollout status deployment/order-worker -n orders --timeout=5m',
    ]);
    expect(plan.steps[2]).toMatchObject({
      rollback: 'kubectl rollout undo deployment order-worker -n orders',
      needs: [plan.steps[0]?.id, plan.steps[1]?.id],
      targets: [{ kind: 'Deployment', name: 'order-worker', namespace: 'orders' }],
    });
    for (const placeholder of UNKNOWN_NAME_PLACEHOLDERS) expect(commands(plan)).not.toContain(placeholder);
    const review = reviewPlan(plan, { completeness: 1, overrideActive: false });
    expect(review.checks.find((c) => c.id === 'names')).toMatchObject({
      passed: true,
      detail: 'every object is named; values to choose: <correct-value> (step 3)',
    });
  });

  it('offers no alternative that edits a ConfigMap the findings do not show the workload uses', async () => {
    const plan = await synthesized(ordersInput());
    expect(plan.alternatives?.some((a) => a.steps.some((s) => /configmap/.test(s.command))) ?? false).toBe(false);
    expect(plan.steps.some((s) => s.command.includes('<configmap>'))).toBe(false);
  });

  it('changes the ConfigMap a finding blames and restarts the workload from the chain, not the ConfigMap', async () => {
    const finding: Finding = {
      ...ordersFinding,
      resource: { kind: 'Pod', name: 'stock-sync-2', namespace: 'inventory' },
      owner: { kind: 'ConfigMap', name: 'stock-sync-config', namespace: 'inventory' },
      related: [
        { kind: 'StatefulSet', name: 'stock-sync', namespace: 'inventory' },
        { kind: 'ConfigMap', name: 'stock-sync-config', namespace: 'inventory' },
      ],
      message:
        'Container stock-sync of pod stock-sync-2 is crash-looping: it connects to postgres-primary, a name that does not exist (set by ConfigMap stock-sync-config key DB_HOST).',
      evidence: ['container stock-sync: CrashLoopBackOff, 7 restarts'],
    };
    const plan = await synthesized({ ...ordersInput(finding), namespace: 'inventory' });
    expect(plan.steps.filter((s) => s.mode === 'write').map((s) => s.command)).toEqual([
      `kubectl patch configmap stock-sync-config -n inventory --type=merge -p '{"data":{"DB_HOST":"<correct-value>"}}'`,
      'kubectl rollout restart statefulset stock-sync -n inventory',
    ]);
    expect(plan.steps.at(-1)?.command).toBe('kubectl rollout status statefulset/stock-sync -n inventory --timeout=5m');
    // The restart uses what the patch changed, so it waits for the patch.
    const [patch, restart] = plan.steps.filter((s) => s.mode === 'write');
    expect(restart?.needs).toContain(patch?.id);
  });

  it('looks up a name nobody gave before the change that needs it, and the rubric flags it', async () => {
    const finding: Finding = {
      ...ordersFinding,
      code: 'PDB_BLOCKS_DISRUPTION',
      resource: { kind: 'PodDisruptionBudget', name: 'payments-api', namespace: 'payments' },
      related: [],
      message: 'PodDisruptionBudget payments-api allows no disruption (2 healthy, 2 required).',
      evidence: ['minAvailable 2'],
    };
    delete finding.owner;
    const plan = await synthesized({
      ...ordersInput(finding),
      namespace: 'payments',
      intent: 'workload-rollout',
      remediation: remediation('workload-rollout'),
    });
    const lookup = plan.steps.findIndex((s) => s.id === 'find-workload');
    const change = plan.steps.findIndex((s) => s.mode === 'write');
    expect(plan.steps[lookup]?.command).toBe('kubectl get deployments,statefulsets,daemonsets,cronjobs -n payments');
    expect(lookup).toBeLessThan(change);
    expect(plan.steps[change]?.command).toBe(
      'kubectl scale <workload-kind> <workload> -n payments --replicas=<one-more>',
    );
    expect(plan.steps[change]?.needs).toContain('find-workload');
    const review = reviewPlan(plan, { completeness: 1, overrideActive: false });
    expect(review.passed).toBe(true);
    expect(review.humanReviewRequired).toBe(true);
    expect(review.checks.find((c) => c.id === 'names')).toMatchObject({ passed: false, advisory: true });
    expect(review.checks.find((c) => c.id === 'names')?.detail).toMatch(
      /^names to look up first: <workload-kind> \(step 3\), <workload> \(step 3\)/,
    );
  });

  it('resolves details from the evidence: the container, the missing key, the running revision', () => {
    const names = resolvePlanNames({
      namespace: 'orders',
      rootCause: { code: ordersFinding.code, resource: ordersFinding.owner as Finding['resource'] },
      finding: ordersFinding,
    });
    expect(names.details).toEqual({ container: 'order-worker', key: 'DATABASE_URL', revision: '4' });
    expect(names.refs.workload).toEqual({ kind: 'Deployment', name: 'order-worker', namespace: 'orders' });
    expect(names.refs.pod?.name).toBe('order-worker-69b7c4d8f5-fk2lp');
    expect(names.refs.configmap).toBeUndefined();
  });
});

describe('the schema guard and its one guided regeneration', () => {
  it('refuses names kubectl would refuse, unfilled template variables and targets the command does not name', () => {
    const plan = {
      plan_version: '1',
      name: 'fix',
      summary: 's',
      rootCause: 'r',
      namespace: 'Orders',
      author: 'U1',
      steps: [
        {
          id: 'a',
          description: 'd',
          command: 'kubectl rollout restart deployment {{workload.name}} -n orders',
          mode: 'read',
          safety: 'SAFE',
          targets: [
            { kind: 'Deployment', name: 'order_worker;rm -rf /' },
            { kind: 'Deployment', name: 'payments' },
          ],
        },
      ],
    };
    const result = guardPlan(plan);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual(
      expect.arrayContaining([
        'namespace: "Orders" is not a valid namespace',
        'steps.0.command: step "a" has an unfilled template placeholder',
        expect.stringMatching(/^steps\.0\.targets\.0\.name: "order_worker;rm -rf \/" is not a valid Kubernetes name/),
        'steps.0.targets.1.name: step "a" names Deployment payments but its command does not',
      ]),
    );
  });

  it('regenerates once with the refused names as guidance: they become lookups, and the plan passes', async () => {
    const bad = 'Order_Worker';
    const finding: Finding = {
      ...ordersFinding,
      owner: { kind: 'Deployment', name: bad, namespace: 'orders' },
      related: [{ kind: 'Deployment', name: bad, namespace: 'orders' }],
    };
    const events = new CollectingEventSink();
    const seen: (readonly string[] | undefined)[] = [];
    const synthesizer = new TemplateSynthesizer();
    const outcome = await synthesizePlan(
      {
        name: 'template',
        synthesize: (i) => {
          seen.push(i.feedback);
          return synthesizer.synthesize(i);
        },
      },
      ordersInput(finding),
      events,
    );
    expect(outcome).toMatchObject({ status: 'ready', attempts: 2 });
    expect(events.events.map((e) => e.type)).toEqual([
      'plan_synthesis_start',
      'plan_synthesis_complete',
      'schema_guard_fail',
      'regeneration_attempt',
      'plan_synthesis_complete',
      'schema_guard_pass',
    ]);
    expect(seen[0]).toBeUndefined();
    expect(seen[1]?.some((e) => e.includes(`"${bad}" is not a valid Kubernetes name`))).toBe(true);
    if (outcome.status !== 'ready') return;
    expect(commands(outcome.plan)).not.toContain(bad);
    expect(outcome.plan.steps.map((s) => s.id)).toContain('find-workload');
  });
});

describe('the templates’ remediation', () => {
  it('writes object names as template variables, never as literal placeholders, and one command per step', () => {
    for (const template of templates.list()) {
      for (const entry of template.remediation) {
        for (const step of entry.steps) {
          const text = `${step.command}\n${step.rollback ?? ''}`;
          for (const placeholder of UNKNOWN_NAME_PLACEHOLDERS) {
            expect(text, `${template.id} ${entry.when}: ${step.command}`).not.toContain(placeholder);
          }
          expect(step.command, `${template.id} ${entry.when}`).not.toMatch(/&&|;|\s>\s/);
        }
      }
    }
  });
});
