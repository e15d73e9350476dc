import { describe, expect, it, vi } from 'vitest';
import { parsePolicy } from '../../../src/policy/channel-policy.js';
import type { SlackAppDeps } from '../../../src/slack/deps.js';
import { type ButtonArgs, handleClick } from '../../../src/slack/handlers/actions/click.js';
import { chooseHypothesis } from '../../../src/slack/handlers/actions/hypothesis.js';
import { chooseNamespace } from '../../../src/slack/handlers/actions/namespace.js';
import { answerUnknownButton, UNKNOWN_ACTION_TEXT } from '../../../src/slack/handlers/actions/unknown-button.js';
import { onTriageCommand } from '../../../src/slack/handlers/command.js';
import { onAppHomeOpened } from '../../../src/slack/handlers/events.js';
import { OUTSIDE_CHANNEL_TEXT } from '../../../src/slack/handlers/session-scope.js';
import { onUnknownSubmission } from '../../../src/slack/handlers/submissions.js';
import type { SessionRecord } from '../../../src/store/sessions.js';

const CHANNEL = 'CINCIDENTS';
const USER = 'UREQUESTER';

function session(overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: 's-1',
    state: 'GATHERING',
    status: 'open',
    intent: 'pvc-binding',
    namespace: 'student03',
    channelId: CHANNEL,
    threadTs: '1700000000.000100',
    requester: USER,
    version: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    evidence: { completeness: 0, items: [], findingCodes: [] },
    hypotheses: [],
    resumeCount: 0,
    handoffCount: 0,
    memoryMatchIds: [],
    ...overrides,
  };
}

/** The parts of the deps a handler touches, each recording its calls; nothing reaches Slack, a store or a workflow. */
function fakeDeps(options: { sessions?: SessionRecord[]; firstDelivery?: boolean } = {}) {
  const sessions = new Map((options.sessions ?? []).map((s) => [s.id, s]));
  const fakes = {
    postEphemeral: vi.fn(async (_: { channel: string; user: string; text: string; thread_ts?: string }) => ({
      ok: true,
    })),
    deliverInput: vi.fn(async (_: unknown) => undefined),
    timelineAppend: vi.fn(async (_sessionId: string, _entry: { type: string; summary: string }) => undefined),
    firstDelivery: vi.fn(async (_key: string) => options.firstDelivery ?? true),
    publishHome: vi.fn(async () => ({ ok: true })),
  };
  const deps = {
    signingSecret: 'secret',
    botToken: 'xoxb-test',
    client: { chat: { postEphemeral: fakes.postEphemeral }, views: { publish: fakes.publishHome } },
    store: {
      sessions: { get: async (id: string) => sessions.get(id) },
      dedupe: { firstDelivery: fakes.firstDelivery },
      timeline: { append: fakes.timelineAppend },
    },
    policy: parsePolicy({ defaults: { cluster: 'a', approverGroup: 'S01', seniorGroup: 'S02' } }),
    workflow: { deliverInput: fakes.deliverInput },
    approvalTimeoutSeconds: 600,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  } as unknown as SlackAppDeps;
  return { deps, ...fakes };
}

/** A block_actions payload for one button click, the way Slack sends it. */
function buttonClick(actionId: string, value: string, options: { channel?: string; actionTs?: string } = {}) {
  const ack = vi.fn(async () => undefined);
  const args = {
    ack,
    body: {
      type: 'block_actions',
      user: { id: USER },
      channel: { id: options.channel ?? CHANNEL },
      container: { type: 'message', channel_id: options.channel ?? CHANNEL, message_ts: '1700000000.000200' },
      message: { ts: '1700000000.000200', thread_ts: '1700000000.000100' },
      trigger_id: 'trigger-1',
      actions: [],
    },
    action: {
      type: 'button',
      action_id: actionId,
      block_id: 'b',
      value,
      action_ts: options.actionTs ?? '1700000001.000001',
      text: { type: 'plain_text', text: 'x' },
    },
  };
  return { ack, args: args as unknown as ButtonArgs };
}

const hypothesisButton = { actionId: 'hypothesis_choose', handler: chooseHypothesis, dedupe: true };

