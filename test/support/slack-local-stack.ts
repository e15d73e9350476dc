import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, expect } from 'vitest';
import { DEMO_IDS, type SlackStandIn, type StandInMessage } from '../../local/slack/index.js';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../local/stack.js';
import { createSlackDepsFromEnv } from '../../src/app/slack-runtime.js';
import { createSlackHttpHandler, type SlackHttpHandler, type SlackHttpResponse } from '../../src/slack/receiver.js';
import type { SnapshotServer } from '../../src/snapshot-api/server.js';
import { send } from './slack-harness.js';

/**
 * A person in Slack against the whole local stack (dynalite, the real state machines on the local Step Functions
 * endpoint, the snapshot API server, the Slack stand-in): each step is a request in Slack's shape, signed with the
 * stack's signing secret and handed to the Slack function's handler, and every check reads what the stand-in shows.
 */

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

/** A button as a message's `actions` block carries it. */
export interface SlackButton {
  action_id: string;
  value: string;
}

export interface SlackOnStack {
  /** The running stack (started in `beforeAll`). */
  stack(): LocalStack;
  slack(): SlackStandIn;
  kube(): SnapshotServer;
  /** Signs and hands a body to the Slack function; Slack would retry anything but a 200. */
  post(body: string, contentType: string): Promise<SlackHttpResponse>;
  /** `/triage <text>` typed by the requester in the incident channel; the acknowledgement it got. */
  command(text: string): Promise<{ text: string }>;
  /** The ts of calmops' latest top-level message in the incident channel: the thread a command opened. */
  latestRootTs(): string;
  /** `/triage <text>` that must start a session: its id and thread. */
  triage(text: string): Promise<{ sessionId: string; threadTs: string }>;
  /** A person's message (or mention of the bot), posted to the stand-in and delivered as Slack's event. */
  event(type: 'app_mention' | 'message', user: string, text: string, threadTs?: string): Promise<StandInMessage>;
  /** A reply in a thread, by the requester unless `user` says otherwise. */
  say(threadTs: string, text: string, user?: string): Promise<StandInMessage>;
  /** A button clicked on a message; a repeated `actionTs` is Slack's retry of the same click. */
  click(
    user: string,
    message: Pick<StandInMessage, 'ts' | 'thread_ts' | 'text' | 'blocks'>,
    button: SlackButton,
    options?: { actionTs?: string; channel?: string },
  ): Promise<void>;
}

export interface SlackOnStackOptions {
  /** Names the trigger and event ids (`trigger.<label>.N`, `Ev<Label>N`), so a file's requests are told apart. */
  label?: string;
  /** How long starting the stack may take, when longer than the project's hook timeout. */
  startTimeoutMs?: number;
}

/** A message's text and blocks in one string, so a pattern can match either. */
export function renderMessage(message: Pick<StandInMessage, 'text' | 'blocks'>): string {
  return `${message.text}\n${JSON.stringify(message.blocks ?? [])}`;
}

/** The buttons in a message's `actions` blocks. */
export function buttonsOf(message: Pick<StandInMessage, 'blocks'>): SlackButton[] {
  return (message.blocks ?? []).flatMap((b) => {
    const block = b as { type?: string; elements?: { type?: string; action_id?: string; value?: string }[] };
    return block.type === 'actions'
      ? (block.elements ?? [])
          .filter((e) => e.type === 'button' && e.action_id !== undefined)
          .map((e) => ({ action_id: e.action_id as string, value: e.value ?? '' }))
      : [];
  });
}

/**
 * Starts the local stack and the Slack function for the enclosing `describe` and closes them after its tests. The
 * accessors are returned at once and answer once `beforeAll` has run, so tests can destructure them up front.
 */
