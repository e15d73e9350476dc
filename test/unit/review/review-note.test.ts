import { describe, expect, it } from 'vitest';
import { parseReviewNote } from '../../../src/review/note.js';
import { guardPlan, PLAN_VERSION, type PlanStep, type RemediationPlan } from '../../../src/review/plan.js';
import { revisePlan } from '../../../src/review/revise.js';

const read = (id: string, command: string, needs: string[] = []): PlanStep => ({
  id,
  description: `read ${id}`,
  command,
  mode: 'read',
  safety: 'SAFE',
  needs,
});
const write = (id: string, command: string, rollback: string, needs: string[] = []): PlanStep => ({
  id,
  description: `change ${id}`,
  command,
  mode: 'write',
  safety: 'REQUIRES_APPROVAL',
  rollback,
  needs,
});

const plan: RemediationPlan = {
  plan_version: PLAN_VERSION,
  name: 'fix-container-crashloop-config-error-order-worker',
  summary: 'Set the missing or wrong environment variable on the workload',
  rootCause: 'missing required environment variable DATABASE_URL',
  namespace: 'orders',
  author: 'U1',
  steps: [
    read('logs-order-worker', 'kubectl logs order-worker-69b7c4d8f5-fk2lp -n orders -c order-worker --previous'),
    read('set-env-list', 'kubectl set env deployment/order-worker -n orders -c order-worker --list'),
    write(
      'set-env-order-worker',
      'kubectl set env deployment/order-worker -n orders -c order-worker DATABASE_URL=<correct-value>',
      'kubectl rollout undo deployment order-worker -n orders',
      ['logs-order-worker', 'set-env-list'],
    ),
    read('verify-order-worker', 'kubectl rollout status deployment/order-worker -n orders --timeout=5m', [
      'set-env-order-worker',
    ]),
  ],
  alternatives: [
    {
      id: 'configmap',
      summary: 'Correct the value in the ConfigMap and restart the workload',
      steps: [
        {
          ...read('get-configmap', 'kubectl get configmap order-worker-config -n orders -o yaml'),
          saves: ['configmap-order-worker-config.yaml'],
        },
        write(
          'patch-configmap',
          `kubectl patch configmap order-worker-config -n orders --type=merge -p '{"data":{"DATABASE_URL":"<correct-value>"}}'`,
          'kubectl apply -f configmap-order-worker-config.yaml',
          ['get-configmap'],
        ),
      ],
    },
  ],
};

describe('parseReviewNote', () => {
  it('reads drops, replacements, moves and the alternative, several to a note', () => {
    const parsed = parseReviewNote(
      'Drop step 2 and move step 4 before step 3.\nReplace step 3 with `kubectl set env deploy/order-worker -n orders DATABASE_URL=postgres://db; echo ok` rollback `kubectl rollout undo deploy/order-worker -n orders`\nThanks!',
    );
    expect(parsed.unparsed).toEqual([]);
    expect(parsed.edits).toEqual([
      { kind: 'drop', step: { number: 2 } },
      { kind: 'move', step: { number: 4 }, position: 'before', anchor: { number: 3 } },
      {
        kind: 'replace',
        step: { number: 3 },
        command: 'kubectl set env deploy/order-worker -n orders DATABASE_URL=postgres://db; echo ok',
        rollback: 'kubectl rollout undo deploy/order-worker -n orders',
      },
    ]);
  });

  it('understands the usual ways of saying each edit', () => {
    expect(parseReviewNote('skip steps 1, 2 and 4').edits.map((e) => e.kind === 'drop' && e.step)).toEqual([
      { number: 1 },
      { number: 2 },
      { number: 4 },
    ]);
    expect(parseReviewNote('step 3: kubectl rollout restart deployment order-worker -n orders').edits[0]).toMatchObject(
      {
        kind: 'replace',
        step: { number: 3 },
        command: 'kubectl rollout restart deployment order-worker -n orders',
      },
    );
    expect(parseReviewNote('Drop step 2. Move step 4 before step 1.').edits).toEqual([
      { kind: 'drop', step: { number: 2 } },
      { kind: 'move', step: { number: 4 }, position: 'before', anchor: { number: 1 } },
    ]);
    expect(parseReviewNote('Drop step 1, thanks').edits).toEqual([{ kind: 'drop', step: { number: 1 } }]);
    expect(parseReviewNote('please use the alternative fix').edits).toEqual([{ kind: 'alternative', index: 1 }]);
    expect(parseReviewNote('go with option 2').edits).toEqual([{ kind: 'alternative', index: 2 }]);
    expect(parseReviewNote('move step 1 to the end').edits).toEqual([
      { kind: 'move-to', step: { number: 1 }, position: 'end' },
    ]);
    expect(parseReviewNote('remove step set-env-list').edits).toEqual([{ kind: 'drop', step: { id: 'set-env-list' } }]);
    expect(parseReviewNote('add `kubectl get pods -n orders` after step 3').edits).toEqual([
      { kind: 'add', command: 'kubectl get pods -n orders', position: 'after', anchor: { number: 3 } },
    ]);
  });

  it('keeps what it cannot read instead of guessing', () => {
    expect(parseReviewNote('Add a step that checks the PVC again')).toEqual({
      edits: [],
      unparsed: ['Add a step that checks the PVC again'],
    });
    expect(parseReviewNote('step 2 looks risky').unparsed).toEqual(['step 2 looks risky']);
  });
});