describe('Slack handlers called with a fake payload', () => {
  it('hands a hypothesis click to its session as thread input, acknowledged first', async () => {
    const fake = fakeDeps({ sessions: [session()] });
    const { ack, args } = buttonClick('hypothesis_choose:0', JSON.stringify({ s: 's-1', h: 'h-2' }));
    await handleClick(fake.deps, hypothesisButton, args);
    expect(ack).toHaveBeenCalledOnce();
    expect(fake.deliverInput).toHaveBeenCalledWith({
      sessionId: 's-1',
      userId: USER,
      text: 'test hypothesis h-2',
      source: 'button',
      action: { type: 'hypothesis', hypothesisId: 'h-2' },
      messageKey: `action:1700000001.000001:${USER}`,
    });
    expect(fake.postEphemeral).not.toHaveBeenCalled();
  });

  it('drops a second delivery of the same click before any work', async () => {
    const fake = fakeDeps({ sessions: [session()], firstDelivery: false });
    const { ack, args } = buttonClick('hypothesis_choose', JSON.stringify({ s: 's-1', h: 'h-2' }));
    await handleClick(fake.deps, hypothesisButton, args);
    expect(ack).toHaveBeenCalledOnce();
    expect(fake.firstDelivery).toHaveBeenCalledWith(`action:1700000001.000001:${USER}`);
    expect(fake.deliverInput).not.toHaveBeenCalled();
  });

  it('answers a malformed hypothesis button with what to do instead', async () => {
    const fake = fakeDeps({ sessions: [session()] });
    const { args } = buttonClick('hypothesis_choose', '{"s":');
    await handleClick(fake.deps, hypothesisButton, args);
    expect(fake.deliverInput).not.toHaveBeenCalled();
    expect(fake.postEphemeral.mock.calls[0]?.[0]).toMatchObject({
      channel: CHANNEL,
      user: USER,
      thread_ts: '1700000000.000100',
      text: expect.stringMatching(/malformed; choose the hypothesis by replying in the thread/),
    });
  });

  it('refuses a click from another channel and writes the refusal to the session timeline', async () => {
    const fake = fakeDeps({ sessions: [session()] });
    const { args } = buttonClick('hypothesis_choose', JSON.stringify({ s: 's-1', h: 'h-2' }), { channel: 'COTHER' });
    await handleClick(fake.deps, hypothesisButton, args);
    expect(fake.deliverInput).not.toHaveBeenCalled();
    expect(fake.postEphemeral.mock.calls[0]?.[0].text).toBe(OUTSIDE_CHANNEL_TEXT);
    expect(fake.timelineAppend).toHaveBeenCalledWith('s-1', expect.objectContaining({ type: 'policy.refused' }));
  });

  it('says "click again" when a handler fails, and does not throw to Bolt', async () => {
    const fake = fakeDeps({ sessions: [session()] });
    fake.deliverInput.mockRejectedValueOnce(new Error('inbox unavailable'));
    const { args } = buttonClick('hypothesis_choose', JSON.stringify({ s: 's-1', h: 'h-2' }));
    await handleClick(fake.deps, hypothesisButton, args);
    expect(fake.postEphemeral.mock.calls[0]?.[0].text).toMatch(/did not go through on my side; please click again/);
  });

  it('does not move a session that already runs in a namespace', async () => {
    const fake = fakeDeps({ sessions: [session({ namespace: 'student03' })] });
    const { args } = buttonClick('namespace_choose', JSON.stringify({ s: 's-1', n: 'student04' }));
    await handleClick(fake.deps, { actionId: 'namespace_choose', handler: chooseNamespace, dedupe: true }, args);
    expect(fake.deliverInput).not.toHaveBeenCalled();
    expect(fake.postEphemeral.mock.calls[0]?.[0].text).toMatch(
      /already continues in `student03`, so `student04` was not taken/,
    );
  });

  it('answers a button it does not know, and leaves a known one to its own listener', async () => {
    const fake = fakeDeps();
    const unknown = buttonClick('someone_elses_button', 'x');
    await answerUnknownButton(fake.deps, unknown.args);
    expect(unknown.ack).toHaveBeenCalledOnce();
    expect(fake.postEphemeral.mock.calls[0]?.[0]).toMatchObject({ user: USER, text: UNKNOWN_ACTION_TEXT });

    const known = buttonClick('approval_approve', 'a-1');
    await answerUnknownButton(fake.deps, known.args);
    expect(known.ack).not.toHaveBeenCalled();
    expect(fake.postEphemeral).toHaveBeenCalledOnce();
  });

  it('answers a repeated slash command with an empty acknowledgement and starts nothing', async () => {
    const fake = fakeDeps({ firstDelivery: false });
    const ack = vi.fn(async (_?: unknown) => undefined);
    const command = { text: 'pvc binding in student03', trigger_id: 'trigger-9', channel_id: CHANNEL, user_id: USER };
    await onTriageCommand(fake.deps, { ack, command } as unknown as Parameters<typeof onTriageCommand>[1]);
    expect(fake.firstDelivery).toHaveBeenCalledWith('command:trigger-9');
    expect(ack).toHaveBeenCalledWith();
  });

  it('replaces a submitted modal it never opened with one that says so', async () => {
    const fake = fakeDeps();
    const ack = vi.fn(async (_?: unknown) => undefined);
    const view = { id: 'V1', callback_id: 'legacy_modal' };
    await onUnknownSubmission(fake.deps, { ack, view } as unknown as Parameters<typeof onUnknownSubmission>[1]);
    expect(ack).toHaveBeenCalledWith(expect.objectContaining({ response_action: 'update' }));
  });

  it('publishes App Home only for the Home tab', async () => {
    const fake = fakeDeps();
    const event = { type: 'app_home_opened', user: USER, channel: 'D1', tab: 'messages', event_ts: '1' };
    await onAppHomeOpened(fake.deps, { event } as unknown as Parameters<typeof onAppHomeOpened>[1]);
    expect(fake.publishHome).not.toHaveBeenCalled();
  });
});
