import { describe, expect, it } from 'vitest';
import { CollectingEventSink } from '../../../src/review/events.js';
import { synthesizePlan } from '../../../src/review/guided-regeneration.js';
import { guardPlan } from '../../../src/review/plan.js';
import { reviewPlan } from '../../../src/review/rubric.js';
import {
  type PlanSynthesisInput,
  type PlanSynthesizer,
  TemplateSynthesizer,
} from '../../../src/review/template-synthesizer.js';

const input: PlanSynthesisInput = {
  sessionId: 's-1',
  namespace: 'student03',
  intent: 'pvc-binding',
  author: 'calmops',
  rootCause: {
    code: 'PVC_NO_DEFAULT_STORAGECLASS',
    summary: 'PVC data has no storageClassName and the cluster has no default StorageClass',
    resource: { kind: 'PersistentVolumeClaim', name: 'data', namespace: 'student03' },
  },
  findingCodes: ['POD_UNBOUND_PVC'],
  remediation: [
    {
      when: 'PVC_NO_DEFAULT_STORAGECLASS',
      title: 'Mark a StorageClass as the default',
      steps: [
        { command: 'kubectl get storageclass', mode: 'read', description: 'List classes' },
        {
          command: 'kubectl get pvc {{resource.name}} -n {{namespace}} -o yaml',
          mode: 'read',
          description: 'Save the claim as pvc-{{resource.name}}.yaml',
          saves: ['pvc-{{resource.name}}.yaml'],
        },
        {
          command:
            'kubectl patch storageclass standard -p \'{"metadata":{"annotations":{"storageclass.kubernetes.io/is-default-class":"true"}}}\'',
          mode: 'write',
          rollback:
            'kubectl patch storageclass standard -p \'{"metadata":{"annotations":{"storageclass.kubernetes.io/is-default-class":"false"}}}\'',
          description: 'Make standard the default class',
        },
        {
          command: 'kubectl delete pvc {{resource.name}} -n {{namespace}}',
          mode: 'write',
          rollback: 'kubectl apply -f pvc-{{resource.name}}.yaml',
          description: 'Recreate the claim so it picks up the default class',
        },
      ],
    },
  ],
};

