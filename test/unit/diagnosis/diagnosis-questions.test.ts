import { describe, expect, it } from 'vitest';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import { answerQuestion, explainCause, retriageAnswer } from '../../../src/diagnosis/questions.js';
import type { ApprovalRecord } from '../../../src/store/approvals.js';
import { acknowledgeWhilePending, pendingAckText } from '../../../src/workflow/pending-ack.js';
import { envelope, finding } from '../../support/diagnosis-fixtures.js';

const env = envelope();
const ask = (text: string) => answerQuestion(classifyRequest(text), env, 'payments');

describe('questions are answered from the incident', () => {
  it('reads the logs of the pod the findings name, its previous container when it crashed', () => {
    expect(ask('show me the logs').read).toMatchObject({ verb: 'logs', name: 'db-0', namespace: 'payments' });
    const crash = envelope({
      findings: [finding({ code: 'CRASH_LOOP', resource: { kind: 'Pod', name: 'api-1', namespace: 'payments' } })],
      rootCause: [],
    });
    expect(answerQuestion(classifyRequest('show me the logs'), crash, 'payments').read).toMatchObject({
      name: 'api-1',
      previous: true,
    });
    const noPod = envelope({ findings: [], rootCause: [] });
    const listed = answerQuestion(classifyRequest('show me the logs'), noPod, 'payments');
    expect(listed.read).toMatchObject({ verb: 'list', kind: 'pods' });
    expect(listed.facts.at(-1)).toMatch(/name one for its logs/);
  });

  it('reads a pod of the workload or Service the findings name when they name no pod', () => {
    const unready = envelope({
      findings: [
        finding({
          code: 'SERVICE_NO_ENDPOINTS',
          resource: { kind: 'Service', name: 'inventory', namespace: 'inventory' },
          owner: { kind: 'Deployment', name: 'inventory', namespace: 'inventory' },
        }),
      ],
      rootCause: [],
    });
    const answer = answerQuestion(
      classifyRequest('Show the logs of the backend pods that are not ready'),
      unready,
      'inventory',
    );
    expect(answer.read).toMatchObject({ verb: 'logs', kind: 'deployments', name: 'inventory', namespace: 'inventory' });
    expect(answer.facts.join('\n')).not.toMatch(/name one/);
  });

  it('aims a question at the object its words point to, with the findings that speak to it', () => {
    const claim = ask('Is a pod waiting on this claim?');
    expect(claim.read).toMatchObject({ verb: 'get', kind: 'pods', name: 'db-0' });
    expect(claim.facts.some((f) => f.startsWith('POD_UNSCHEDULABLE'))).toBe(true);
    expect(ask('Which StorageClass is the default?').read).toMatchObject({ verb: 'list', kind: 'storageclasses' });
    expect(ask('Are the pending pods waiting on a volume claim?').read).toMatchObject({ verb: 'list', kind: 'pods' });
    expect(ask('What changed in this namespace in the last hour?').read).toMatchObject({ verb: 'events' });
    expect(ask('Show the events of the pending claim').read).toMatchObject({ verb: 'events', name: 'data-db-0' });
    // A typed name wins, in the namespace the incident saw it in.
    expect(ask('Does the pod api-7f9c-abcde have a pull secret?').read).toMatchObject({
      kind: 'pods',
      name: 'api-7f9c-abcde',
      namespace: 'payments',
    });
  });

  it('explains a ranked cause and how to confirm it, and says when there is none', () => {
    const lines = explainCause(
      'Explain PVC_PENDING for PersistentVolumeClaim data-db-0 and how to confirm it',
      env,
      'payments',
    );
    expect(lines[0]).toMatch(/^PVC_PENDING \(ranked #1, 90%\) on PersistentVolumeClaim payments\/data-db-0/);
    expect(lines.join('\n')).toMatch(/How to confirm it: kubectl get persistentvolumeclaims data-db-0 -n payments/);
    expect(lines.at(-1)).toMatch(/Test #1 button/);
    expect(explainCause('Explain NOPE_CODE', env, 'payments')).toEqual([
      "NOPE_CODE is not among this incident's findings. What the triage found: PVC_PENDING, POD_UNSCHEDULABLE, CRASH_LOOP.",
    ]);
    expect(explainCause('Explain it', envelope({ findings: [], rootCause: [] }), 'payments')[0]).toMatch(
      /found nothing wrong/,
    );
  });

  it('answers "re-run the triage" with what could not be read and how to run it again', () => {
    const partial = envelope({
      evidence: {
        completeness: 0.5,
        threshold: 0.8,
        present: ['pods'],
        missing: ['logs'],
        gaps: [{ type: 'logs', reason: 'forbidden', detail: 'pods/log is forbidden' }],
      },
    });
    const lines = retriageAnswer(partial, 'payments', 'pvc-binding');
    expect(lines[0]).toMatch(/read 50% of what it needs \(needs 80%\)/);
    expect(lines[1]).toBe('• logs: forbidden (pods/log is forbidden)');
    expect(lines[2]).toMatch(/`\/triage pvc-binding in payments`/);
    expect(retriageAnswer(env, 'payments', 'pvc-binding')[0]).toMatch(/a re-run would read the same/);
  });
});

describe('a reply held behind a pending decision', () => {
  const approval = (kind: string): ApprovalRecord => ({
    id: 'ap-1',
    kind,
    sessionId: 'S1',
    allowedDeciders: ['USENIOR', 'UOTHER'],
    status: 'pending',
    createdAt: '2025-08-10T04:00:00.000Z',
    expiresAt: '2025-08-10T05:00:00.000Z',
  });
  const deps = (pending: ApprovalRecord[]) => ({
    now: () => new Date('2025-08-10T04:10:00.000Z'),
    store: {
      approvals: { listPendingForSession: async () => pending },
      sessions: { getRequired: async () => ({ id: 'S1', channelId: 'C1', threadTs: '1.2' }) },
    } as never,
  });

  it('is acknowledged with what is pending and who decides it', async () => {
    const posts: Array<{ channel: string; ts: string; text: string }> = [];
    const post = async (channel: string, ts: string, m: { text: string }) => {
      posts.push({ channel, ts, text: m.text });
    };
    const text = await acknowledgeWhilePending(deps([approval('plan-review')]), post, { sessionId: 'S1' }, 'busy');
    expect(text).toBe(pendingAckText(approval('plan-review')));
    expect(posts).toEqual([
      {
        channel: 'C1',
        ts: '1.2',
        text: expect.stringMatching(
          /remediation plan is waiting for review \(<@USENIOR>, <@UOTHER> can decide, until 05:00 UTC\)/,
        ),
      },
    ]);
  });

  it('is left to the execution when it was delivered, or when nothing it waits on is pending', async () => {
    const post = async () => {
      throw new Error('nothing should be posted');
    };
    expect(
      await acknowledgeWhilePending(deps([approval('plan-review')]), post, { sessionId: 'S1' }, 'delivered'),
    ).toBeUndefined();
    expect(
      await acknowledgeWhilePending(deps([approval('break-glass')]), post, { sessionId: 'S1' }, 'busy'),
    ).toBeUndefined();
    expect(await acknowledgeWhilePending(deps([]), post, { sessionId: 'S1' }, 'busy')).toBeUndefined();
  });
});
