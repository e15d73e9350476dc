import { performance } from 'node:perf_hooks';
import { type BotAnswer, createBotClient } from '../../local/sandbox/bot-client.js';
import {
  appMentionEvent,
  eventCallbackBody,
  messageBlockActionsBody,
  messageEvent,
  newEventId,
  slashCommandBody,
  type ViewStateValues,
  viewSubmissionBody,
} from '../../local/sandbox/payloads.js';
import { buildWorkspace, type SandboxWorkspace } from '../../local/sandbox/workspace.js';
import { DEMO_IDS } from '../../local/slack/index.js';

/**
 * Slack, played over real HTTP against a running calmops (`npm start` in this process or in a child): requests in
 * Slack's shapes and encodings, signed with the app's signing secret (v0 HMAC-SHA256 over `v0:<ts>:<body>`), sent to
 * `/slack/events`, with Slack's retry headers when asked. The payload shapes are the sandbox page's and the signing
 * is the sandbox's bot client, so tests, the page and the benchmark send the same bytes.
 */

type SlackContentType = 'application/json' | 'application/x-www-form-urlencoded';

/** One request as Slack would send it: the exact body that is signed and put on the wire. */
export interface SlackRequest {
  contentType: SlackContentType;
  body: string;
  /** The Events API envelope's event_id, which Slack keeps on every retry of the event. */
  eventId?: string;
}

/** The workspace the builders speak for: the demo team, its people and channels, the calmops app. */
export const SLACK_WORKSPACE: SandboxWorkspace = buildWorkspace();

const FORM: SlackContentType = 'application/x-www-form-urlencoded';
const JSON_TYPE: SlackContentType = 'application/json';

let triggerCounter = 0;
let actionCounter = 0;

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

function triggerId(): string {
  return `trigger.${Date.now()}.${++triggerCounter}`;
}

/** A response_url nothing listens on: calmops answers slash commands in the acknowledgement. */
const UNUSED_RESPONSE_URL = 'http://127.0.0.1:9/unused';

/** `/triage <text>` typed in a channel. */
export function slashCommand(
  text: string,
  options: { user?: string; channel?: string; triggerId?: string; responseUrl?: string; command?: string } = {},
): SlackRequest {
  return {
    contentType: FORM,
    body: slashCommandBody(SLACK_WORKSPACE, {
      user: options.user ?? DEMO_IDS.requester,
      channel: options.channel ?? DEMO_IDS.incidents,
      command: options.command ?? '/triage',
      text,
      responseUrl: options.responseUrl ?? UNUSED_RESPONSE_URL,
      triggerId: options.triggerId ?? triggerId(),
    }),
  };
}

/** Any Events API event in its `event_callback` envelope (event_id, event_time, team, app, authorizations). */
export function eventCallback(event: Record<string, unknown>, options: { eventId?: string } = {}): SlackRequest {
  const eventId = options.eventId ?? newEventId();
  return {
    contentType: JSON_TYPE,
    body: eventCallbackBody(SLACK_WORKSPACE, { event_ts: event['ts'] ?? `${nowSeconds()}.000100`, ...event }, eventId),
    eventId,
  };
}

export interface ThreadMessageInput {
  text: string;
  /** The message's own ts; `<channel>:<ts>` is what calmops consumes it by. */
  ts: string;
  threadTs: string;
  user?: string;
  channel?: string;
  eventId?: string;
}

/** A person's reply in a thread: the `message` event Slack sends for it. */
export function threadMessage(input: ThreadMessageInput): SlackRequest {
  return eventCallback(
    messageEvent(SLACK_WORKSPACE, {
      user: input.user ?? DEMO_IDS.requester,
      channel: input.channel ?? DEMO_IDS.incidents,
      text: input.text,
      ts: input.ts,
      threadTs: input.threadTs,
    }),
    input.eventId === undefined ? {} : { eventId: input.eventId },
  );
}

/**
 * The `app_mention` event of a message that mentions the bot (its text should contain `<@UCALMOPSBOT>`). Slack
 * also sends the same message as a `message` event, under another event id: send `threadMessage` for that copy.
 */
export function appMention(input: Omit<ThreadMessageInput, 'threadTs'> & { threadTs?: string }): SlackRequest {
  return eventCallback(
    appMentionEvent(SLACK_WORKSPACE, {
      user: input.user ?? DEMO_IDS.requester,
      channel: input.channel ?? DEMO_IDS.incidents,
      text: input.text,
      ts: input.ts,
      ...(input.threadTs === undefined ? {} : { threadTs: input.threadTs }),
    }),
    input.eventId === undefined ? {} : { eventId: input.eventId },
  );
}

/** `<@bot>` as Slack writes a mention of calmops in message text. */
export function mentionOfBot(): string {
  return `<@${SLACK_WORKSPACE.botUserId}>`;
}

export interface ButtonClickInput {
  actionId: string;
  value: string;
  user: string;
  channel?: string;
  /** The message holding the button, and its thread. */
  messageTs?: string;
  threadTs?: string;
  blocks?: unknown[];
  /** A repeated delivery of one click keeps its action_ts; a second click gets a new one. */
  actionTs?: string;
  blockId?: string;
  /** The button's label. */
  text?: string;
  /** The text of the message holding the button. */
  messageText?: string;
  responseUrl?: string;
  triggerId?: string;
}