describe('remediation plan contract', () => {
  it('synthesizes a guarded plan from template remediation, labelling deletes DANGEROUS', async () => {
    const plan = await new TemplateSynthesizer().synthesize(input);
    const guarded = guardPlan(plan);
    expect(guarded.ok).toBe(true);
    if (!guarded.ok) return;
    expect(guarded.plan.name).toBe('fix-pvc-no-default-storageclass-data');
    expect(guarded.plan.steps.map((s) => s.id)).toEqual([
      'get-storageclass',
      'get-pvc-data',
      'patch-storageclass-standard',
      'delete-pvc-data',
      'verify-pvc-data',
    ]);
    expect(guarded.plan.steps[1]).toMatchObject({ saves: ['pvc-data.yaml'] });
    expect(guarded.plan.steps[3]).toMatchObject({
      command: 'kubectl delete pvc data -n student03',
      safety: 'DANGEROUS',
      rollback: 'kubectl apply -f pvc-data.yaml',
      // A change waits for the reads before it (one saves the file its rollback applies) and for the change
      // before it, whose result it builds on.
      needs: ['get-storageclass', 'get-pvc-data', 'patch-storageclass-standard'],
      targets: [{ kind: 'PersistentVolumeClaim', name: 'data', namespace: 'student03' }],
    });
    expect(guarded.plan.steps[2]?.safety).toBe('REQUIRES_APPROVAL');
    expect(guarded.plan.steps[4]).toMatchObject({
      command: "kubectl get pvc data -n student03 -o jsonpath='{.status.phase}'",
      mode: 'read',
      needs: ['delete-pvc-data'],
    });
  });

  it('is deterministic', async () => {
    const synth = new TemplateSynthesizer();
    expect(await synth.synthesize(input)).toEqual(await synth.synthesize(input));
  });

  it('falls back to a read-only investigation plan when no remediation is known', async () => {
    const plan = await new TemplateSynthesizer().synthesize({ ...input, remediation: [] });
    const guarded = guardPlan(plan);
    expect(guarded.ok && guarded.plan.steps.every((s) => s.mode === 'read')).toBe(true);
  });

  it('rejects forbidden legacy keys, write steps without rollback and bad needs', () => {
    const result = guardPlan({
      plan_version: '1',
      version: 2,
      tasks: [],
      name: 'Bad Name',
      summary: 's',
      rootCause: 'r',
      namespace: 'ns',
      author: 'a',
      steps: [
        { id: 'a', description: 'd', command: 'kubectl scale deploy x --replicas=0', mode: 'write', safety: 'SAFE' },
        { id: 'b', description: 'd', command: 'kubectl get pods', mode: 'read', safety: 'SAFE', needs: ['c'] },
      ],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const text = result.errors.join('\n');
    expect(text).toContain('forbidden key "version"');
    expect(text).toContain('forbidden key "tasks"');
    expect(text).toContain('name: must be kebab-case');
    expect(text).toContain('write step "a" needs a rollback');
    expect(text).toContain('cannot be labelled SAFE');
    expect(text).toContain('unknown step "c"');
  });

  it('rejects empty replies', () => {
    expect(guardPlan(undefined)).toEqual({ ok: false, errors: ['the plan is empty or not an object'] });
    expect(guardPlan('')).toMatchObject({ ok: false });
  });
});

describe('guarded synthesis', () => {
  it('regenerates exactly once with the guard errors as feedback, then succeeds', async () => {
    const seen: PlanSynthesisInput[] = [];
    const good = new TemplateSynthesizer();
    const flaky: PlanSynthesizer = {
      name: 'flaky',
      async synthesize(i) {
        seen.push(i);
        return seen.length === 1 ? { tasks: [] } : good.synthesize(i);
      },
    };
    const events = new CollectingEventSink();
    const outcome = await synthesizePlan(flaky, input, events);
    expect(outcome.status).toBe('ready');
    expect(outcome.attempts).toBe(2);
    expect(seen[1]?.feedback?.some((f) => f.includes('forbidden key "tasks"'))).toBe(true);
    expect(events.events.map((e) => e.type)).toEqual([
      'plan_synthesis_start',
      'plan_synthesis_complete',
      'schema_guard_fail',
      'regeneration_attempt',
      'plan_synthesis_complete',
      'schema_guard_pass',
    ]);
  });

  it('hands over to a human with a non-empty message after the second failure', async () => {
    let calls = 0;
    const empty: PlanSynthesizer = {
      name: 'empty',
      async synthesize() {
        calls += 1;
        return null;
      },
    };
    const events = new CollectingEventSink();
    const outcome = await synthesizePlan(empty, input, events);
    expect(calls).toBe(2);
    expect(outcome.status).toBe('needs-human');
    if (outcome.status !== 'needs-human') return;
    expect(outcome.message).toMatch(/could not produce a valid remediation plan for PVC_NO_DEFAULT_STORAGECLASS/);
    expect(events.events.at(-1)?.type).toBe('human_needed');
  });
});

describe('automated review rubric', () => {
  it('passes a complete plan and still requires a human for mutating steps', async () => {
    const plan = await new TemplateSynthesizer().synthesize(input);
    const review = reviewPlan(plan, { completeness: 0.9, overrideActive: false });
    expect(review.passed).toBe(true);
    expect(review.humanReviewRequired).toBe(true);
  });

  it('lets a read-only plan skip human review (autonomous mode)', async () => {
    const plan = await new TemplateSynthesizer().synthesize({ ...input, remediation: [] });
    const review = reviewPlan(plan, { completeness: 0.9, overrideActive: false });
    expect(review).toMatchObject({ passed: true, humanReviewRequired: false });
  });

  it('fails on low evidence unless an override is active', async () => {
    const plan = await new TemplateSynthesizer().synthesize(input);
    const low = reviewPlan(plan, { completeness: 0.5, overrideActive: false });
    expect(low.passed).toBe(false);
    expect(low.checks.find((c) => c.id === 'evidence')?.detail).toContain('0.50');
    expect(reviewPlan(plan, { completeness: 0.5, overrideActive: true }).passed).toBe(true);
  });

  it('names the mutating steps that lack a rollback', () => {
    const review = reviewPlan(
      { steps: [{ id: 'scale-down', mode: 'write', safety: 'REQUIRES_APPROVAL' }] },
      { completeness: 1, overrideActive: false },
    );
    expect(review.passed).toBe(false);
    expect(review.checks.find((c) => c.id === 'rollback')?.detail).toBe('no rollback for scale-down');
  });
});
