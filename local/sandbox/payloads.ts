import { randomBytes, randomUUID } from 'node:crypto';
import type { SandboxWorkspace } from './workspace.js';

/**
 * Builders for the requests Slack sends to an app, in Slack's own shapes and encodings: slash commands and
 * interactions are `application/x-www-form-urlencoded` (interactions as one `payload` field holding JSON), events
 * are a JSON `event_callback` envelope. Each builder returns the exact body string that is then signed and sent.
 */

export interface SlashCommandInput {
  user: string;
  channel: string;
  command: string;
  text: string;
  responseUrl: string;
  triggerId: string;
}

function userName(workspace: SandboxWorkspace, id: string): string {
  return workspace.users.find((u) => u.id === id)?.name ?? id;
}

function channelName(workspace: SandboxWorkspace, id: string): string {
  const channel = workspace.channels.find((c) => c.id === id);
  if (channel === undefined) return id;
  return channel.isIm ? 'directmessage' : channel.name;
}

export function slashCommandBody(workspace: SandboxWorkspace, input: SlashCommandInput): string {
  return new URLSearchParams({
    team_id: workspace.teamId,
    team_domain: workspace.teamDomain,
    channel_id: input.channel,
    channel_name: channelName(workspace, input.channel),
    user_id: input.user,
    user_name: userName(workspace, input.user),
    command: input.command,
    text: input.text,
    api_app_id: workspace.appId,
    is_enterprise_install: 'false',
    response_url: input.responseUrl,
    trigger_id: input.triggerId,
  }).toString();
}

export function newEventId(): string {
  return `Ev${randomBytes(6).toString('hex').toUpperCase()}`;
}

/** Slack's rich_text rendering of what a person typed: text runs and user mentions. */
function richTextBlocks(text: string): unknown[] {
  const elements: Record<string, unknown>[] = [];
  const pattern = /<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g;
  let last = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match.index > last) elements.push({ type: 'text', text: text.slice(last, match.index) });
    elements.push({ type: 'user', user_id: match[1] });
    last = match.index + match[0].length;
  }
  if (last < text.length) elements.push({ type: 'text', text: text.slice(last) });
  return [
    {
      type: 'rich_text',
      block_id: randomBytes(3).toString('base64url'),
      elements: [{ type: 'rich_text_section', elements }],
    },
  ];
}

export interface UserMessageInput {
  user: string;
  channel: string;
  text: string;
  ts: string;
  threadTs?: string;
}

/** The fields Slack repeats in every event about one person's message. */
function userMessageFields(workspace: SandboxWorkspace, input: UserMessageInput): Record<string, unknown> {
  return {
    user: input.user,
    text: input.text,
    ts: input.ts,
    ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
    client_msg_id: randomUUID(),
    team: workspace.teamId,
    blocks: richTextBlocks(input.text),
    channel: input.channel,
    event_ts: input.ts,
  };
}

/** The `message` event of a person's message (`channel_type` channel or im). */
export function messageEvent(workspace: SandboxWorkspace, input: UserMessageInput): Record<string, unknown> {
  const channel = workspace.channels.find((c) => c.id === input.channel);
  return {
    type: 'message',
    ...userMessageFields(workspace, input),
    channel_type: channel?.isIm ? 'im' : 'channel',
  };
}

/** The `app_mention` event Slack sends, besides the `message` copy, when a message mentions the bot. */
export function appMentionEvent(workspace: SandboxWorkspace, input: UserMessageInput): Record<string, unknown> {
  return {
    type: 'app_mention',
    ...userMessageFields(workspace, input),
  };
}

export function appHomeOpenedEvent(input: {
  user: string;
  channel: string;
  view?: Record<string, unknown>;
}): Record<string, unknown> {
  return {
    type: 'app_home_opened',
    user: input.user,
    channel: input.channel,
    tab: 'home',
    ...(input.view === undefined ? {} : { view: input.view }),
    event_ts: eventTs(),
  };
}

/** A Slack timestamp: seconds, a dot, six digits. */
function eventTs(now = Date.now()): string {
  const micros = (now % 1000) * 1000 + (randomBytes(2).readUInt16BE() % 1000);
  return `${Math.floor(now / 1000)}.${String(micros).padStart(6, '0')}`;
}

export function eventCallbackBody(
  workspace: SandboxWorkspace,
  event: Record<string, unknown>,
  eventId: string = newEventId(),
): string {
  return JSON.stringify({
    team_id: workspace.teamId,
    context_team_id: workspace.teamId,
    context_enterprise_id: null,
    api_app_id: workspace.appId,
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      {
        enterprise_id: null,
        team_id: workspace.teamId,
        user_id: workspace.botUserId,
        is_bot: true,
        is_enterprise_install: false,
      },
    ],
    is_ext_shared_channel: false,
    event_context: `4-${randomBytes(12).toString('base64url')}`,
  });
}

function userObject(workspace: SandboxWorkspace, id: string): Record<string, unknown> {
  const name = userName(workspace, id);
  return { id, username: name, name, team_id: workspace.teamId };
}