/** A `block_actions` interaction: one button clicked on a message in a channel. */
export function buttonClick(input: ButtonClickInput): SlackRequest {
  const messageTs = input.messageTs ?? '1.000001';
  return {
    contentType: FORM,
    body: messageBlockActionsBody(SLACK_WORKSPACE, {
      user: input.user,
      channel: input.channel ?? DEMO_IDS.incidents,
      message: {
        type: 'message',
        ts: messageTs,
        ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
        text: input.messageText ?? '',
        blocks: input.blocks ?? [],
      },
      messageTs,
      ...(input.threadTs === undefined ? {} : { threadTs: input.threadTs }),
      isEphemeral: false,
      action: {
        type: 'button',
        action_id: input.actionId,
        block_id: input.blockId ?? 'approval',
        value: input.value,
        text: input.text ?? 'Approve',
        action_ts: input.actionTs ?? `${nowSeconds()}.${String(++actionCounter).padStart(6, '0')}`,
      },
      state: {},
      responseUrl: input.responseUrl ?? UNUSED_RESPONSE_URL,
      triggerId: input.triggerId ?? triggerId(),
    }),
  };
}

/** A modal submitted: its stored view (id, callback_id, private_metadata, hash…) with the values entered. */
export function viewSubmission(input: {
  callbackId: string;
  user: string;
  privateMetadata: string;
  /** `state.values`: block id → action id → the element's state. */
  values: Record<string, Record<string, unknown>>;
  viewId?: string;
  hash?: string;
}): SlackRequest {
  const id = input.viewId ?? `V${Date.now()}${++triggerCounter}`;
  return {
    contentType: FORM,
    body: viewSubmissionBody(SLACK_WORKSPACE, {
      user: input.user,
      view: {
        id,
        team_id: SLACK_WORKSPACE.teamId,
        type: 'modal',
        callback_id: input.callbackId,
        private_metadata: input.privateMetadata,
        hash: input.hash ?? `${Date.now()}.h${triggerCounter}`,
        blocks: [],
        title: { type: 'plain_text', text: 'x' },
        app_id: SLACK_WORKSPACE.appId,
        bot_id: DEMO_IDS.botId,
      },
      state: input.values as ViewStateValues,
      triggerId: triggerId(),
    }),
  };
}

/** Why Slack retries an event: it got no 200 in time, a connection failed, or the app answered an error. */
type SlackRetryReason = 'http_timeout' | 'http_error' | 'connection_failed' | 'too_many_requests';

/** The headers of Slack's n-th retry of an event (Slack retries up to three times). */
function retryHeaders(num: number, reason: SlackRetryReason = 'http_timeout'): Record<string, string> {
  return { 'x-slack-retry-num': String(num), 'x-slack-retry-reason': reason };
}

/** How calmops answered one request, as Slack would see it, and how long the answer took. */
export interface SlackAnswer {
  /** HTTP status, or 0 when there was no answer (connection refused or reset, or `timeoutMs` passed). */
  status: number;
  contentType: string;
  body: string;
  /** `dispatch_failed` (no connection) or `operation_timeout` when status is 0. */
  failure?: BotAnswer['failure'];
  elapsedMs: number;
}

export interface SignedSlackOptions {
  /**
   * Where calmops listens: an origin (`http://127.0.0.1:3000`, `/slack/events` is added) or the full request URL;
   * a function when it is known only later or changes between restarts.
   */
  url: string | (() => string);
  signingSecret: string;
  /** When an answer counts as missing; Slack waits 3 s. 30 s by default, so a busy test machine is not a failure. */
  timeoutMs?: number;
}

export interface SendOptions {
  /** Slack's retry of an earlier attempt with the same body (`X-Slack-Retry-Num`, `X-Slack-Retry-Reason`). */
  retry?: { num: number; reason?: SlackRetryReason };
  /** More headers, sent after the signed ones (they can override them, to test refusals). */
  headers?: Record<string, string>;
}

export type SignedSlack = (request: SlackRequest, options?: SendOptions) => Promise<SlackAnswer>;

function eventsUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = '/slack/events';
  return parsed.toString();
}

/** A sender bound to one calmops: signs each request now (a retry is signed afresh, as Slack does) and posts it. */
export function signedSlack(options: SignedSlackOptions): SignedSlack {
  const url = options.url;
  const client = createBotClient({
    url: () => eventsUrl(typeof url === 'function' ? url() : url),
    signingSecret: options.signingSecret,
    timeoutMs: options.timeoutMs ?? 30_000,
  });
  return async (request, sendOptions = {}) => {
    const headers = {
      ...(sendOptions.retry === undefined ? {} : retryHeaders(sendOptions.retry.num, sendOptions.retry.reason)),
      ...sendOptions.headers,
    };
    const started = performance.now();
    const answer = await client(request.body, request.contentType, headers);
    return {
      status: answer.status,
      contentType: answer.contentType,
      body: answer.body,
      ...(answer.failure === undefined ? {} : { failure: answer.failure }),
      elapsedMs: performance.now() - started,
    };
  };
}