describe('revisePlan', () => {
  it('drops a step and lets what waited for it wait for its own needs', () => {
    const {
      plan: revised,
      applied,
      question,
    } = revisePlan(plan, { note: 'drop step 2', number: 1, requestedBy: 'U2' });
    expect(question).toBeUndefined();
    expect(applied).toEqual([
      'dropped step 2 (kubectl set env deployment/order-worker -n orders -c order-worker --list)',
    ]);
    expect(revised.steps.map((s) => s.id)).toEqual([
      'logs-order-worker',
      'set-env-order-worker',
      'verify-order-worker',
    ]);
    expect(revised.steps[1]?.needs).toEqual(['logs-order-worker']);
    expect(revised.revision).toMatchObject({ number: 1, note: 'drop step 2', requestedBy: 'U2', applied });
    expect(guardPlan(revised).ok).toBe(true);
  });

  it('replaces a step with the typed command, classified and keeping the rollback of the change it replaces', () => {
    const { plan: revised } = revisePlan(plan, {
      note: 'replace step 3 with `kubectl rollout restart deployment order-worker -n orders`',
      number: 1,
    });
    const step = revised.steps[2];
    expect(step).toMatchObject({
      command: 'kubectl rollout restart deployment order-worker -n orders',
      mode: 'write',
      safety: 'REQUIRES_APPROVAL',
      rollback: 'kubectl rollout undo deployment order-worker -n orders',
      needs: ['logs-order-worker', 'set-env-list'],
    });
    expect(revised.steps[3]?.needs).toEqual([step?.id]);
  });

  it('refuses a move the schema guard rejects, and asks about it', () => {
    const { plan: revised, applied, question } = revisePlan(plan, { note: 'move step 3 before step 1', number: 1 });
    expect(applied).toEqual([]);
    expect(revised.steps.map((s) => s.id)).toEqual(plan.steps.map((s) => s.id));
    expect(question).toMatch(
      /moved step 3 .* before step 1 would break the plan .*needs "logs-order-worker", which comes later/,
    );
    expect(revised.revision?.question).toBe(question);
  });

  it('switches to the alternative and keeps the previous fix as one', () => {
    const { plan: revised, applied } = revisePlan(plan, { note: 'use the alternative', number: 1 });
    expect(applied).toEqual(['chose alternative 1: Correct the value in the ConfigMap and restart the workload']);
    expect(revised.summary).toBe('Correct the value in the ConfigMap and restart the workload');
    expect(revised.steps.map((s) => s.id)).toEqual(['get-configmap', 'patch-configmap']);
    expect(revised.alternatives?.[0]?.steps.map((s) => s.id)).toEqual(plan.steps.map((s) => s.id));
  });

  it('answers an unreadable note with a revision that records it and asks a question about it', () => {
    const {
      plan: revised,
      applied,
      question,
    } = revisePlan(plan, {
      note: 'Add a step that checks the PVC again',
      number: 1,
    });
    expect(applied).toEqual([]);
    expect(question).toMatch(/another step: which command should it run, and where\?/);
    expect(revised.revision).toMatchObject({ note: 'Add a step that checks the PVC again', question });
    expect(revised).not.toEqual(plan);
    expect(revisePlan(plan, { note: 'step 9 is wrong', number: 1 }).question).toMatch(/What should change in step 9/);
  });

  it('asks for a rollback when a replacement changes the cluster and none is known', () => {
    const { question } = revisePlan(plan, {
      note: 'replace step 1 with `kubectl delete pod order-worker-69b7c4d8f5-fk2lp -n orders`',
      number: 1,
    });
    expect(question).toMatch(/changes the cluster and has no rollback/);
    expect(revisePlan(plan, { note: 'drop step 7', number: 1 }).question).toMatch(
      /there is no step 7 \(the plan has 4 steps\)/,
    );
  });
});