export function useSlackOnStack(stackOptions: LocalStackOptions, options: SlackOnStackOptions = {}): SlackOnStack {
  const channel = DEMO_IDS.incidents;
  const { label } = options;
  const triggerPrefix = label === undefined ? 'trigger.' : `trigger.${label}.`;
  const eventPrefix = label === undefined ? 'Ev' : `Ev${label.charAt(0).toUpperCase()}${label.slice(1)}`;
  let running: LocalStack | undefined;
  let handle: SlackHttpHandler;
  let secret = '';
  let counter = 0;

  beforeAll(async () => {
    running = await startLocalStack({ logLevel: 'SILENT', ...stackOptions });
    secret = running.env['SLACK_SIGNING_SECRET'] ?? '';
    handle = createSlackHttpHandler(
      await createSlackDepsFromEnv(running.env, {
        logger: new Logger({ serviceName: 'calmops-slack', logLevel: 'SILENT' }),
      }),
    );
  }, options.startTimeoutMs);
  afterAll(async () => {
    await running?.close();
  });

  const stack = () => {
    if (running === undefined) throw new Error('the local stack has not started');
    return running;
  };
  const slack = () => {
    const standIn = stack().slack;
    if (standIn === undefined) throw new Error('the stack did not start the Slack stand-in');
    return standIn;
  };
  const kube = () => {
    const server = stack().kube;
    if (server === undefined) throw new Error('the stack did not start the snapshot API server');
    return server;
  };

  async function post(body: string, contentType: string) {
    const response = await send(handle, body, { contentType, secret });
    expect(response.statusCode).toBe(200);
    return response;
  }

  async function command(text: string) {
    const body = new URLSearchParams({
      command: '/triage',
      text,
      user_id: DEMO_IDS.requester,
      channel_id: channel,
      team_id: DEMO_IDS.team,
      trigger_id: `${triggerPrefix}${++counter}`,
    }).toString();
    return JSON.parse((await post(body, FORM)).body) as { text: string };
  }

  const latestRootTs = () =>
    slack()
      .messages(channel)
      .filter((m) => m.thread_ts === undefined && m.bot_id !== undefined)
      .at(-1)?.ts ?? '';

  async function triage(text: string) {
    const reply = await command(text);
    const sessionId = /session `([^`]+)`/.exec(reply.text)?.[1];
    if (sessionId === undefined) throw new Error(`no session started: ${reply.text}`);
    return { sessionId, threadTs: latestRootTs() };
  }

  async function event(type: 'app_mention' | 'message', user: string, text: string, threadTs?: string) {
    const message = slack().addUserMessage({ channel, user, text, ...(threadTs ? { thread_ts: threadTs } : {}) });
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: DEMO_IDS.team,
      event_id: `${eventPrefix}${++counter}`,
      event: {
        type,
        channel_type: 'channel',
        user,
        text,
        ts: message.ts,
        ...(threadTs ? { thread_ts: threadTs } : {}),
        channel,
      },
    });
    await post(body, JSON_TYPE);
    return message;
  }

  const say = (threadTs: string, text: string, user: string = DEMO_IDS.requester) =>
    event('message', user, text, threadTs);

  async function click(
    user: string,
    message: Pick<StandInMessage, 'ts' | 'thread_ts' | 'text' | 'blocks'>,
    button: SlackButton,
    clickOptions: { actionTs?: string; channel?: string } = {},
  ) {
    const from = clickOptions.channel ?? channel;
    const payload = {
      type: 'block_actions',
      user: { id: user, team_id: DEMO_IDS.team },
      team: { id: DEMO_IDS.team },
      channel: { id: from },
      container: { type: 'message', channel_id: from, message_ts: message.ts },
      message: { ts: message.ts, thread_ts: message.thread_ts, text: message.text, blocks: message.blocks ?? [] },
      trigger_id: `${triggerPrefix}${++counter}`,
      actions: [
        {
          type: 'button',
          action_id: button.action_id,
          value: button.value,
          action_ts: clickOptions.actionTs ?? `${Math.floor(Date.now() / 1000)}.${String(++counter).padStart(6, '0')}`,
        },
      ],
    };
    await post(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), FORM);
  }

  return { stack, slack, kube, post, command, latestRootTs, triage, event, say, click };
}
