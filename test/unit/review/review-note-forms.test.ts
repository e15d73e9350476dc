import { describe, expect, it } from 'vitest';
import { guardPlan, PLAN_VERSION, type PlanStep, type RemediationPlan } from '../../../src/review/plan.js';
import { revisePlan } from '../../../src/review/revise.js';
import { reviewPlan } from '../../../src/review/rubric.js';

/**
 * Every edit and note form docs/workflow.md lists ("Revisions from the reviewer's note"), applied to a plan as
 * calmops writes it, and the names rule reviewer edits are held to.
 */

const read = (id: string, command: string, extra: Partial<PlanStep> = {}): PlanStep => ({
  id,
  description: `read ${id}`,
  command,
  mode: 'read',
  safety: 'SAFE',
  needs: [],
  ...extra,
});
const write = (id: string, command: string, rollback: string, needs: string[], extra: Partial<PlanStep> = {}) =>
  ({
    id,
    description: `change ${id}`,
    command,
    mode: 'write',
    safety: 'REQUIRES_APPROVAL',
    rollback,
    needs,
    ...extra,
  }) satisfies PlanStep;

const storage: RemediationPlan = {
  plan_version: PLAN_VERSION,
  name: 'fix-pvc-storageclass-not-found-training-cache',
  summary: 'Create the missing StorageClass',
  rootCause: 'PVC training-cache asks for StorageClass "fast-ssd", which does not exist.',
  namespace: 'ml-team',
  author: 'U1',
  steps: [
    read('get-storageclass', 'kubectl get storageclass -o yaml', { saves: ['storageclass-fast-ssd.yaml'] }),
    write(
      'apply-storageclass-fast-ssd',
      'kubectl apply -f storageclass-fast-ssd.yaml',
      'kubectl delete storageclass fast-ssd',
      ['get-storageclass'],
    ),
    read('get-pvc-training-cache', 'kubectl get pvc training-cache -n ml-team -o yaml', {
      saves: ['pvc-training-cache.yaml'],
    }),
    read('verify-pvc-training-cache', "kubectl get pvc training-cache -n ml-team -o jsonpath='{.status.phase}'", {
      needs: ['apply-storageclass-fast-ssd'],
    }),
  ],
  alternatives: [
    {
      id: 'point-the-claim-at-an-existing-storageclass',
      summary: 'Point the claim at an existing StorageClass',
      steps: [
        read('get-pvc-training-cache', 'kubectl get pvc training-cache -n ml-team -o yaml', {
          saves: ['pvc-training-cache.yaml', 'pvc-training-cache-with-class.yaml'],
        }),
        write(
          'delete-pvc-training-cache',
          'kubectl delete pvc training-cache -n ml-team',
          'kubectl apply -f pvc-training-cache.yaml',
          ['get-pvc-training-cache'],
          { safety: 'DANGEROUS' },
        ),
        write(
          'apply-pvc-training-cache-with-class',
          'kubectl apply -f pvc-training-cache-with-class.yaml',
          'kubectl delete pvc training-cache -n ml-team',
          ['get-pvc-training-cache', 'delete-pvc-training-cache'],
        ),
      ],
    },
  ],
};

const orders: RemediationPlan = {
  plan_version: PLAN_VERSION,
  name: 'fix-container-crashloop-config-error-order-worker',
  summary: 'Set the missing or wrong environment variable on the workload',
  rootCause: 'missing required environment variable DATABASE_URL',
  namespace: 'orders',
  author: 'U1',
  steps: [
    read('logs-order-worker', 'kubectl logs order-worker-69b7c4d8f5-fk2lp -n orders -c order-worker --previous'),
    read('list-env-order-worker', 'kubectl set env deployment/order-worker -n orders -c order-worker --list'),
    write(
      'set-env-order-worker',
      'kubectl set env deployment/order-worker -n orders -c order-worker DATABASE_URL=<correct-value>',
      'kubectl rollout undo deployment order-worker -n orders',
      ['logs-order-worker', 'list-env-order-worker'],
    ),
    read('verify-order-worker', 'kubectl rollout status deployment/order-worker -n orders --timeout=5m', {
      needs: ['set-env-order-worker'],
    }),
  ],
};

const known = [
  { kind: 'PersistentVolumeClaim', name: 'training-cache' },
  { kind: 'Deployment', name: 'order-worker' },
];
const revise = (plan: RemediationPlan, note: string) => revisePlan(plan, { note, number: 1, requestedBy: 'U2', known });
const commands = (plan: RemediationPlan) => plan.steps.map((s) => s.command);

