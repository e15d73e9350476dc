import { describe, expect, it } from 'vitest';
import { resolutionFromSession } from '../../../src/memory/resolution.js';
import type { PlanStep } from '../../../src/review/plan.js';
import type { TimelineEvent } from '../../../src/store/timeline.js';

const steps: PlanStep[] = [
  {
    id: 'logs',
    description: 'Read the decisive log line.',
    command: 'kubectl logs order-worker-69b7c4d8f5-fk2lp -n orders -c order-worker --previous',
    mode: 'read',
    safety: 'SAFE',
    needs: [],
  },
  {
    id: 'set-env',
    description: 'Set DATABASE_URL on order-worker.',
    command: 'kubectl set env deployment/order-worker -n orders -c order-worker DATABASE_URL=<correct-value>',
    mode: 'write',
    safety: 'REQUIRES_APPROVAL',
    rollback: 'kubectl rollout undo deployment order-worker -n orders',
    needs: ['logs'],
  },
  {
    id: 'verify',
    description: 'Wait for the rollout.',
    command: 'kubectl rollout status deployment/order-worker -n orders',
    mode: 'read',
    safety: 'SAFE',
    needs: ['set-env'],
  },
];

let seq = 0;
const event = (type: string, actor: string, summary?: string, at = '2025-11-21T10:00:00.000Z'): TimelineEvent => ({
  sessionId: 'S1',
  at,
  seq: seq++,
  type,
  actor,
  ...(summary ? { summary } : {}),
});

describe('resolutionFromSession', () => {
  it('keeps what the person reported running for an approved change, and the changes the plan did not have', () => {
    const timeline = [
      event('input.consumed', 'U1', 'kubectl scale deployment order-worker --replicas=0 -n orders'),
      event('human_review_approved', 'U2'),
      event('input.consumed', 'U1', 'kubectl get pods -n orders'),
      event(
        'input.consumed',
        'U1',
        'ran `kubectl set env deploy/order-worker -c order-worker -n orders DATABASE_URL=postgres://orders-db:5432/orders`',
      ),
      event('input.consumed', 'U1', 'kubectl rollout restart deployment order-worker -n orders'),
    ];
    expect(resolutionFromSession({ steps, timeline })).toEqual([
      {
        command:
          'kubectl set env deploy/order-worker -c order-worker -n orders DATABASE_URL=postgres://orders-db:5432/orders',
        description:
          'Set DATABASE_URL on order-worker. Reported run; approved as step 2: kubectl set env deployment/order-worker -n orders -c order-worker DATABASE_URL=<correct-value>.',
        rollback: 'kubectl rollout undo deployment order-worker -n orders',
      },
      {
        command: 'kubectl rollout restart deployment order-worker -n orders',
        description: 'Reported run after approval; not a step of the approved plan.',
      },
    ]);
  });

  it('never keeps a credential someone pasted, and falls back to the fix report without a plan', () => {
    const timeline = [
      event('input.consumed', 'U1', 'kubectl create secret generic db -n orders --from-literal=password=Sup3rS3cret'),
    ];
    const [only] = resolutionFromSession({ timeline });
    expect(only?.command).toMatch(/^kubectl create secret generic db -n orders/);
    expect(only?.command).not.toContain('Sup3rS3cret');
    expect(resolutionFromSession({ timeline: [], fixReport: 'Reported resolved: resolved' })).toEqual([
      { command: 'manual fix (no approved plan)', description: 'Reported resolved: resolved' },
    ]);
  });

  it('keeps the approved changes when nobody typed what they ran', () => {
    const out = resolutionFromSession({ steps, timeline: [event('human_review_approved', 'U2')] });
    expect(out.map((s) => s.command)).toEqual([steps[1]?.command]);
    expect(out[0]?.description).toBe('Set DATABASE_URL on order-worker.');
  });
});
