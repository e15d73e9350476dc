import { describe, expect, it } from 'vitest';
import { DEMO_IDS, viewProblems } from '../../../local/slack/index.js';
import { eventBody, openSession, send, useSlackHarness } from '../../support/slack-harness.js';

describe('Slack events through the real handler', () => {
  const h = useSlackHarness();

  const sendEvent = (event: Record<string, unknown>, options: { eventId?: string; retryNum?: number } = {}) =>
    send(h.handle, eventBody(event, options.eventId === undefined ? {} : { eventId: options.eventId }), {
      contentType: 'application/json',
      ...(options.retryNum === undefined
        ? {}
        : { headers: { 'X-Slack-Retry-Num': String(options.retryNum), 'X-Slack-Retry-Reason': 'http_timeout' } }),
    });

  it('starts a session in the thread of the message that mentions the bot', async () => {
    const message = h.slack.addUserMessage({
      channel: DEMO_IDS.incidents,
      user: DEMO_IDS.requester,
      text: `<@${DEMO_IDS.botUser}> pvc pending in checkout`,
    });
    const response = await sendEvent({
      type: 'app_mention',
      user: DEMO_IDS.requester,
      text: message.text,
      ts: message.ts,
      channel: DEMO_IDS.incidents,
    });
    expect(response.statusCode).toBe(200);
    expect(h.workflow.started).toEqual([
      expect.objectContaining({
        channelId: DEMO_IDS.incidents,
        threadTs: message.ts,
        intent: 'pvc-binding',
        namespace: 'checkout',
        requester: DEMO_IDS.requester,
      }),
    ]);
    const replies = h.slack.messages(DEMO_IDS.incidents).filter((m) => m.thread_ts === message.ts);
    expect(replies).toHaveLength(1);
  });

  it('never starts a second session for a retried event', async () => {
    const event = {
      type: 'app_mention',
      user: DEMO_IDS.requester,
      text: `<@${DEMO_IDS.botUser}> crash loop in payments`,
      ts: '1700000000.000200',
      channel: DEMO_IDS.incidents,
    };
    await sendEvent(event, { eventId: 'EvRETRY1' });
    const retry = await sendEvent(event, { eventId: 'EvRETRY1', retryNum: 1 });
    const again = await sendEvent(event, { eventId: 'EvRETRY1', retryNum: 2 });
    expect([retry.statusCode, again.statusCode]).toEqual([200, 200]);
    expect(h.workflow.started).toHaveLength(1);
  });

  it('delivers a reply in a session thread to the session inbox', async () => {
    const { session, threadTs } = await openSession(h);
    await sendEvent({
      type: 'message',
      channel_type: 'channel',
      user: DEMO_IDS.engineer,
      text: 'show events for pvc data-0 &amp; its pods',
      ts: '1700000001.000300',
      thread_ts: threadTs,
      channel: DEMO_IDS.incidents,
    });
    expect(h.workflow.delivered).toEqual([
      {
        sessionId: session.id,
        userId: DEMO_IDS.engineer,
        text: 'show events for pvc data-0 & its pods',
        source: 'message',
        messageKey: `${DEMO_IDS.incidents}:1700000001.000300`,
      },
    ]);
  });

  it('answers a reply in a resolved session’s thread with what happened to it, and delivers nothing', async () => {
    const { session, threadTs } = await openSession(h);
    await h.store.sessions.update(session.id, session.version, { status: 'resolved' });
    const before = h.workflow.delivered.length;
    const calls = h.slack.callsFor('chat.postEphemeral').length;
    await sendEvent({
      type: 'message',
      channel_type: 'channel',
      user: DEMO_IDS.engineer,
      text: 'is it still broken?',
      ts: '1700000001.000900',
      thread_ts: threadTs,
      channel: DEMO_IDS.incidents,
    });
    expect(h.workflow.delivered).toHaveLength(before);
    const reply = h.slack.callsFor('chat.postEphemeral').slice(calls)[0];
    expect(String(reply?.args['text'])).toMatch(
      new RegExp(`^This session is resolved, so nothing was sent to it\\. \`/triage status ${session.id}\``),
    );
    expect(String(reply?.args['text'])).not.toMatch(/say it again/);
  });

  it("delivers Slack's retry of a reply whose first attempt died before the inbox, and drops one that landed", async () => {
    const { session, threadTs } = await openSession(h);
    const reply = (ts: string) => ({
      type: 'message',
      channel_type: 'channel',
      user: DEMO_IDS.engineer,
      text: `reply ${ts}`,
      ts,
      thread_ts: threadTs,
      channel: DEMO_IDS.incidents,
    });
    // The first attempt claimed the event and was killed before its append: the mark is pending, its lease over.
    await h.store.dedupe.claim('event:EvDIED1', { now: new Date(Date.now() - 10_000) });
    await sendEvent(reply('1700000002.000100'), { eventId: 'EvDIED1', retryNum: 1 });
    expect(h.workflow.delivered.map((d) => d.messageKey)).toEqual([`${DEMO_IDS.incidents}:1700000002.000100`]);

    // A retry of the attempt that did land (its mark final) is dropped, however late.
    await sendEvent(reply('1700000002.000100'), { eventId: 'EvDIED1', retryNum: 2 });
    expect(h.workflow.delivered).toHaveLength(1);

    // A failed delivery gives its mark back, so the retry is taken in.
    const deliver = h.deps.workflow.deliverInput;
    h.deps.workflow.deliverInput = async () => {
      throw new Error('inbox unavailable');
    };
    await sendEvent(reply('1700000002.000200'), { eventId: 'EvFAILED1' });
    h.deps.workflow.deliverInput = deliver;
    await sendEvent(reply('1700000002.000200'), { eventId: 'EvFAILED1', retryNum: 1 });
    expect(h.workflow.delivered.map((d) => d.messageKey)).toEqual([
      `${DEMO_IDS.incidents}:1700000002.000100`,
      `${DEMO_IDS.incidents}:1700000002.000200`,
    ]);
    expect(session.id).toBeDefined();
  });

  it('delivers a mention inside a session thread as input, not a new session', async () => {
    const { session, threadTs } = await openSession(h);
    await sendEvent({
      type: 'app_mention',
      user: DEMO_IDS.requester,
      text: `<@${DEMO_IDS.botUser}> kubectl delete pod api-0`,
      ts: '1700000002.000400',
      thread_ts: threadTs,
      channel: DEMO_IDS.incidents,
    });
    expect(h.workflow.started).toEqual([]);
    expect(h.workflow.delivered).toEqual([
      {
        sessionId: session.id,
        userId: DEMO_IDS.requester,
        text: 'kubectl delete pod api-0',
        source: 'mention',
        messageKey: `${DEMO_IDS.incidents}:1700000002.000400`,
      },
    ]);
  });

  it('ignores bot messages (any bot), edits and the message copy of a mention', async () => {
    const { threadTs } = await openSession(h);
    const before = h.slack.calls().length;
    const base = { type: 'message', channel: DEMO_IDS.incidents, thread_ts: threadTs, channel_type: 'channel' };
    await sendEvent({ ...base, user: 'UOTHERBOT', bot_id: 'BOTHER', text: 'deploy finished', ts: '1700000003.000001' });
    await sendEvent({
      ...base,
      subtype: 'bot_message',
      bot_id: 'BWEBHOOK',
      text: 'alert firing',
      ts: '1700000003.000002',
    });
    await sendEvent({
      ...base,
      subtype: 'message_changed',
      message: { user: DEMO_IDS.requester, text: 'edited' },
      ts: '1700000003.000003',
    });
    await sendEvent({
      ...base,
      user: DEMO_IDS.requester,
      text: `<@${DEMO_IDS.botUser}> resolved`,
      ts: '1700000003.000004',
    });
    await sendEvent({
      ...base,
      user: DEMO_IDS.requester,
      text: 'not in a thread',
      thread_ts: undefined,
      ts: '1700000003.000005',
    });
    expect(h.workflow.delivered).toEqual([]);
    expect(h.workflow.started).toEqual([]);
    expect(
      h.slack
        .calls()
        .slice(before)
        .filter((c) => c.method !== 'auth.test'),
    ).toEqual([]);
  });

  it('answers a bad mention ephemerally in the thread and starts nothing', async () => {
    await sendEvent({
      type: 'app_mention',
      user: DEMO_IDS.requester,
      text: `<@${DEMO_IDS.botUser}> pods pending -n pаyments`,
      ts: '1700000004.000500',
      channel: DEMO_IDS.incidents,
    });
    expect(h.workflow.started).toEqual([]);
    const [reply] = h.slack.callsFor('chat.postEphemeral');
    expect(reply?.args).toMatchObject({ user: DEMO_IDS.requester, thread_ts: '1700000004.000500' });
    expect(String(reply?.args['text'])).toMatch(/Cyrillic/);
  });

  it('publishes App Home with open sessions, approvals waiting and metrics', async () => {
    const { session } = await openSession(h);
    // A session started in a channel the policy does not list is still the requester's.
    await h.store.sessions.create({
      intent: 'dns-failure',
      namespace: 'checkout-elsewhere',
      cluster: 'demo',
      channelId: 'CUNLISTED01',
      threadTs: '1700000099.000100',
      requester: DEMO_IDS.requester,
    });
    const someoneElses = await h.store.sessions.create({
      intent: 'oom-killed',
      namespace: 'not-mine',
      cluster: 'demo',
      channelId: 'CUNLISTED01',
      threadTs: '1700000099.000200',
      requester: DEMO_IDS.engineer,
    });
    await h.store.sessions.update(someoneElses.id, 1, { state: 'ANALYZING' });
    await h.store.approvals.create({
      kind: 'handoff',
      sessionId: session.id,
      token: 'task-token-home',
      allowedDeciders: [DEMO_IDS.requester, DEMO_IDS.senior],
      requester: DEMO_IDS.requester,
      expiresAt: new Date(Date.now() + 600_000),
      summary: 'Hand off to the storage specialist?',
      data: { channelId: DEMO_IDS.incidents },
    });
    await sendEvent({ type: 'app_home_opened', user: DEMO_IDS.requester, channel: DEMO_IDS.dm, tab: 'home' });
    const [publish] = h.slack.callsFor('views.publish');
    expect(publish?.response['ok']).toBe(true);
    expect(viewProblems(publish?.args['view'])).toEqual([]);
    const text = JSON.stringify(publish?.args['view']);
    expect(text).toContain('Your open sessions');
    expect(text).toContain('checkout-elsewhere');
    expect(text).not.toContain('not-mine');
    expect(text).toContain('Hand off to the storage specialist?');
    expect(text).toContain('Diagnosis metrics');
    expect(h.slack.home(DEMO_IDS.requester)?.type).toBe('home');
  });
});
