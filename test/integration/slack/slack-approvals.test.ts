import { describe, expect, it } from 'vitest';
import { DEMO_IDS, viewProblems } from '../../../local/slack/index.js';
import { EXPIRED_TEXT } from '../../../src/slack/handlers/actions/decide-approval.js';
import { ungranted } from '../../support/cdk-table-calls.js';
import {
  blockActionBody,
  openBreakGlassModal,
  openSession,
  send,
  useSlackHarness,
  viewSubmissionBody,
} from '../../support/slack-harness.js';

const { requester, senior, engineer } = DEMO_IDS;

describe('buttons and modals through the real handler', () => {
  const h = useSlackHarness();

  /** An approval message as the notifier posts it: a section and the buttons carrying the approval id. */
  async function approvalMessage(
    kind: string,
    options: {
      data?: Record<string, unknown>;
      deciders?: string[];
      expiresInMs?: number;
      sessionRequester?: string;
    } = {},
  ) {
    const { session, threadTs } = await openSession(h, { requester: options.sessionRequester ?? requester });
    const now = new Date(Date.now() - 60_000);
    const approval = await h.store.approvals.create(
      {
        kind,
        sessionId: session.id,
        token: `token-${kind}-${session.id}`,
        allowedDeciders: options.deciders ?? [requester, senior, engineer],
        requester: options.sessionRequester ?? requester,
        expiresAt: new Date(Date.now() + (options.expiresInMs ?? 600_000)),
        summary: `${kind} waiting`,
        data: { channelId: DEMO_IDS.incidents, threadTs, ...options.data },
      },
      now,
    );
    const blocks = [
      { type: 'section', text: { type: 'mrkdwn', text: `*${kind}* for ${session.id}` } },
      {
        type: 'actions',
        block_id: 'approval',
        elements: [
          {
            type: 'button',
            action_id: 'approval_approve',
            value: approval.id,
            text: { type: 'plain_text', text: 'Approve' },
          },
          {
            type: 'button',
            action_id: 'approval_deny',
            value: approval.id,
            text: { type: 'plain_text', text: 'Deny' },
          },
        ],
      },
    ];
    const posted = await h.deps.client.chat.postMessage({
      channel: DEMO_IDS.incidents,
      thread_ts: threadTs,
      text: `${kind} waiting`,
      blocks,
    });
    h.slack.clearCalls();
    return { session, threadTs, approval, messageTs: posted.ts as string, blocks };
  }

  const click = (
    user: string,
    target: { approval: { id: string }; messageTs: string; threadTs: string; blocks: unknown[] },
    options: { actionId?: string; actionTs?: string } = {},
  ) =>
    send(
      h.handle,
      blockActionBody({
        actionId: options.actionId ?? 'approval_approve',
        value: target.approval.id,
        user,
        messageTs: target.messageTs,
        threadTs: target.threadTs,
        blocks: target.blocks,
        ...(options.actionTs === undefined ? {} : { actionTs: options.actionTs }),
      }),
    );

  const ephemeralTexts = () => h.slack.callsFor('chat.postEphemeral').map((c) => String(c.args['text']));

  it('decides a handoff once and updates the message in place without buttons', async () => {
    const target = await approvalMessage('handoff');
    const response = await click(engineer, target);
    expect(response.statusCode).toBe(200);
    expect(h.workflow.decisions).toEqual([
      {
        token: `token-handoff-${target.session.id}`,
        output: { decision: 'approve', userId: engineer, decidedAt: expect.any(String) },
      },
    ]);
    const [update] = h.slack.callsFor('chat.update');
    expect(update?.response).toMatchObject({ ok: true });
    const blocks = update?.args['blocks'] as { type: string }[];
    expect(blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(JSON.stringify(blocks)).toContain(`Approved by <@${engineer}>`);
    const message = h.slack.messages(DEMO_IDS.incidents).find((m) => m.ts === target.messageTs);
    expect(message?.edited).toBeDefined();
    expect((await h.store.approvals.get(target.approval.id))?.status).toBe('approved');
    const timeline = await h.store.timeline.list(target.session.id);
    expect(timeline.map((e) => e.type)).toContain('approval.decided');

    // A second click by someone else is harmless: an ephemeral note, no second decision, no second update.
    await click(senior, target);
    expect(h.workflow.decisions).toHaveLength(1);
    expect(h.slack.callsFor('chat.update')).toHaveLength(1);
    expect(ephemeralTexts()).toEqual([`This was already decided by <@${engineer}> (approved); nothing was changed.`]);
  });

  it('treats a duplicate delivery of the same click as nothing at all', async () => {
    const target = await approvalMessage('handoff');
    await click(engineer, target, { actionTs: '1700000100.000001' });
    const callsAfterFirst = h.slack.calls().length;
    const again = await click(engineer, target, { actionTs: '1700000100.000001' });
    expect(again.statusCode).toBe(200);
    expect(h.slack.calls()).toHaveLength(callsAfterFirst);
    expect(h.workflow.decisions).toHaveLength(1);
  });

  it('hands a recorded decision over on "click again" after its first hand-over failed, and only then', async () => {
    const target = await approvalMessage('handoff');
    const original = h.deps.workflow.sendTaskSuccess;
    let failures = 1;
    h.deps.workflow.sendTaskSuccess = async (token, output) => {
      if (failures-- > 0) throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      return original(token, output);
    };
    try {
      await click(engineer, target, { actionTs: '1700000200.000001' });
      expect(ephemeralTexts().at(-1)).toMatch(/please click again/);
      expect(h.workflow.decisions).toHaveLength(0);
      expect((await h.store.approvals.get(target.approval.id))?.status).toBe('approved');

      // Someone else's click is still "already decided"; the decider's own repeat delivers the recorded decision.
      await click(senior, target, { actionTs: '1700000200.000002' });
      expect(h.workflow.decisions).toHaveLength(0);
      await click(engineer, target, { actionTs: '1700000200.000003' });
      expect(h.workflow.decisions).toEqual([
        { token: `token-handoff-${target.session.id}`, output: expect.objectContaining({ decision: 'approve' }) },
      ]);
      // A denial by the same person is a different decision: refused, nothing sent.
      await click(engineer, target, { actionTs: '1700000200.000004', actionId: 'approval_deny' });
      expect(h.workflow.decisions).toHaveLength(1);
      expect(ephemeralTexts().at(-1)).toMatch(/already decided/);
    } finally {
      h.deps.workflow.sendTaskSuccess = original;
    }
  });

  it('says the run is gone when the task that asked no longer waits, instead of "click again"', async () => {
    const target = await approvalMessage('handoff');
    const original = h.deps.workflow.sendTaskSuccess;
    // Nobody waits on the token any more: the engine answers "closed".
    h.deps.workflow.sendTaskSuccess = async () => 'closed';
    try {
      await click(engineer, target, { actionTs: '1700000300.000001' });
      expect(ephemeralTexts().at(-1)).toMatch(/workflow run that asked for it has ended/);
      await click(engineer, target, { actionTs: '1700000300.000002' });
      expect(ephemeralTexts().at(-1)).toMatch(/already decided/);
    } finally {
      h.deps.workflow.sendTaskSuccess = original;
    }
  });

  it('lets exactly one of two simultaneous clicks win', async () => {
    const target = await approvalMessage('handoff');
    await Promise.all([click(engineer, target), click(senior, target, { actionId: 'approval_deny' })]);
    expect(h.workflow.decisions).toHaveLength(1);
    expect(h.slack.callsFor('chat.update')).toHaveLength(1);
  });

  it('refuses a wrong approver for a plan review, audits it and answers ephemerally', async () => {
    const target = await approvalMessage('plan-review', {
      data: { planAuthor: engineer, planHasMutatingSteps: true },
      deciders: [senior, engineer],
    });
    await click(requester, target);
    await click(engineer, target);
    expect(h.workflow.decisions).toEqual([]);
    expect(h.slack.callsFor('chat.update')).toEqual([]);
    const texts = ephemeralTexts();
    expect(texts[0]).toMatch(/Only members of <!subteam\^SAPPROVERS> can review remediation plans/);
    expect(texts[1]).toMatch(/someone other than its author/);
    const refusals = (await h.store.timeline.list(target.session.id)).filter((e) => e.type === 'policy.refused');
    expect(refusals.map((e) => [e.actor, e.data?.['code']])).toEqual([
      [requester, 'not-approver'],
      [engineer, 'plan-author'],
    ]);
    await click(senior, target);
    expect(h.workflow.decisions.map((d) => d.output.userId)).toEqual([senior]);
  });

  it('lets only the named senior approve break-glass, never the requester', async () => {
    const target = await approvalMessage('break-glass', {
      data: { approverUserId: senior, targetState: 'TESTING', timeLimitMinutes: 30 },
      deciders: [senior],
    });
    await click(requester, target);
    await click(engineer, target);
    expect(h.workflow.decisions).toEqual([]);
    expect(ephemeralTexts()).toEqual([
      'You asked for this override, so you cannot approve it yourself.',
      `Only <@${senior}>, the senior named in the request, can approve it.`,
    ]);
    await click(senior, target);
    expect(h.workflow.decisions.map((d) => [d.output.decision, d.output.userId])).toEqual([['approve', senior]]);
  });

  it('answers a click on an expired approval with an ephemeral "expired" and nothing else', async () => {
    // Created a minute ago, expired a second ago.
    const target = await approvalMessage('handoff', { expiresInMs: -1_000 });
    await click(engineer, target);
    expect(h.slack.calls().map((c) => c.method)).toEqual(['chat.postEphemeral']);
    expect(ephemeralTexts()).toEqual([EXPIRED_TEXT]);
    expect(h.workflow.decisions).toEqual([]);
    expect((await h.store.approvals.get(target.approval.id))?.status).toBe('pending');
    expect((await h.store.timeline.list(target.session.id)).map((e) => e.type)).toEqual([]);
  });

  describe('break-glass modal', () => {
    /** Submits the form as the person it was opened for; opens it first (as Slack would have) unless given a view. */
    const submit = async (
      user: string,
      sessionId: string,
      values: { senior?: string; justification?: string; state?: string; minutes?: string },
      view: { viewId?: string; hash?: string } = {},
    ) => {
      const opened = view.viewId === undefined ? await openBreakGlassModal(h, sessionId, user) : undefined;
      return send(
        h.handle,
        viewSubmissionBody({
          ...view,
          ...(opened === undefined ? {} : { viewId: opened.viewId }),
          callbackId: 'breakglass_request',
          user,
          privateMetadata: opened?.privateMetadata ?? JSON.stringify({ s: sessionId, c: DEMO_IDS.incidents }),
          values: {
            justification: {
              value: {
                type: 'plain_text_input',
                value: values.justification ?? 'Checkout is down for every customer and the guided steps take too long',
              },
            },
            seniorApprover: { value: { type: 'users_select', selected_user: values.senior ?? senior } },
            skipToState: { value: { type: 'static_select', selected_option: { value: values.state ?? 'TESTING' } } },
            timeLimitMinutes: { value: { type: 'number_input', value: values.minutes ?? '30' } },
          },
        }),
      );
    };

    it('returns errors in the ack when the requester names themselves as approver', async () => {
      const { session } = await openSession(h);
      const response = await submit(requester, session.id, { senior: requester });
      expect(response.statusCode).toBe(200);
      const body = JSON.parse(response.body) as { response_action: string; errors: Record<string, string> };
      expect(body.response_action).toBe('errors');
      expect(body.errors['seniorApprover']).toMatch(/someone other than the requester/);
      expect(h.workflow.delivered).toEqual([]);
      const audit = (await h.store.timeline.list(session.id)).filter((e) => e.type === 'policy.refused');
      expect(audit).toHaveLength(1);
    });

    it('files a corrected resubmission of the same view, and only once on a double click', async () => {
      const { session } = await openSession(h);
      // Slack keeps the view id and hash when the user fixes a field after a validation error.
      const view = { viewId: (await openBreakGlassModal(h, session.id, requester)).viewId, hash: '1700000000.fixed' };
      const refused = JSON.parse((await submit(requester, session.id, { senior: requester }, view)).body) as {
        response_action: string;
      };
      expect(refused.response_action).toBe('errors');
      expect((await submit(requester, session.id, {}, view)).body).toBe('');
      expect((await submit(requester, session.id, {}, view)).body).toBe('');
      expect(h.workflow.delivered.filter((d) => d.sessionId === session.id)).toHaveLength(1);
    });

    it('returns field errors for a non-senior approver, a thin justification and a bad time limit', async () => {
      const { session } = await openSession(h);
      const response = await submit(requester, session.id, {
        senior: engineer,
        justification: 'fix it now',
        minutes: '240',
      });
      const body = JSON.parse(response.body) as { response_action: string; errors: Record<string, string> };
      expect(Object.keys(body.errors).sort()).toEqual(['justification', 'seniorApprover', 'timeLimitMinutes']);
      expect(body.errors['seniorApprover']).toMatch(/not on the list of senior approvers/);
    });

    it('files a valid request as a break-glass approval for the senior and tells the session', async () => {
      const { session } = await openSession(h);
      const response = await submit(requester, session.id, {});
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('');
      const [delivered] = h.workflow.delivered;
      expect(delivered).toMatchObject({
        sessionId: session.id,
        userId: requester,
        source: 'button',
        action: { type: 'break-glass', requestId: expect.any(String) },
      });
      const requestId = (delivered?.action as { requestId: string } | undefined)?.requestId ?? '';
      const approval = await h.store.approvals.get(requestId);
      expect(approval).toMatchObject({ kind: 'break-glass', requester, allowedDeciders: [senior], status: 'pending' });
      expect(approval?.data).toMatchObject({ approverUserId: senior, targetState: 'TESTING', timeLimitMinutes: 30 });
    });
  });

  it('requests changes to a plan through a modal and sends the note', async () => {
    const target = await approvalMessage('plan-review', { data: { planAuthor: engineer, planHasMutatingSteps: true } });
    await click(senior, target, { actionId: 'approval_request_changes' });
    const [open] = h.slack.callsFor('views.open');
    expect(viewProblems(open?.args['view'])).toEqual([]);
    const view = open?.args['view'] as { private_metadata: string };
    const response = await send(
      h.handle,
      viewSubmissionBody({
        viewId: (open?.response['view'] as { id: string } | undefined)?.id ?? '',
        callbackId: 'plan_request_changes',
        user: senior,
        privateMetadata: view.private_metadata,
        values: { note: { value: { type: 'plain_text_input', value: 'Add a rollback step for the PVC resize' } } },
      }),
    );
    expect(response.body).toBe('');
    expect(h.workflow.decisions.map((d) => d.output)).toEqual([
      {
        decision: 'request-changes',
        userId: senior,
        note: 'Add a rollback step for the PVC resize',
        decidedAt: expect.any(String),
      },
    ]);
    expect(JSON.stringify(h.slack.callsFor('chat.update')[0]?.args['blocks'])).toContain('Changes requested');
  });

  it('delivers hypothesis choices and "resolved" as thread input, resolved only from the requester or an approver', async () => {
    const { session, threadTs } = await openSession(h, { requester: senior });
    await send(
      h.handle,
      blockActionBody({
        actionId: 'hypothesis_choose',
        value: JSON.stringify({ s: session.id, h: 'h2' }),
        user: engineer,
        threadTs,
      }),
    );
    await send(
      h.handle,
      blockActionBody({ actionId: 'session_resolved', value: session.id, user: requester, threadTs }),
    );
    await send(h.handle, blockActionBody({ actionId: 'session_resolved', value: session.id, user: senior, threadTs }));
    expect(h.workflow.delivered.map((d) => [d.userId, d.action])).toEqual([
      [engineer, { type: 'hypothesis', hypothesisId: 'h2' }],
      [senior, { type: 'resolved' }],
    ]);
    expect(ephemeralTexts()[0]).toMatch(/Only <@USENIOR> \(who started this session\)/);
  });

  // Runs last: everything above went through the handler, whose DynamoDB requests were recorded.
  it('sent only the table requests the Slack function’s role allows (cdk/table-access.ts)', () => {
    const actions = new Set(h.tableCalls.map((c) => c.action));
    expect(actions).toContain('dynamodb:DeleteItem');
    expect(ungranted('slack', h.tableCalls)).toEqual([]);
  });
});
