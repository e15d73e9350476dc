import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_IDS, type SlackStandIn, startSlackStandIn } from '../../../local/slack/index.js';
import { createSlackClient } from '../../../src/slack/client.js';

describe('Slack Web API stand-in', () => {
  let slack: SlackStandIn;
  let client: ReturnType<typeof createSlackClient>;
  beforeAll(async () => {
    slack = await startSlackStandIn();
    client = createSlackClient({ token: 'xoxb-standin', slackApiUrl: slack.url, retries: 0 });
  });
  afterAll(async () => {
    await slack.close();
  });
  beforeEach(() => slack.reset());

  const slackError = async (call: Promise<unknown>) => {
    try {
      await call;
    } catch (error) {
      return (error as { data?: { error?: string; response_metadata?: { messages?: string[] } } }).data;
    }
    throw new Error('expected the call to fail');
  };

  it('serves the Web API under a URL ending in /api/', () => {
    expect(slack.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/$/);
  });

  it('posts, threads and updates messages, and records every call', async () => {
    const root = await client.chat.postMessage({ channel: DEMO_IDS.incidents, text: 'root' });
    const reply = await client.chat.postMessage({ channel: DEMO_IDS.incidents, thread_ts: root.ts, text: 'reply' });
    await client.chat.update({ channel: DEMO_IDS.incidents, ts: root.ts as string, text: 'root (edited)' });
    await client.chat.postEphemeral({ channel: DEMO_IDS.incidents, user: DEMO_IDS.requester, text: 'only you' });
    const messages = slack.messages(DEMO_IDS.incidents);
    expect(messages.map((m) => [m.text, m.thread_ts, m.ephemeral_to])).toEqual([
      ['root (edited)', undefined, undefined],
      ['reply', root.ts, undefined],
      ['only you', undefined, DEMO_IDS.requester],
    ]);
    expect(reply.ts).not.toBe(root.ts);
    expect(slack.calls().map((c) => c.method)).toEqual([
      'chat.postMessage',
      'chat.postMessage',
      'chat.update',
      'chat.postEphemeral',
    ]);
    expect(slack.calls().every((c) => c.authenticated && !JSON.stringify(c).includes('xoxb-standin'))).toBe(true);
  });

  it("answers bad input in Slack's error shape", async () => {
    expect(await slackError(client.chat.postMessage({ channel: 'CNOPE', text: 'x' }))).toMatchObject({
      ok: false,
      error: 'channel_not_found',
    });
    expect(await slackError(client.chat.postMessage({ channel: DEMO_IDS.notMember, text: 'x' }))).toMatchObject({
      error: 'not_in_channel',
    });
    expect(
      await slackError(client.chat.postMessage({ channel: DEMO_IDS.incidents, text: 'x'.repeat(40_001) })),
    ).toMatchObject({
      error: 'msg_too_long',
    });
    const tooMany = Array.from({ length: 51 }, () => ({ type: 'divider' as const }));
    const invalid = await slackError(
      client.chat.postMessage({ channel: DEMO_IDS.incidents, text: 'x', blocks: tooMany }),
    );
    expect(invalid?.error).toBe('invalid_blocks');
    expect(invalid?.response_metadata?.messages?.[0]).toMatch(/no more than 50 items/);
    expect(await slackError(client.chat.update({ channel: DEMO_IDS.incidents, ts: '1.2', text: 'x' }))).toMatchObject({
      error: 'message_not_found',
    });
    expect(await slackError(client.users.info({ user: 'UNOBODY' }))).toMatchObject({ error: 'user_not_found' });
    expect(await slackError(client.usergroups.users.list({ usergroup: 'SNOPE' }))).toMatchObject({
      error: 'no_such_subteam',
    });
    const unauthenticated = createSlackClient({ token: '', slackApiUrl: slack.url, retries: 0 });
    expect(await slackError(unauthenticated.auth.test())).toMatchObject({ error: 'not_authed' });
  });

  it('answers users, groups, channels and auth from the demo workspace', async () => {
    expect((await client.auth.test()).user_id).toBe(DEMO_IDS.botUser);
    expect((await client.usergroups.users.list({ usergroup: DEMO_IDS.seniors })).users).toEqual([DEMO_IDS.senior]);
    expect((await client.users.info({ user: DEMO_IDS.senior })).user?.real_name).toMatch(/Sam/);
    expect((await client.conversations.info({ channel: DEMO_IDS.dm })).channel).toMatchObject({ is_im: true });
    expect((await client.conversations.info({ channel: DEMO_IDS.notMember })).channel).toMatchObject({
      is_member: false,
    });
  });

  it('opens, updates and publishes views', async () => {
    const modal = {
      type: 'modal' as const,
      title: { type: 'plain_text' as const, text: 'Hi' },
      blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'x' } }],
    };
    const opened = await client.views.open({ trigger_id: slack.triggerId(DEMO_IDS.requester), view: modal });
    const id = opened.view?.id as string;
    await client.views.update({ view_id: id, view: { ...modal, title: { type: 'plain_text', text: 'Again' } } });
    expect(slack.views(DEMO_IDS.requester).map((v) => (v['title'] as { text: string }).text)).toEqual(['Again']);
    expect(await slackError(client.views.open({ trigger_id: '', view: modal }))).toMatchObject({
      error: 'invalid_trigger_id',
    });
    const badTitle = { ...modal, title: { type: 'plain_text' as const, text: 'x'.repeat(25) } };
    expect(await slackError(client.views.open({ trigger_id: 't', view: badTitle }))).toMatchObject({
      error: 'invalid_arguments',
    });
    await client.views.publish({ user_id: DEMO_IDS.engineer, view: { type: 'home', blocks: [{ type: 'divider' }] } });
    expect(slack.home(DEMO_IDS.engineer)?.type).toBe('home');
  });

  it('records and applies posts to response URLs', async () => {
    const root = await client.chat.postMessage({ channel: DEMO_IDS.incidents, text: 'approve?' });
    const url = slack.responseUrl({ channel: DEMO_IDS.incidents, user: DEMO_IDS.senior, messageTs: root.ts as string });
    const ephemeral = await fetch(url, { method: 'POST', body: JSON.stringify({ text: 'just for you' }) });
    expect(await ephemeral.json()).toEqual({ ok: true });
    await fetch(url, { method: 'POST', body: JSON.stringify({ replace_original: true, text: 'approved' }) });
    expect(slack.messages(DEMO_IDS.incidents).map((m) => [m.text, m.ephemeral_to])).toEqual([
      ['approved', undefined],
      ['just for you', DEMO_IDS.senior],
    ]);
    expect(slack.callsFor('response_url')).toHaveLength(2);
    const expired = await fetch(`${slack.origin}/response/unknown`, { method: 'POST', body: '{}' });
    expect(expired.status).toBe(404);
  });

  it('serves the recorded calls, messages and views as JSON over HTTP', async () => {
    await client.chat.postMessage({ channel: DEMO_IDS.incidents, text: 'one' });
    await client.chat.postEphemeral({ channel: DEMO_IDS.incidents, user: DEMO_IDS.engineer, text: 'two' });
    const calls = (await (await fetch(`${slack.origin}/_calls`)).json()) as { seq: number; method: string }[];
    expect(calls.map((c) => c.method)).toEqual(['chat.postMessage', 'chat.postEphemeral']);
    const filtered = (await (await fetch(`${slack.origin}/_calls?method=chat.postEphemeral`)).json()) as unknown[];
    expect(filtered).toHaveLength(1);
    const after = (await (await fetch(`${slack.origin}/_calls?after=${calls[0]?.seq}`)).json()) as unknown[];
    expect(after).toHaveLength(1);
    const messages = (await (
      await fetch(`${slack.origin}/_messages?channel=${DEMO_IDS.incidents}`)
    ).json()) as unknown[];
    expect(messages).toHaveLength(2);
    expect(await (await fetch(`${slack.origin}/_views`)).json()).toEqual([]);
    await fetch(`${slack.origin}/_reset`, { method: 'POST' });
    expect(slack.calls()).toEqual([]);
  });

  it('can be told to fail the next call of a method', async () => {
    slack.failNext('chat.postMessage', 'ratelimited');
    expect(await slackError(client.chat.postMessage({ channel: DEMO_IDS.incidents, text: 'x' }))).toMatchObject({
      error: 'ratelimited',
    });
    await client.chat.postMessage({ channel: DEMO_IDS.incidents, text: 'x' });
    expect(slack.callsFor('chat.postMessage').map((c) => c.response['ok'])).toEqual([false, true]);
  });
});
