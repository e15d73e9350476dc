import { describe, expect, it } from 'vitest';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { OUTSIDE_CHANNEL_TEXT } from '../../../src/slack/handlers/session-scope.js';
import { ungranted } from '../../support/cdk-table-calls.js';
import {
  blockActionBody,
  openBreakGlassModal,
  openSession,
  send,
  slashBody,
  useSlackHarness,
  viewSubmissionBody,
} from '../../support/slack-harness.js';

const { requester, senior, engineer } = DEMO_IDS;
const elsewhere = [DEMO_IDS.notMember, DEMO_IDS.dm];

/** A valid break-glass form, as the requester would fill it in. */
const breakGlassValues = {
  justification: {
    value: {
      type: 'plain_text_input',
      value: 'Checkout is down for every customer and the guided steps take too long',
    },
  },
  seniorApprover: { value: { type: 'users_select', selected_user: senior } },
  skipToState: { value: { type: 'static_select', selected_option: { value: 'TESTING' } } },
  timeLimitMinutes: { value: { type: 'number_input', value: '30' } },
};

describe('session commands, buttons and modals act only in the session’s channel', () => {
  const h = useSlackHarness();

  const ack = async (body: string) => {
    const response = await send(h.handle, body);
    expect(response.statusCode).toBe(200);
    return response.body === '' ? undefined : (JSON.parse(response.body) as Record<string, unknown>);
  };
  const ephemeralTexts = () => h.slack.callsFor('chat.postEphemeral').map((c) => String(c.args['text']));
  const refusals = async (sessionId: string) =>
    (await h.store.timeline.list(sessionId))
      .filter((e) => e.type === 'policy.refused')
      .map((e) => [e.actor, e.data?.['action'], e.data?.['code']]);

  describe('/triage status and /triage breakglass', () => {
    it('answers status only in the session’s channel, and the same for a foreign id as for an unknown one', async () => {
      const { session } = await openSession(h);
      const here = await ack(slashBody(`status ${session.id}`));
      expect(String(here?.['text'])).toContain(`Session ${session.id}: GATHERING`);
      const unknown = await ack(slashBody('status 01NOSUCHSESSION00000000000', { channel: DEMO_IDS.notMember }));
      for (const channel of elsewhere) {
        const answer = await ack(slashBody(`status ${session.id}`, { channel, user: engineer }));
        expect(String(answer?.['text'])).toBe(
          String(unknown?.['text']).replace('01NOSUCHSESSION00000000000', session.id),
        );
        expect(JSON.stringify(answer)).not.toContain('GATHERING');
        expect(JSON.stringify(answer)).not.toContain('payments');
      }
      expect(await refusals(session.id)).toEqual([
        [engineer, 'status', 'outside-session-channel'],
        [engineer, 'status', 'outside-session-channel'],
      ]);
    });

    it('opens no break-glass modal from another channel or a DM', async () => {
      const { session } = await openSession(h);
      for (const channel of elsewhere) {
        const answer = await ack(slashBody(`breakglass ${session.id}`, { channel }));
        expect(String(answer?.['text'])).toMatch(/No session `[^`]+` exists in this channel/);
      }
      expect(h.slack.callsFor('views.open')).toEqual([]);
      expect((await refusals(session.id)).map((r) => r[2])).toEqual([
        'outside-session-channel',
        'outside-session-channel',
      ]);
      // In its own channel it opens, and the opening is recorded for the person who asked.
      const { viewId } = await openBreakGlassModal(h, session.id);
      expect(await h.store.modals.submitted(viewId, { kind: 'break-glass', userId: requester })).toMatchObject({
        sessionId: session.id,
        channelId: DEMO_IDS.incidents,
        userId: requester,
      });
    });
  });

  describe('buttons', () => {
    it('ignores approve, hypothesis, resolved and break-glass buttons clicked from another channel', async () => {
      const { session, threadTs } = await openSession(h);
      const approval = await h.store.approvals.create({
        kind: 'handoff',
        sessionId: session.id,
        token: `token-${session.id}`,
        allowedDeciders: [requester, senior, engineer],
        requester,
        expiresAt: new Date(Date.now() + 600_000),
        data: { channelId: DEMO_IDS.incidents, threadTs },
      });
      const channel = DEMO_IDS.notMember;
      const clicks = [
        { actionId: 'approval_approve', value: approval.id },
        { actionId: 'approval_request_changes', value: approval.id },
        { actionId: 'hypothesis_choose:1', value: JSON.stringify({ s: session.id, h: 'h1' }) },
        { actionId: 'session_resolved', value: session.id },
        { actionId: 'breakglass_open', value: session.id },
      ];
      for (const click of clicks) {
        await ack(blockActionBody({ ...click, user: requester, channel, threadTs }));
      }
      expect(h.workflow.decisions).toEqual([]);
      expect(h.workflow.delivered).toEqual([]);
      expect(h.slack.callsFor('views.open')).toEqual([]);
      expect((await h.store.approvals.get(approval.id))?.status).toBe('pending');
      expect(ephemeralTexts()).toEqual(clicks.map(() => OUTSIDE_CHANNEL_TEXT));
      expect((await refusals(session.id)).map((r) => r[1])).toEqual([
        'approval.approve',
        'approval.request-changes',
        'hypothesis.choose',
        'session.resolve',
        'break-glass.open',
      ]);
      // The same click in the session's own channel goes through.
      await ack(blockActionBody({ actionId: 'approval_approve', value: approval.id, user: requester, threadTs }));
      expect(h.workflow.decisions.map((d) => d.output.decision)).toEqual(['approve']);
    });
  });

  describe('modal submissions are checked against the record written when the modal was opened', () => {
    const submitBreakGlass = (input: { user: string; viewId: string; metadata: string }) =>
      ack(
        viewSubmissionBody({
          callbackId: 'breakglass_request',
          user: input.user,
          viewId: input.viewId,
          privateMetadata: input.metadata,
          values: breakGlassValues,
        }),
      );
    const untracked = (answer: Record<string, unknown> | undefined) => {
      expect(answer?.['response_action']).toBe('update');
      expect(JSON.stringify(answer?.['view'])).toMatch(/belongs to a message calmops no longer tracks/);
    };
    const nothingFiled = async (sessionId: string) => {
      expect(h.workflow.delivered).toEqual([]);
      expect((await h.store.timeline.list(sessionId)).map((e) => e.type)).not.toContain('break-glass.requested');
    };

    it('refuses a break-glass form that was never opened, even with valid metadata for the session', async () => {
      const { session, threadTs } = await openSession(h);
      const metadata = JSON.stringify({ s: session.id, c: DEMO_IDS.incidents, t: threadTs });
      // An outsider who never got a modal in the channel makes up the submission Slack would send.
      untracked(await submitBreakGlass({ user: engineer, viewId: 'VFORGED0001', metadata }));
      untracked(await submitBreakGlass({ user: requester, viewId: 'VFORGED0002', metadata }));
      await nothingFiled(session.id);
    });

    it('refuses a modal opened for someone else, or re-pointed at another session', async () => {
      const { session } = await openSession(h);
      const other = await openSession(h);
      const opened = await openBreakGlassModal(h, session.id, requester);
      untracked(await submitBreakGlass({ user: engineer, viewId: opened.viewId, metadata: opened.privateMetadata }));
      const repointed = JSON.stringify({ ...JSON.parse(opened.privateMetadata), s: other.session.id });
      const answer = await submitBreakGlass({ user: requester, viewId: opened.viewId, metadata: repointed });
      expect(answer).toMatchObject({ response_action: 'errors', errors: { justification: /out of date/ } });
      await nothingFiled(session.id);
      await nothingFiled(other.session.id);
    });

    it('refuses a modal whose record expired (the expiry is part of the condition)', async () => {
      const { session } = await openSession(h);
      const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
      await h.store.modals.opened(
        {
          viewId: 'VEXPIRED001',
          kind: 'break-glass',
          userId: requester,
          sessionId: session.id,
          channelId: DEMO_IDS.incidents,
        },
        twoHoursAgo,
      );
      const metadata = JSON.stringify({ s: session.id, c: DEMO_IDS.incidents });
      untracked(await submitBreakGlass({ user: requester, viewId: 'VEXPIRED001', metadata }));
      await nothingFiled(session.id);
    });

    it('files one request per opened modal: a resubmission after filing is refused', async () => {
      const { session } = await openSession(h);
      const opened = await openBreakGlassModal(h, session.id, requester);
      const first = await submitBreakGlass({
        user: requester,
        viewId: opened.viewId,
        metadata: opened.privateMetadata,
      });
      expect(first).toBeUndefined();
      expect(h.workflow.delivered.map((d) => d.sessionId)).toEqual([session.id]);
      // Different values, so the double-submit guard does not catch it; the record does.
      const again = await ack(
        viewSubmissionBody({
          callbackId: 'breakglass_request',
          user: requester,
          viewId: opened.viewId,
          privateMetadata: opened.privateMetadata,
          values: { ...breakGlassValues, timeLimitMinutes: { value: { type: 'number_input', value: '20' } } },
        }),
      );
      untracked(again);
      expect(h.workflow.delivered).toHaveLength(1);
    });

    it('refuses a request-changes form that was never opened', async () => {
      const { session, threadTs } = await openSession(h);
      const approval = await h.store.approvals.create({
        kind: 'plan-review',
        sessionId: session.id,
        token: `token-plan-${session.id}`,
        allowedDeciders: [senior],
        requester,
        expiresAt: new Date(Date.now() + 600_000),
        data: { channelId: DEMO_IDS.incidents, threadTs, planAuthor: engineer },
      });
      const answer = await ack(
        viewSubmissionBody({
          callbackId: 'plan_request_changes',
          user: senior,
          privateMetadata: JSON.stringify({ a: approval.id, c: DEMO_IDS.incidents }),
          values: { note: { value: { type: 'plain_text_input', value: 'Add a rollback step for the resize' } } },
        }),
      );
      untracked(answer);
      expect(h.workflow.decisions).toEqual([]);
      expect((await h.store.approvals.get(approval.id))?.status).toBe('pending');
    });
  });

  // Runs last: everything above went through the handler, whose DynamoDB requests were recorded.
  it('sent only the table requests the Slack function’s role allows (cdk/table-access.ts)', () => {
    const actions = new Set(h.tableCalls.map((c) => c.action));
    expect(actions).toContain('dynamodb:DeleteItem');
    expect(ungranted('slack', h.tableCalls)).toEqual([]);
  });
});
