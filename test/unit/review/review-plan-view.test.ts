import { describe, expect, it } from 'vitest';
import { messageBlockProblems } from '../../../local/slack/block-rules.js';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import { answerFromPlan } from '../../../src/diagnosis/resolving.js';
import { PLAN_VERSION, type PlanStep, type RemediationPlan } from '../../../src/review/plan.js';
import { revisePlan } from '../../../src/review/revise.js';
import { reviewPlan } from '../../../src/review/rubric.js';
import { approvedPlanView, dependencyLine, planReviewView } from '../../../src/views/plan.js';

const step = (id: string, command: string, needs: string[] = [], rollback?: string): PlanStep => ({
  id,
  description: `do ${id}`,
  command,
  mode: rollback ? 'write' : 'read',
  safety: rollback ? 'REQUIRES_APPROVAL' : 'SAFE',
  needs,
  ...(rollback ? { rollback } : {}),
});

const plan: RemediationPlan = {
  plan_version: PLAN_VERSION,
  name: 'fix-order-worker',
  summary: 'Set the missing environment variable',
  rootCause: 'missing DATABASE_URL',
  namespace: 'orders',
  author: 'U1',
  steps: [
    step('logs', 'kubectl logs order-worker-1 -n orders --previous'),
    step('env-list', 'kubectl set env deployment/order-worker -n orders --list'),
    step('history', 'kubectl rollout history deployment order-worker -n orders'),
    step(
      'set-env',
      'kubectl set env deployment/order-worker -n orders DATABASE_URL=<correct-value>',
      ['logs', 'env-list'],
      'kubectl rollout undo deployment order-worker -n orders',
    ),
    step('verify', 'kubectl rollout status deployment/order-worker -n orders', ['set-env']),
  ],
  alternatives: [
    {
      id: 'configmap',
      summary: 'Correct the value in the ConfigMap',
      steps: [step('get-cm', 'kubectl get configmap order-worker-config -n orders -o yaml')],
    },
  ],
};

/** The text of the section that shows step `n`. */
function stepSection(blocks: readonly unknown[], n: number): string {
  const texts = blocks.map((b) => JSON.stringify(b));
  return texts.find((t) => t.includes(`*${n}. `)) ?? '';
}

describe('plan step numbering', () => {
  it('writes dependencies with the numbers shown, on the title line of the step that waits', () => {
    expect(dependencyLine(plan.steps, plan.steps[3] as PlanStep)).toBe('after steps 1 and 2');
    expect(dependencyLine(plan.steps, plan.steps[4] as PlanStep)).toBe('after step 4');
    expect(dependencyLine(plan.steps, plan.steps[0] as PlanStep)).toBeUndefined();
    const view = planReviewView({
      sessionId: 'S',
      approvalId: 'A',
      plan,
      revision: 0,
      expiresAt: '2025-01-01T10:00:00.000Z',
    });
    const fourth = stepSection(view.blocks, 4);
    expect(fourth).toMatch(/\*4\. do set-env\*.* _write, after steps 1 and 2_\\n```kubectl set env/);
    expect(stepSection(view.blocks, 5)).toContain('_read, after step 4_');
    expect(stepSection(view.blocks, 3)).not.toContain('after');
    expect(JSON.stringify(view.blocks)).not.toMatch(/step-\d|after (set-env|logs)/);
    expect(JSON.stringify(view.blocks)).toContain('Alternative 1: Correct the value in the ConfigMap');
    expect(messageBlockProblems(view.blocks)).toEqual([]);
  });

  it('numbers the approved plan the same way, and answers a change request with that number', () => {
    const approved = approvedPlanView({ sessionId: 'S', plan, approvedBy: 'U2', autonomous: false });
    expect(stepSection(approved.blocks, 4)).toContain('after steps 1 and 2');
    const answer = answerFromPlan(classifyRequest('kubectl set env deploy/order-worker -n orders DATABASE_URL=x'), {
      id: 'p',
      title: plan.summary,
      steps: plan.steps,
    });
    expect(answer.matched && answer.message).toMatch(/, step 4: do set-env/);
  });

  it('shows what a revision changed, or the question it asks the reviewer', () => {
    const changed = revisePlan(plan, { note: 'drop step 3', number: 1, requestedBy: 'U2' }).plan;
    const view = planReviewView({
      sessionId: 'S',
      approvalId: 'A',
      plan: changed,
      revision: 1,
      expiresAt: 'x'.repeat(20),
    });
    const text = JSON.stringify(view.blocks);
    expect(text).toContain('revision 1');
    expect(text).toContain('Changes asked by <@U2>:* _drop step 3_');
    expect(text).toContain('• dropped step 3 (kubectl rollout history deployment order-worker -n orders)');
    expect(stepSection(view.blocks, 3)).toContain('after steps 1 and 2');

    const asked = revisePlan(plan, { note: 'this looks off', number: 1, requestedBy: 'U2' }).plan;
    const question = JSON.stringify(
      planReviewView({ sessionId: 'S', approvalId: 'A', plan: asked, revision: 1, expiresAt: 'x'.repeat(20) }).blocks,
    );
    expect(question).toContain(':question: <@U2>: I could not turn');
  });

  it('lists the names and values the reviewer must still fill in', () => {
    const review = reviewPlan(plan, { completeness: 1, overrideActive: false });
    const view = planReviewView({
      sessionId: 'S',
      approvalId: 'A',
      plan,
      review,
      revision: 0,
      expiresAt: 'x'.repeat(20),
    });
    expect(JSON.stringify(view.blocks)).toContain(
      ':mag: every object is named; values to choose: &lt;correct-value&gt; (step 4)',
    );
  });
});
