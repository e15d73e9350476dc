import { describe, expect, it } from 'vitest';
import { kubeInvocations, matchPlanStep } from '../../../src/review/match.js';
import type { PlanStep } from '../../../src/review/plan.js';

const step = (id: string, command: string, extra: Partial<PlanStep> = {}): PlanStep => ({
  id,
  description: id,
  command,
  mode: extra.rollback ? 'write' : 'read',
  safety: extra.rollback ? 'REQUIRES_APPROVAL' : 'SAFE',
  needs: [],
  ...extra,
});

/** The orders plan as the synthesizer writes it: read, save, change, verify. */
const plan = {
  steps: [
    step(
      'logs-order-worker',
      'kubectl logs order-worker-69b7c4d8f5-fk2lp -n orders -c order-worker --previous --tail=100',
    ),
    step('set-env-list', 'kubectl set env deployment/order-worker -n orders -c order-worker --list'),
    step(
      'set-env-order-worker',
      'kubectl set env deployment/order-worker -n orders -c order-worker DATABASE_URL=<correct-value>',
      {
        rollback: 'kubectl rollout undo deployment order-worker -n orders',
        needs: ['logs-order-worker', 'set-env-list'],
      },
    ),
    step('rollout-restart-order-worker', 'kubectl rollout restart deployment order-worker -n orders', {
      rollback: 'kubectl rollout undo deployment order-worker -n orders --to-revision=4',
      needs: ['set-env-order-worker'],
    }),
    step('verify', 'kubectl rollout status deployment/order-worker -n orders --timeout=5m', {
      needs: ['rollout-restart-order-worker'],
    }),
    step(
      'patch-configmap',
      `kubectl patch configmap order-worker-config -n orders --type=merge -p '{"data":{"DATABASE_URL":"<correct-value>"}}'`,
      { rollback: 'kubectl apply -f configmap-order-worker-config.yaml' },
    ),
  ],
};

describe('matchPlanStep', () => {
  it('finds the restart step however the command is spelled', () => {
    for (const typed of [
      'kubectl rollout restart deployment order-worker -n orders',
      'kubectl rollout restart deployment/order-worker -n orders',
      'kubectl rollout restart deploy/order-worker --namespace=orders',
      'kubectl -n orders rollout restart deploy order-worker',
      'kubectl --namespace orders rollout restart deployments.apps/order-worker',
      'oc rollout restart deployment order-worker -n=orders',
      '`kubectl rollout restart deployment order-worker -n orders`',
    ]) {
      expect(matchPlanStep(plan, typed), typed).toMatchObject({ stepIndex: 3, via: 'command' });
    }
  });

  it('tells whether the steps a change needs were run first', () => {
    const typed = 'kubectl rollout restart deployment order-worker -n orders';
    expect(matchPlanStep(plan, typed)?.inOrder).toBe(false);
    expect(matchPlanStep(plan, typed, { completed: [2] })?.inOrder).toBe(true);
    expect(matchPlanStep(plan, 'kubectl logs order-worker-69b7c4d8f5-fk2lp -n orders -c order-worker -p')).toEqual({
      stepIndex: 0,
      inOrder: true,
      via: 'command',
      namespaceAssumed: false,
    });
  });

  it('fills a placeholder with any value and compares flags regardless of order', () => {
    const typed =
      'kubectl set env -c order-worker deploy/order-worker DATABASE_URL=postgres://orders-db:5432/orders -n orders';
    expect(matchPlanStep(plan, typed, { completed: [0, 1] })).toMatchObject({ stepIndex: 2, inOrder: true });
    expect(
      matchPlanStep(
        plan,
        `kubectl patch cm order-worker-config --namespace orders -p '{"data": {"DATABASE_URL": "postgres://x"}}' --type=merge`,
      ),
    ).toMatchObject({ stepIndex: 5 });
  });

  it('ignores output and wait flags, not flags that change what happens', () => {
    expect(matchPlanStep(plan, 'kubectl rollout status deploy/order-worker -n orders -w')?.stepIndex).toBe(4);
    expect(matchPlanStep(plan, 'kubectl set env deployment/order-worker -n orders -c other DATABASE_URL=x')).toBe(
      undefined,
    );
    expect(matchPlanStep(plan, 'kubectl rollout restart deployment order-worker -n orders --dry-run=client')).toBe(
      undefined,
    );
  });

  it('recognises a rollback, and says whether its step was run', () => {
    const typed = 'kubectl rollout undo deployment/order-worker -n orders --to-revision=4';
    expect(matchPlanStep(plan, typed)).toMatchObject({ stepIndex: 3, via: 'rollback', inOrder: false });
    expect(matchPlanStep(plan, typed, { completed: [3] })).toMatchObject({ stepIndex: 3, inOrder: true });
  });

  it('refuses another object, another namespace, another verb, and what is not kubectl', () => {
    expect(matchPlanStep(plan, 'kubectl rollout restart deployment payments -n orders')).toBeUndefined();
    expect(matchPlanStep(plan, 'kubectl rollout restart deployment order-worker -n shop')).toBeUndefined();
    expect(matchPlanStep(plan, 'kubectl delete deployment order-worker -n orders')).toBeUndefined();
    expect(matchPlanStep(plan, 'restart order-worker please')).toBeUndefined();
    expect(matchPlanStep(plan, '')).toBeUndefined();
  });

  it("assumes the step's namespace when the command names none, and says so", () => {
    expect(matchPlanStep(plan, 'kubectl rollout restart deploy order-worker')).toMatchObject({
      stepIndex: 3,
      namespaceAssumed: true,
    });
  });

  it('prefers the first equal step not yet run', () => {
    const twice = {
      steps: [step('a', 'kubectl get pods -n orders'), step('b', 'kubectl get pods -n orders', { needs: ['a'] })],
    };
    expect(matchPlanStep(twice, 'kubectl get po -n orders')?.stepIndex).toBe(0);
    expect(matchPlanStep(twice, 'kubectl get po -n orders', { completed: [0] })).toMatchObject({
      stepIndex: 1,
      inOrder: true,
    });
  });

  it('matches a placeholder kind and name, and a typed part of a chained step', () => {
    const unknown = { steps: [step('restart', 'kubectl rollout restart <workload-kind> <workload> -n orders')] };
    expect(matchPlanStep(unknown, 'kubectl rollout restart statefulset ledger -n orders')?.stepIndex).toBe(0);
    const chained = {
      steps: [step('both', 'kubectl apply -f cm.yaml && kubectl rollout restart deployment web -n shop')],
    };
    expect(matchPlanStep(chained, 'kubectl rollout restart deploy/web -n shop')?.stepIndex).toBe(0);
    expect(matchPlanStep(chained, 'kubectl apply -f ./cm.yaml')?.stepIndex).toBe(0);
  });
});

describe('kubeInvocations', () => {
  it('reads only the kubectl parts of a pipeline', () => {
    const [only, ...rest] = kubeInvocations("kubectl get pods -A -o wide | grep -i 'ebs'");
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ verb: 'get', kind: 'pods', args: [] });
    expect(only?.flags.get('all-namespaces')).toBe(true);
  });
});