/** One element interaction as `actions[]` carries it. */
export interface ActionInput {
  action_id: string;
  block_id: string;
  type: string;
  value?: string | undefined;
  text?: string | undefined;
  style?: string | undefined;
  selected_option?: { text: { type: 'plain_text'; text: string; emoji?: boolean }; value: string } | undefined;
  selected_user?: string | undefined;
  /** Slack's id of this one interaction; a repeated delivery of the same click carries the same one. */
  action_ts?: string | undefined;
}

export type ViewStateValues = Record<string, Record<string, Record<string, unknown>>>;

export interface MessageActionInput {
  user: string;
  channel: string;
  /** The message as the channel holds it; absent for an ephemeral message (Slack does not echo those). */
  message?: Record<string, unknown>;
  messageTs: string;
  threadTs?: string;
  isEphemeral: boolean;
  action: ActionInput;
  state: ViewStateValues;
  responseUrl: string;
  triggerId: string;
}

function actionEntry(action: ActionInput): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    action_id: action.action_id,
    block_id: action.block_id,
    type: action.type,
    action_ts: action.action_ts ?? eventTs(),
  };
  if (action.type === 'button') {
    entry['text'] = { type: 'plain_text', text: action.text ?? '', emoji: true };
    if (action.value !== undefined) entry['value'] = action.value;
    if (action.style !== undefined) entry['style'] = action.style;
  } else if (action.type === 'static_select' || action.type === 'overflow' || action.type === 'radio_buttons') {
    entry['selected_option'] = action.selected_option ?? null;
    if (action.type === 'static_select') entry['placeholder'] = { type: 'plain_text', text: 'Select', emoji: true };
  } else if (action.type === 'users_select') {
    entry['selected_user'] = action.selected_user ?? null;
  } else if (action.value !== undefined) {
    entry['value'] = action.value;
  }
  return entry;
}

function interactionBody(payload: Record<string, unknown>): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

export function messageBlockActionsBody(workspace: SandboxWorkspace, input: MessageActionInput): string {
  const channel = workspace.channels.find((c) => c.id === input.channel);
  return interactionBody({
    type: 'block_actions',
    user: userObject(workspace, input.user),
    api_app_id: workspace.appId,
    container: {
      type: 'message',
      message_ts: input.messageTs,
      channel_id: input.channel,
      is_ephemeral: input.isEphemeral,
      ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
    },
    trigger_id: input.triggerId,
    team: { id: workspace.teamId, domain: workspace.teamDomain },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: input.channel, name: channel?.isIm ? 'directmessage' : (channel?.name ?? input.channel) },
    ...(input.message === undefined ? {} : { message: input.message }),
    state: { values: input.state },
    response_url: input.responseUrl,
    actions: [actionEntry(input.action)],
  });
}

export interface ViewActionInput {
  user: string;
  view: Record<string, unknown>;
  action: ActionInput;
  state: ViewStateValues;
  triggerId: string;
}

/** A view as Slack echoes it in interaction payloads: the stored view with the person's current input state. */
function viewPayload(view: Record<string, unknown>, state: ViewStateValues): Record<string, unknown> {
  const { user: _user, closed: _closed, ...rest } = view;
  return {
    ...rest,
    state: { values: state },
    previous_view_id: null,
    root_view_id: view['id'],
    app_installed_team_id: view['team_id'],
  };
}

export function viewBlockActionsBody(workspace: SandboxWorkspace, input: ViewActionInput): string {
  return interactionBody({
    type: 'block_actions',
    user: userObject(workspace, input.user),
    api_app_id: workspace.appId,
    container: { type: 'view', view_id: input.view['id'] },
    trigger_id: input.triggerId,
    team: { id: workspace.teamId, domain: workspace.teamDomain },
    enterprise: null,
    is_enterprise_install: false,
    view: viewPayload(input.view, input.state),
    actions: [actionEntry(input.action)],
  });
}

export function viewSubmissionBody(
  workspace: SandboxWorkspace,
  input: { user: string; view: Record<string, unknown>; state: ViewStateValues; triggerId: string },
): string {
  return interactionBody({
    type: 'view_submission',
    team: { id: workspace.teamId, domain: workspace.teamDomain },
    user: userObject(workspace, input.user),
    api_app_id: workspace.appId,
    trigger_id: input.triggerId,
    view: viewPayload(input.view, input.state),
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  });
}

export function viewClosedBody(
  workspace: SandboxWorkspace,
  input: { user: string; view: Record<string, unknown>; state: ViewStateValues },
): string {
  return interactionBody({
    type: 'view_closed',
    team: { id: workspace.teamId, domain: workspace.teamDomain },
    user: userObject(workspace, input.user),
    api_app_id: workspace.appId,
    view: viewPayload(input.view, input.state),
    is_cleared: false,
    is_enterprise_install: false,
    enterprise: null,
  });
}

/**
 * What a person typed, as Slack delivers it: `@name` mentions of known users become `<@ID>` (Slack's client
 * does that when you pick a name from the autocomplete).
 */
export function encodeMentions(workspace: SandboxWorkspace, text: string): string {
  return text.replace(/(^|[\s(])@([a-z0-9._-]+)/gi, (whole, before: string, name: string) => {
    const user = workspace.users.find((u) => u.name.toLowerCase() === name.toLowerCase());
    return user === undefined ? whole : `${before}<@${user.id}>`;
  });
}
