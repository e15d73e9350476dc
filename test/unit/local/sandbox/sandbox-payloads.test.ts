import { verifySlackRequest } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import {
  appMentionEvent,
  encodeMentions,
  eventCallbackBody,
  messageBlockActionsBody,
  slashCommandBody,
  viewSubmissionBody,
} from '../../../../local/sandbox/payloads.js';
import { signedHeaders, slackSignature } from '../../../../local/sandbox/sign.js';
import { buildWorkspace } from '../../../../local/sandbox/workspace.js';

const workspace = buildWorkspace();

describe('sandbox Slack payloads', () => {
  it('encodes a slash command as Slack does, form-encoded with every field an app reads', () => {
    const body = slashCommandBody(workspace, {
      user: 'UREQUESTER',
      channel: 'CINCIDENTS',
      command: '/triage',
      text: 'pods pending in payments & "more"',
      responseUrl: 'http://127.0.0.1:1/response/abc',
      triggerId: '123.456',
    });
    const form = new URLSearchParams(body);
    expect(Object.fromEntries(form)).toMatchObject({
      command: '/triage',
      text: 'pods pending in payments & "more"',
      user_id: 'UREQUESTER',
      user_name: 'alex',
      channel_id: 'CINCIDENTS',
      channel_name: 'incidents',
      team_id: workspace.teamId,
      trigger_id: '123.456',
      response_url: 'http://127.0.0.1:1/response/abc',
      api_app_id: workspace.appId,
    });
  });

  it('wraps events in an event_callback with an event id and the bot authorization', () => {
    const event = appMentionEvent(workspace, {
      user: 'UREQUESTER',
      channel: 'CINCIDENTS',
      text: '<@UCALMOPSBOT> help',
      ts: '1.000001',
    });
    const body = JSON.parse(eventCallbackBody(workspace, event)) as Record<string, unknown>;
    expect(body['type']).toBe('event_callback');
    expect(body['event_id']).toMatch(/^Ev[0-9A-F]{12}$/);
    expect(body['authorizations']).toEqual([
      expect.objectContaining({ user_id: 'UCALMOPSBOT', is_bot: true, team_id: workspace.teamId }),
    ]);
    expect(body['event']).toMatchObject({
      type: 'app_mention',
      user: 'UREQUESTER',
      text: '<@UCALMOPSBOT> help',
      ts: '1.000001',
    });
  });

  it('sends interactions as a form field holding JSON, with the approval id in the button value', () => {
    const body = messageBlockActionsBody(workspace, {
      user: 'USENIOR',
      channel: 'CINCIDENTS',
      messageTs: '2.000001',
      threadTs: '1.000001',
      isEphemeral: false,
      message: { type: 'message', ts: '2.000001', text: 'approve?' },
      action: {
        action_id: 'approval_approve',
        block_id: 'b',
        type: 'button',
        value: 'APPROVAL1',
        text: 'Approve',
        style: 'primary',
      },
      state: {},
      responseUrl: 'http://127.0.0.1:1/response/x',
      triggerId: '9.9',
    });
    const payload = JSON.parse(new URLSearchParams(body).get('payload') ?? '{}') as Record<string, unknown>;
    expect(payload['type']).toBe('block_actions');
    expect(payload['user']).toMatchObject({ id: 'USENIOR', username: 'sam' });
    expect(payload['container']).toMatchObject({
      type: 'message',
      message_ts: '2.000001',
      channel_id: 'CINCIDENTS',
      thread_ts: '1.000001',
    });
    expect(payload['actions']).toEqual([
      expect.objectContaining({ action_id: 'approval_approve', value: 'APPROVAL1', type: 'button', style: 'primary' }),
    ]);
    expect(payload['response_url']).toBe('http://127.0.0.1:1/response/x');
  });

  it('puts the person’s input into view.state.values on submission', () => {
    const body = viewSubmissionBody(workspace, {
      user: 'UREQUESTER',
      view: {
        id: 'V1',
        type: 'modal',
        callback_id: 'breakglass',
        private_metadata: 'S1',
        blocks: [],
        hash: 'h',
        user: 'UREQUESTER',
      },
      state: { approver: { value: { type: 'users_select', selected_user: 'USENIOR' } } },
      triggerId: '1.2',
    });
    const payload = JSON.parse(new URLSearchParams(body).get('payload') ?? '{}') as { view: Record<string, unknown> };
    expect(payload.view).toMatchObject({
      id: 'V1',
      callback_id: 'breakglass',
      private_metadata: 'S1',
      state: { values: { approver: { value: { type: 'users_select', selected_user: 'USENIOR' } } } },
    });
    expect(payload.view).not.toHaveProperty('user');
  });

  it('turns typed @names into Slack mentions and leaves emails and unknown names alone', () => {
    expect(encodeMentions(workspace, '@calmops check @sam and a@b.c and @nobody')).toBe(
      '<@UCALMOPSBOT> check <@USENIOR> and a@b.c and @nobody',
    );
  });

  it('signs like Slack: Bolt verifies the signature over the exact body', () => {
    const body = 'text=caf%C3%A9+%F0%9F%94%A5&command=%2Ftriage';
    const headers = signedHeaders('s3cr3t', body, 'application/x-www-form-urlencoded');
    expect(() =>
      verifySlackRequest({
        signingSecret: 's3cr3t',
        body,
        headers: {
          'x-slack-signature': headers['x-slack-signature'],
          'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']),
        },
      }),
    ).not.toThrow();
    expect(() =>
      verifySlackRequest({
        signingSecret: 'other',
        body,
        headers: {
          'x-slack-signature': headers['x-slack-signature'],
          'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']),
        },
      }),
    ).toThrow();
    expect(slackSignature('k', 1, 'b')).toMatch(/^v0=[0-9a-f]{64}$/);
  });
});