describe('every documented note form', () => {
  it('drop step 2, remove/skip, several at once', () => {
    for (const note of ['drop step 3', 'remove step 3', 'skip step 3']) {
      const r = revise(storage, note);
      expect(r.question).toBeUndefined();
      expect(commands(r.plan)).not.toContain('kubectl get pvc training-cache -n ml-team -o yaml');
    }
    const both = revise(orders, 'drop steps 1 and 2');
    expect(both.plan.steps.map((s) => s.id)).toEqual(['set-env-order-worker', 'verify-order-worker']);
  });

  it('replace step N with `kubectl …`, with or without its rollback', () => {
    const kept = revise(
      orders,
      'replace step 3 with `kubectl set env deployment/order-worker -n orders DATABASE_URL=postgres://db`',
    );
    expect(kept.plan.steps[2]).toMatchObject({
      command: 'kubectl set env deployment/order-worker -n orders DATABASE_URL=postgres://db',
      rollback: 'kubectl rollout undo deployment order-worker -n orders',
      targets: [{ kind: 'Deployment', name: 'order-worker', namespace: 'orders' }],
    });
    const own = revise(
      orders,
      'replace step 3 with `kubectl set env deployment/order-worker -n orders DATABASE_URL=postgres://db` rollback `kubectl set env deployment/order-worker -n orders DATABASE_URL-`',
    );
    expect(own.plan.steps[2]?.rollback).toBe('kubectl set env deployment/order-worker -n orders DATABASE_URL-');
  });

  it('move step N before step M, to the end; swap steps', () => {
    expect(revise(storage, 'move step 3 before step 1').plan.steps[0]?.id).toBe('get-pvc-training-cache');
    expect(revise(storage, 'move step 3 to the end').plan.steps.at(-1)?.id).toBe('get-pvc-training-cache');
    expect(
      revise(storage, 'swap steps 3 and 4')
        .plan.steps.map((s) => s.id)
        .slice(2),
    ).toEqual(['verify-pvc-training-cache', 'get-pvc-training-cache']);
  });

  it('refuses a move that would run a change before the read it needs', () => {
    const r = revise(storage, 'move step 2 before step 1');
    expect(r.applied).toEqual([]);
    expect(r.question).toMatch(/needs "get-storageclass", which comes later/);
  });

  it('add `kubectl …` after step N', () => {
    const r = revise(storage, 'add `kubectl describe pvc training-cache -n ml-team` after step 2');
    expect(r.plan.steps[2]?.command).toBe('kubectl describe pvc training-cache -n ml-team');
  });

  it('use the alternative / use alternative 1', () => {
    for (const note of ['use the alternative', 'use alternative 1']) {
      const r = revise(storage, note);
      expect(r.plan.summary).toBe('Point the claim at an existing StorageClass');
      expect(r.plan.alternatives?.[0]?.summary).toBe('Create the missing StorageClass');
    }
  });

  it('take VAR from configmap NAME, once something creates it; skip step N in the same note', () => {
    const r = revise(
      orders,
      'add `kubectl create configmap order-worker-config -n orders --from-literal=DATABASE_URL=postgres://db` rollback `kubectl delete configmap order-worker-config -n orders` before step 3, take DATABASE_URL from configmap order-worker-config, and skip step 1',
    );
    expect(r.question).toBeUndefined();
    const set = r.plan.steps.find((s) => s.id === 'set-env-order-worker');
    expect(set?.command).toBe(
      'kubectl set env deployment/order-worker -n orders -c order-worker --from=configmap/order-worker-config --keys=DATABASE_URL',
    );
    expect(r.plan.steps.some((s) => s.id === 'logs-order-worker')).toBe(false);
    expect(guardPlan(r.plan).ok).toBe(true);
  });

  it('take DATABASE_URL from the ConfigMap, naming none: skip step 1 is applied, the rest is asked about step 3', () => {
    const r = revise(orders, 'take DATABASE_URL from the ConfigMap, and skip step 1');
    expect(r.applied).toEqual([
      'dropped step 1 (kubectl logs order-worker-69b7c4d8f5-fk2lp -n orders -c order-worker --previous)',
    ]);
    expect(r.question).toMatch(
      /step 3 \(kubectl set env deployment\/order-worker .*DATABASE_URL=<correct-value>\) sets DATABASE_URL; "take DATABASE_URL from the ConfigMap" names no ConfigMap/,
    );
  });
});

describe('reviewer edits pass the names rule synthesized plans pass', () => {
  it('refuses an invalid name with the reason, attributed to the step, and the names check does not pass', () => {
    const r = revise(storage, 'replace step 3 with `kubectl delete pvc Training_Cache -n ml-team`');
    expect(r.applied).toEqual([]);
    expect(r.question).toMatch(
      /step 3 \(kubectl get pvc training-cache -n ml-team -o yaml\): `kubectl delete pvc Training_Cache -n ml-team` names PersistentVolumeClaim Training_Cache: "Training_Cache" is not a valid Kubernetes name/,
    );
    expect(commands(r.plan).join('\n')).not.toContain('Training_Cache');
    const names = reviewPlan(r.plan, { completeness: 1, overrideActive: false }).checks.find((c) => c.id === 'names');
    expect(names).toMatchObject({
      passed: false,
      detail: expect.stringMatching(/refused at review: "Training_Cache"/),
    });
  });

  it('refuses an object the evidence does not show and no step creates', () => {
    const r = revise(
      storage,
      'add `kubectl delete pvc scratch-space -n ml-team` rollback `kubectl apply -f x.yaml` at the end',
    );
    expect(r.applied).toEqual([]);
    expect(r.question).toMatch(
      /PersistentVolumeClaim scratch-space, which the evidence does not show exists and no step creates/,
    );
  });

  it('refuses a ConfigMap nobody creates', () => {
    const r = revise(orders, 'take DATABASE_URL from configmap order-worker-config');
    expect(r.question).toMatch(/ConfigMap order-worker-config is not in the evidence and no step creates it/);
  });
});
