import { Logger } from '@aws-lambda-powertools/logger';
import { expect } from 'vitest';
import { messageEvent } from '../../local/sandbox/payloads.js';
import { DEMO_IDS, type SlackStandIn, type StandInMessage } from '../../local/slack/index.js';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../local/stack.js';
import { createSlackDepsFromEnv } from '../../src/app/slack-runtime.js';
import type { FunctionHttpResponse as SlackHttpResponse } from '../../src/http/function-http.js';
import { createSlackHttpHandler } from '../../src/slack/receiver.js';
import type { SnapshotServer } from '../../src/snapshot-api/server.js';
import {
  appMention,
  buttonClick,
  eventCallback,
  SLACK_WORKSPACE,
  slashCommand,
  threadMessage,
} from './signed-slack.js';
import { send } from './slack-harness.js';
import type { SlackButton } from './slack-messages.js';
import { startedForSuite } from './suite-lifecycle.js';

/**
 * A person in Slack against the whole local stack (dynalite, the real state machines on the local Step Functions
 * endpoint, the snapshot API server, the Slack stand-in): each step is a request in Slack's shape, signed with the
 * stack's signing secret and handed to the Slack function's handler, and every check reads what the stand-in shows.
 */

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

/**
 * Starts the local stack and the Slack function for the enclosing `describe` and closes them after its tests. The
 * accessors are returned at once and answer once `beforeAll` has run, so tests can destructure them up front.
 */
export function useSlackOnStack(stackOptions: LocalStackOptions, options: SlackOnStackOptions = {}): SlackOnStack {
  const channel = DEMO_IDS.incidents;
  const { label } = options;
  const triggerPrefix = label === undefined ? 'trigger.' : `trigger.${label}.`;
  const eventPrefix = label === undefined ? 'Ev' : `Ev${label.charAt(0).toUpperCase()}${label.slice(1)}`;
  let counter = 0;

  const started = startedForSuite(async () => {
    const running = await startLocalStack({ logLevel: 'SILENT', ...stackOptions });
    try {
      const handle = createSlackHttpHandler(
        await createSlackDepsFromEnv(running.env, {
          logger: new Logger({ serviceName: 'calmops-slack', logLevel: 'SILENT' }),
        }),
      );
      return { running, handle, secret: running.env['SLACK_SIGNING_SECRET'] ?? '', close: () => running.close() };
    } catch (error) {
      await running.close();
      throw error;
    }
  }, options.startTimeoutMs);

  const stack = () => {
    if (started.running === undefined) throw new Error('the local stack has not started');
    return started.running;
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
    const response = await send(started.handle, body, { contentType, secret: started.secret });
    expect(response.statusCode).toBe(200);
    return response;
  }

  async function command(text: string) {
    const request = slashCommand(text, { channel, triggerId: `${triggerPrefix}${++counter}` });
    return JSON.parse((await post(request.body, request.contentType)).body) as { text: string };
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
    const input = { user, channel, text, ts: message.ts, eventId: `${eventPrefix}${++counter}` };
    const request =
      type === 'app_mention'
        ? appMention({ ...input, ...(threadTs ? { threadTs } : {}) })
        : threadTs
          ? threadMessage({ ...input, threadTs })
          : eventCallback(messageEvent(SLACK_WORKSPACE, input), { eventId: input.eventId });
    await post(request.body, request.contentType);
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
    const request = buttonClick({
      actionId: button.action_id,
      value: button.value,
      user,
      channel: clickOptions.channel ?? channel,
      messageTs: message.ts,
      ...(message.thread_ts === undefined ? {} : { threadTs: message.thread_ts }),
      messageText: message.text,
      blocks: message.blocks ?? [],
      ...(clickOptions.actionTs === undefined ? {} : { actionTs: clickOptions.actionTs }),
      triggerId: `${triggerPrefix}${++counter}`,
    });
    await post(request.body, request.contentType);
  }

  return { stack, slack, kube, post, command, latestRootTs, triage, event, say, click };
}
