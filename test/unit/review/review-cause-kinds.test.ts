import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { planInputFrom } from '../../../src/review/input.js';
import { guardPlan, type PlanStep, type RemediationPlan } from '../../../src/review/plan.js';
import { TemplateSynthesizer } from '../../../src/review/template-synthesizer.js';
import { type RankedCause, type TriageEnvelope, TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import type { Finding, ResourceRef } from '../../../src/triage/envelope/findings.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';

/**
 * Plans for root causes of many kinds, from the envelopes calmops wrote for incidents of the corpus
 * (test/fixtures/review/root-cause-envelopes.json holds each incident's first ranked cause and the finding behind
 * it): the plan changes the entity the envelope names as its `change` says, undoes the change in a way that works
 * for that kind, uses only that object's own names, leads with the least destructive fix and ends by reading that
 * what suffered runs again.
 */

interface Fixture {
  incident: string;
  namespace: string;
  intent: string;
  rootCause: RankedCause;
  findings: Finding[];
}

const fixtures = JSON.parse(
  readFileSync(new URL('../../fixtures/review/root-cause-envelopes.json', import.meta.url), 'utf8'),
) as Fixture[];
const templates = loadTemplates();

function envelopeOf(f: Fixture): TriageEnvelope {
  return TriageEnvelopeSchema.parse({
    schemaVersion: 1,
    routing: {
      intent: f.intent,
      templateId: f.intent,
      domain: 'compute',
      namespace: f.namespace,
      bounded: true,
      stepBudget: 3,
      triggerMode: 'replace',
      intentConfidence: 1,
      why: 'given',
    },
    rubrics: { safety: 'ALLOW', priority: 'P2', confidence: 'High' },
    summary: f.rootCause.summary,
    evidence: { completeness: 1, threshold: 0.8, present: [], missing: [], gaps: [] },
    findings: f.findings,
    rootCause: [f.rootCause],
    nextActions: [],
    promptSuggestions: [],
    execution: {
      stepsExecuted: 1,
      stepBudget: 3,
      requests: 1,
      durationMs: 1,
      timedOut: false,
      now: '2026-11-01T00:00:00Z',
    },
  });
}

async function planOf(incident: string): Promise<{ plan: RemediationPlan; cause: RankedCause }> {
  const f = fixtures.find((x) => x.incident === incident);
  if (!f) throw new Error(`no fixture for ${incident}`);
  const input = planInputFrom(
    envelopeOf(f),
    { sessionId: 's', namespace: f.namespace, intent: f.intent, author: 'U1' },
    templates,
  );
  if (!input) throw new Error(`${incident}: no root cause`);
  const guarded = guardPlan(await new TemplateSynthesizer().synthesize(input));
  if (!guarded.ok) throw new Error(`${incident}: ${guarded.errors.join('; ')}`);
  return { plan: guarded.plan, cause: f.rootCause };
}

const writes = (steps: readonly PlanStep[]) => steps.filter((s) => s.mode === 'write');

/** `kubectl <verb> <kind> <name> [-n <namespace>]`: the object a change names first. */
function changes(step: PlanStep, ref: ResourceRef): boolean {
  const kind = ref.kind.toLowerCase();
  return (
    new RegExp(`\\b${kind}s?[ /]${ref.name.replace(/\./g, '\\.')}(\\s|$)`).test(step.command) &&
    (ref.namespace ? step.command.includes(`-n ${ref.namespace}`) : !/ -n /.test(step.command))
  );
}

/** Every way a plan (and its alternatives) undoes a change works for the kind it changes. */
function rollbackProblems(plan: RemediationPlan): string[] {
  const problems: string[] = [];
  for (const steps of [plan.steps, ...(plan.alternatives ?? []).map((a) => a.steps)]) {
    for (const step of writes(steps)) {
      const undo = /rollout undo (\S+)/.exec(step.rollback ?? '');
      if (undo && !/^(deployment|daemonset|statefulset)s?(\/|$)/.test(undo[1] ?? '')) {
        problems.push(`${step.id}: ${step.rollback}`);
      }
    }
  }
  return problems;
}

/** The reads after the last change: they wait for it. */
function verifications(plan: RemediationPlan): PlanStep[] {
  const last = writes(plan.steps).at(-1);
  return plan.steps.filter((s) => s.mode === 'read' && last && s.needs.includes(last.id));
}

const KINDS: [string, string][] = [
  ['c-oom-node-system-oom', 'CronJob'],
  ['n-adm-limitrange-max-cpu-rollout', 'LimitRange'],
  ['c-rollout-podsecurity-restricted', 'Namespace'],
  ['n-adm-scc-rolebinding-old-sa', 'RoleBinding'],
  ['n-adm-webhook-orphaned-config', 'ValidatingWebhookConfiguration'],
  ['c-vague-billing', 'ExternalSecret'],
  ['n-net-metallb-pool-exhausted', 'IPAddressPool'],
  ['n-cert-clusterissuer-ca-secret-typo', 'ClusterIssuer'],
  ['n-ocp-clusterresourcequota-preview-envs', 'ClusterResourceQuota'],
  ['n-scale-karpenter-nodepool-cpu-limit', 'NodePool'],
];

describe('plans change the root cause the envelope names, whatever its kind', () => {
  it.each(KINDS)('%s: the first change is to the %s, undone in a way that works for it', async (incident, kind) => {
    const { plan, cause } = await planOf(incident);
    expect(cause.resource.kind).toBe(kind);
    const first = writes(plan.steps)[0];
    expect(first, plan.steps.map((s) => s.command).join('\n')).toBeDefined();
    if (!first) return;
    expect(changes(first, cause.resource), first.command).toBe(true);
    expect(first.targets).toContainEqual(
      expect.objectContaining({ kind: cause.resource.kind, name: cause.resource.name }),
    );
    expect(rollbackProblems(plan)).toEqual([]);
    // A change no template knows is made as the envelope says, in its words.
    if (first.command.startsWith('kubectl edit ')) {
      expect(first.description).toContain(cause.change?.replace(/\s+/g, ' ').slice(0, 40) ?? '');
    }
    expect(verifications(plan).length).toBeGreaterThan(0);
  });

  it('bounds the CronJob that exhausted the node, not the victim: no victim container, a saved manifest to roll back, the victim running again', async () => {
    const { plan, cause } = await planOf('c-oom-node-system-oom');
    const text = plan.steps.map((s) => `${s.command}\n${s.rollback ?? ''}`).join('\n');
    // The container the node's OOM killer chose belongs to Deployment ledger-api, not to the CronJob.
    expect(text).not.toContain('-c ledger-api');
    expect(text).not.toMatch(/rollout undo cronjob/);
    expect(text).not.toContain('<larger-limit>');
    const [change] = writes(plan.steps);
    expect(change).toMatchObject({
      command: 'kubectl edit cronjob feature-backfill -n analytics',
      rollback: 'kubectl apply -f cronjob-feature-backfill.yaml',
    });
    expect(change?.description).toContain('set a memory limit (and a request that reserves it) on CronJob');
    const save = plan.steps.find((s) => s.saves?.includes('cronjob-feature-backfill.yaml'));
    expect(save).toMatchObject({ command: 'kubectl get cronjob feature-backfill -n analytics -o yaml', mode: 'read' });
    expect(change?.needs).toContain(save?.id);
    // What suffered runs again: the impacted Deployment, in its own namespace.
    const impacted = cause.impact?.[0]?.resource;
    expect(impacted).toMatchObject({ kind: 'Deployment', name: 'ledger-api', namespace: 'accounts' });
    expect(verifications(plan).map((s) => s.command)).toContain(
      'kubectl rollout status deployment/ledger-api -n accounts --timeout=5m',
    );
    // The node the envelope offers as the other place to fix it is the alternative, and the one that cordons.
    expect(plan.alternatives?.map((a) => writes(a.steps).map((s) => s.command))).toEqual([
      ['kubectl cordon ip-10-50-2-118.eu-west-1.compute.internal'],
    ]);
  });

  it('labels a Namespace back rather than editing it, and never labels a RoleBinding as a Namespace', async () => {
    const { plan } = await planOf('c-rollout-podsecurity-restricted');
    expect(writes(plan.steps)[0]).toMatchObject({
      command:
        'kubectl label namespace partner-api --overwrite pod-security.kubernetes.io/enforce=<level-the-workloads-need>',
      rollback: 'kubectl label namespace partner-api --overwrite pod-security.kubernetes.io/enforce=<previous-level>',
    });
    const rbac = await planOf('n-adm-scc-rolebinding-old-sa');
    const all = [rbac.plan.steps, ...(rbac.plan.alternatives ?? []).map((a) => a.steps)].flat();
    expect(all.some((s) => /namespace keycloak-anyuid/.test(s.command))).toBe(false);
  });

  it('offers the fix on the workload as the alternative of a LimitRange, a Namespace and a RoleBinding', async () => {
    for (const incident of [
      'n-adm-limitrange-max-cpu-rollout',
      'c-rollout-podsecurity-restricted',
      'n-adm-scc-rolebinding-old-sa',
    ]) {
      const { plan, cause } = await planOf(incident);
      const other = cause.alternatives?.[0]?.resource;
      expect(other?.kind, incident).toBe('Deployment');
      if (!other) continue;
      expect(
        plan.alternatives?.some((a) => writes(a.steps).some((s) => changes(s, other))),
        `${incident}: ${JSON.stringify(plan.alternatives?.map((a) => a.steps.map((s) => s.command)))}`,
      ).toBe(true);
      // The main plan leaves the workload alone: it is where the fault shows, not what decides it.
      expect(writes(plan.steps).some((s) => changes(s, other))).toBe(false);
    }
  });

  it('never changes the Secret an ExternalSecret writes: the controller would overwrite it', async () => {
    const { plan } = await planOf('c-vague-billing');
    expect(writes(plan.steps).map((s) => s.command)).toEqual(['kubectl edit externalsecret stripe -n billing']);
    expect(plan.steps.some((s) => /\bsecret stripe/.test(s.command))).toBe(false);
    expect(verifications(plan).map((s) => s.command)).toContain(
      'kubectl rollout status deployment/billing-worker -n billing --timeout=5m',
    );
  });

  it('edits a cluster-scoped cause without a namespace, and a quota nobody named is not looked up instead', async () => {
    for (const incident of [
      'n-adm-webhook-orphaned-config',
      'n-ocp-clusterresourcequota-preview-envs',
      'n-cert-clusterissuer-ca-secret-typo',
    ]) {
      const { plan } = await planOf(incident);
      for (const step of writes(plan.steps)) expect(step.command, incident).not.toMatch(/ -n |<[a-z-]+>/);
    }
  });
});
