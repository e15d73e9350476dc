import { describe, expect, it } from 'vitest';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { UNKNOWN_ACTION_TEXT } from '../../../src/slack/handlers/actions/unknown-button.js';
import { signSlackRequest } from '../../../src/slack/receiver.js';
import {
  blockActionBody,
  eventBody,
  nowSeconds,
  openSession,
  SECRET,
  send,
  slashBody,
  useSlackHarness,
  viewSubmissionBody,
} from '../../support/slack-harness.js';

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

describe('Slack requests at the edges, through the real handler', () => {
  const h = useSlackHarness();

  const nothingHappened = () => {
    expect(h.slack.calls().filter((c) => c.method !== 'auth.test')).toEqual([]);
    expect(h.workflow.started).toEqual([]);
    expect(h.workflow.delivered).toEqual([]);
    expect(h.workflow.decisions).toEqual([]);
  };

  const unsigned = (body: string, contentType = FORM) => h.handle({ headers: { 'content-type': contentType }, body });

  describe('ssl_check', () => {
    it('answers Slack’s unsigned ssl_check with 200 and an empty body', async () => {
      const response = await unsigned('ssl_check=1&token=deprecated-verification-token');
      expect(response).toMatchObject({ statusCode: 200, body: '' });
      const charset = await unsigned('ssl_check=1&token=x', `${FORM}; charset=utf-8`);
      expect(charset).toMatchObject({ statusCode: 200, body: '' });
      nothingHappened();
    });

    it('accepts nothing else unsigned, even when it carries ssl_check', async () => {
      const command = `${slashBody('pods stuck pending in payments')}&ssl_check=1`;
      const interaction = `${blockActionBody({ actionId: 'approval_approve', value: 'A1', user: DEMO_IDS.senior })}&ssl_check=1`;
      const event = JSON.stringify({ ...JSON.parse(eventBody({ type: 'app_mention', text: 'hi' })), ssl_check: 1 });
      const answers = await Promise.all([
        unsigned(command),
        unsigned(interaction),
        unsigned(event, JSON_TYPE),
        unsigned('ssl_check=1', JSON_TYPE),
        unsigned('ssl_check=0&token=x'),
        unsigned(slashBody('help')),
        unsigned(JSON.stringify({ type: 'url_verification', challenge: 'c-1' }), JSON_TYPE),
      ]);
      expect(answers.map((a) => a.statusCode)).toEqual([401, 401, 401, 401, 401, 401, 401]);
      nothingHappened();
    });

    it('answers a signed ssl_check the same way (it carries nothing to act on)', async () => {
      const response = await send(h.handle, 'ssl_check=1&token=x');
      expect(response).toMatchObject({ statusCode: 200, body: '' });
      nothingHappened();
    });
  });

  describe('malformed signed bodies get 400, never 500', () => {
    const cases: [string, string, string][] = [
      ['JSON null', 'null', JSON_TYPE],
      ['a JSON array', '[]', JSON_TYPE],
      ['a JSON string', '"event_callback"', JSON_TYPE],
      ['a JSON number', '42', JSON_TYPE],
      ['an object without a type', '{}', JSON_TYPE],
      ['an event callback without an event', '{"type":"event_callback"}', JSON_TYPE],
      ['an event callback whose event is null', '{"type":"event_callback","event":null}', JSON_TYPE],
      ['an event without a type', '{"type":"event_callback","event":{"text":"x"}}', JSON_TYPE],
      ['an unknown envelope type', '{"type":"block_actions","user":{"id":"U1"}}', JSON_TYPE],
      ['url_verification without a challenge', '{"type":"url_verification"}', JSON_TYPE],
      ['JSON that does not parse', '{"type":', JSON_TYPE],
      ['an empty JSON body', '', JSON_TYPE],
      ['an interaction payload of null', 'payload=null', FORM],
      ['an interaction payload that does not parse', 'payload=%7B%22type', FORM],
      [
        'an interaction payload without a user',
        `payload=${encodeURIComponent('{"type":"block_actions","actions":[]}')}`,
        FORM,
      ],
      [
        'block actions without actions',
        `payload=${encodeURIComponent('{"type":"block_actions","user":{"id":"U1"}}')}`,
        FORM,
      ],
      [
        'a view submission without a view',
        `payload=${encodeURIComponent('{"type":"view_submission","user":{"id":"U1"}}')}`,
        FORM,
      ],
      [
        'a view submission whose state is null',
        `payload=${encodeURIComponent('{"type":"view_submission","user":{"id":"U1"},"view":{"id":"V1","callback_id":"x","state":null}}')}`,
        FORM,
      ],
      ['an empty form', '', FORM],
      ['a form that is neither a command nor an interaction', 'text=hello&user_id=U1', FORM],
      ['a command without a channel', 'command=%2Ftriage&user_id=U1&text=help', FORM],
      ['JSON sent as text/plain', JSON.stringify({ type: 'url_verification', challenge: 'c' }), 'text/plain'],
      ['a body without a content type', slashBody('help'), ''],
    ];

    for (const [what, body, contentType] of cases) {
      it(`refuses ${what}`, async () => {
        const response = await send(h.handle, body, { contentType });
        expect(response.statusCode).toBe(400);
        expect(response.body).toMatch(/^Not a Slack request: /);
        nothingHappened();
      });
    }

    it('checks the signature first: an unsigned malformed body is 401, not 400', async () => {
      const response = await unsigned('null', JSON_TYPE);
      expect(response.statusCode).toBe(401);
    });
  });

  describe('buttons, modals and events calmops does not know', () => {
    it('answers an unknown button on a message with 200 and an ephemeral in its thread', async () => {
      const { session, threadTs } = await openSession(h);
      h.slack.clearCalls();
      const response = await send(
        h.handle,
        blockActionBody({ actionId: 'approve_v1_legacy', value: session.id, user: DEMO_IDS.engineer, threadTs }),
      );
      expect(response).toMatchObject({ statusCode: 200, body: '' });
      // auth.test: the first request of this handler looks up the bot's own ids.
      const calls = h.slack.calls().filter((c) => c.method !== 'auth.test');
      expect(calls.map((c) => c.method)).toEqual(['chat.postEphemeral']);
      expect(calls[0]?.args).toMatchObject({
        channel: DEMO_IDS.incidents,
        user: DEMO_IDS.engineer,
        thread_ts: threadTs,
        text: UNKNOWN_ACTION_TEXT,
      });
      expect(UNKNOWN_ACTION_TEXT).toMatch(/this button belongs to a message calmops no longer tracks/i);
      expect(h.workflow.delivered).toEqual([]);
      expect(h.workflow.decisions).toEqual([]);
    });

    it('does not answer a known button twice (the catch-all stays out of its way)', async () => {
      const { session, threadTs } = await openSession(h);
      h.slack.clearCalls();
      const response = await send(
        h.handle,
        blockActionBody({
          actionId: 'hypothesis_choose:2',
          value: JSON.stringify({ s: session.id, h: 'h2' }),
          user: DEMO_IDS.requester,
          threadTs,
        }),
      );
      expect(response).toMatchObject({ statusCode: 200, body: '' });
      expect(h.workflow.delivered.map((d) => d.action)).toEqual([{ type: 'hypothesis', hypothesisId: 'h2' }]);
      expect(h.slack.callsFor('chat.postEphemeral')).toEqual([]);
    });

    it('answers an unknown button inside a modal with 200', async () => {
      const payload = {
        type: 'block_actions',
        user: { id: DEMO_IDS.requester, team_id: DEMO_IDS.team },
        api_app_id: 'ACALMOPS',
        container: { type: 'view', view_id: 'VOTHERAPP' },
        trigger_id: '1.2',
        team: { id: DEMO_IDS.team },
        view: { id: 'VOTHERAPP', callback_id: 'other_app', type: 'modal', state: { values: {} } },
        actions: [{ type: 'button', action_id: 'other_app_button', block_id: 'b', action_ts: `${nowSeconds()}.1` }],
      };
      const response = await send(h.handle, new URLSearchParams({ payload: JSON.stringify(payload) }).toString());
      expect(response).toMatchObject({ statusCode: 200, body: '' });
      nothingHappened();
    });

    it('answers an unknown modal with 200, turning the modal into the same notice', async () => {
      const response = await send(
        h.handle,
        viewSubmissionBody({ callbackId: 'legacy_modal', user: DEMO_IDS.requester, privateMetadata: '', values: {} }),
      );
      expect(response.statusCode).toBe(200);
      const ack = JSON.parse(response.body) as { response_action: string; view: { blocks: unknown[] } };
      expect(ack.response_action).toBe('update');
      expect(JSON.stringify(ack.view.blocks)).toMatch(/belongs to a message calmops no longer tracks/);
      nothingHappened();
    });

    it('acknowledges a closed modal and an event it has no handler for', async () => {
      const closed = {
        type: 'view_closed',
        user: { id: DEMO_IDS.requester },
        team: { id: DEMO_IDS.team },
        view: { id: 'V1', callback_id: 'legacy_modal', type: 'modal', state: { values: {} } },
        is_cleared: false,
      };
      const answers = await Promise.all([
        send(h.handle, new URLSearchParams({ payload: JSON.stringify(closed) }).toString()),
        send(
          h.handle,
          eventBody({ type: 'reaction_added', user: DEMO_IDS.requester, reaction: 'eyes', item: { type: 'message' } }),
          { contentType: JSON_TYPE },
        ),
        send(h.handle, slashBody('help').replace('command=%2Ftriage', 'command=%2Fsomething-else')),
      ]);
      expect(answers.map((a) => [a.statusCode, a.body])).toEqual([
        [200, ''],
        [200, ''],
        [200, ''],
      ]);
      nothingHappened();
    });
  });

  it('still verifies what it answers: a signed request with the wrong secret is 401', async () => {
    const body = 'payload=null';
    const headers = { 'content-type': FORM, ...signSlackRequest(`${SECRET}-not`, body, nowSeconds()) };
    expect((await h.handle({ headers, body })).statusCode).toBe(401);
  });
});
