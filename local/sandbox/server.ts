import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod';
import type { DemoClusterView } from '../demo/control.js';
import { readBody, sendJson as sendJsonAnswer } from '../http-json.js';
import { hostRefusal, isStateChanging, originRefusal, refuse } from '../request-guard.js';
import type { RecordedCall, SlackStandIn, StandInMessage, StandInView } from '../slack/server.js';
import { type ClientAssets, loadClientAssets, stopClientBuilds } from './assets.js';
import { type BotAnswer, type BotClient, failureName } from './bot-client.js';
import { answerDemoRoute, demoClusterView, isDemoRoute, type SandboxDemoCluster } from './demo-routes.js';
import {
  type ActionInput,
  appHomeOpenedEvent,
  appMentionEvent,
  encodeMentions,
  eventCallbackBody,
  messageBlockActionsBody,
  messageEvent,
  slashCommandBody,
  type ViewStateValues,
  viewBlockActionsBody,
  viewClosedBody,
  viewSubmissionBody,
} from './payloads.js';
import {
  createSampleAlerts,
  isSampleAlertRoute,
  type SampleAlertsView,
  type SampleAlertTarget,
} from './sample-alerts.js';
import type { SandboxWorkspace } from './workspace.js';

export interface SandboxOptions {
  standIn: SlackStandIn;
  workspace: SandboxWorkspace;
  /** Sends a signed request to the app's `/slack/events`. */
  bot: BotClient;
  /** How long a state request waits for something to change before answering unchanged (long poll). */
  pollWaitMs?: number;
  /**
   * Keeps the conversation (not ephemeral messages, as in Slack) in this file, so threads of stored sessions are
   * still there after a restart of the stand-in, which keeps messages in memory only.
   */
  historyFile?: string;
  /**
   * The demo cluster the page may run fixes on (under `/_sandbox/demo`), or why there is none (your own cluster or
   * snapshot). Absent: none, without a reason.
   */
  demoCluster?: SandboxDemoCluster;
  /**
   * calmops' Alertmanager route and its token, for the sample alerts of the demo namespaces (under
   * `/_sandbox/alerts/sample`). The token never reaches the page. Absent: no sample alerts.
   */
  alerts?: SampleAlertTarget;
}

/** A message shown by Slack itself rather than the app: a slash command that failed, an unknown command. */
export interface SandboxNotice {
  user: string;
  channel: string;
  ts: string;
  text: string;
}

/** Everything the page shows, for every person (the page filters to the person it acts as). */
export interface SandboxState {
  version: string;
  messages: StandInMessage[];
  notices: SandboxNotice[];
  /** Open modals per user, bottom of the stack first. */
  modals: Record<string, StandInView[]>;
  homes: Record<string, StandInView>;
  /** The demo cluster's namespaces and whether each one's fix was run, or why there is nothing to fix here. */
  demoCluster: DemoClusterView;
  /** The demo namespaces' sample alerts and which of them fire, or why there are none. */
  alerts: SampleAlertsView;
}

export interface Sandbox {
  /** Answers requests under `/sandbox`; returns false for any other path. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<boolean>;
  state(): Promise<SandboxState>;
  /** Builds the page's script now rather than on the first request. */
  warm(): Promise<void>;
  /** Ends waiting state requests and writes the history file one last time. */
  close(): Promise<void>;
}

export class SandboxRequestError extends Error {
  override readonly name = 'SandboxRequestError';
  constructor(
    message: string,
    readonly status: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

const MAX_BODY = 256 * 1024;
const id = z.string().regex(/^[A-Z0-9]{2,32}$/, 'a Slack id');
const slackTs = z.string().regex(/^\d+\.\d+$/, 'a Slack timestamp');

const ComposeSchema = z.object({
  user: id,
  channel: id,
  text: z.string().min(1).max(40_000),
  threadTs: slackTs.optional(),
});

const OptionSchema = z.object({
  text: z.object({ type: z.literal('plain_text'), text: z.string(), emoji: z.boolean().optional() }),
  value: z.string(),
});

const ActionSchema = z.object({
  action_id: z.string().min(1).max(255),
  block_id: z.string().min(1).max(255),
  type: z.string().min(1).max(64),
  value: z.string().max(2000).optional(),
  text: z.string().max(2000).optional(),
  style: z.string().max(16).optional(),
  selected_option: OptionSchema.optional(),
  selected_user: z.string().optional(),
});

const StateSchema = z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown())));

const ActionRequestSchema = z.object({
  user: id,
  container: z.discriminatedUnion('type', [
    z.object({ type: z.literal('message'), channel: id, ts: slackTs }),
    z.object({ type: z.literal('view'), viewId: z.string().min(1) }),
  ]),
  action: ActionSchema,
  state: StateSchema.default({}),
});

const ViewRequestSchema = z.object({ user: id, viewId: z.string().min(1), state: StateSchema.default({}) });
const HomeRequestSchema = z.object({ user: id });

async function readJson(request: IncomingMessage): Promise<unknown> {
  const body = await readBody(request, MAX_BODY);
  if (body === undefined) throw new SandboxRequestError('request body too large', 413);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new SandboxRequestError('request body is not JSON', 400, { cause: error });
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    const detail = result.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    throw new SandboxRequestError(`invalid request: ${detail}`, 400);
  }
  return result.data;
}

// The page polls its state: an answer is never reused from a cache.
const sendJson = (response: ServerResponse, status: number, body: unknown) =>
  sendJsonAnswer(response, status, body, { 'cache-control': 'no-store' });

function sendAsset(response: ServerResponse, contentType: string, body: string): void {
  response.writeHead(200, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-cache',
  });
  response.end(body);
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The sandbox's server side: serves the page, and turns what a person does on it into the signed requests Slack
 * would send (slash commands, events, interactions). The signing secret stays here; the page only says what the
 * person did. What the app posted is read back from the Web API stand-in.
 */
export function createSandbox(options: SandboxOptions): Sandbox {
  const { standIn, workspace, bot } = options;
  const pollWaitMs = options.pollWaitMs ?? 15_000;
  const demoCluster = options.demoCluster;
  // The samples name the demo cluster's pods and services: with your own cluster they would point at nothing.
  const sampleAlerts = createSampleAlerts({
    ...(options.alerts === undefined ? {} : { target: options.alerts }),
    ...(options.alerts !== undefined && (demoCluster === undefined || !('control' in demoCluster))
      ? {
          unavailable:
            'Sample alerts are for the demo cluster. Send your own from Alertmanager or curl to the webhook npm start prints (docs/alerts.md).',
        }
      : {}),
  });
  let assets: Promise<ClientAssets> | undefined;
  let localVersion = 0;
  let lastSeq = 0;
  let refreshing: Promise<void> | undefined;
  let closed = false;
  const notices: SandboxNotice[] = [];
  /** Slash command answers Slack shows straight from the ack; they never pass through the Web API. */
  const ackMessages: StandInMessage[] = [];
  const modalStacks = new Map<string, string[]>();
  /** Views replaced or pushed by a `response_action` in a view_submission ack (never seen by the Web API). */
  const ackViews = new Map<string, StandInView>();
  let tsCounter = 0;
  let history: StandInMessage[] | undefined;
  let savedVersion = '';
  let saveTimer: NodeJS.Timeout | undefined;

  const loadHistory = async (): Promise<StandInMessage[]> => {
    if (history !== undefined) return history;
    let loaded: StandInMessage[] = [];
    if (options.historyFile !== undefined) {
      try {
        const parsed: unknown = JSON.parse(await readFile(options.historyFile, 'utf8'));
        if (Array.isArray(parsed)) loaded = parsed as StandInMessage[];
      } catch {
        // No history yet, or an unreadable one: start with an empty conversation rather than not at all.
      }
    }
    history ??= loaded;
    return history;
  };

  const conversation = (): StandInMessage[] => {
    const live = [...standIn.messages(), ...ackMessages.map((m) => structuredClone(m))];
    const liveKeys = new Set(live.map((m) => `${m.channel}/${m.ts}`));
    const old = (history ?? []).filter((m) => !liveKeys.has(`${m.channel}/${m.ts}`));
    return [...old, ...live].sort((a, b) => Number(a.ts) - Number(b.ts));
  };

  const saveHistory = async () => {
    if (options.historyFile === undefined || history === undefined) return;
    const current = version();
    if (current === savedVersion) return;
    savedVersion = current;
    const kept = conversation().filter((m) => m.ephemeral_to === undefined);
    const temporary = `${options.historyFile}.tmp`;
    await writeFile(temporary, JSON.stringify(kept));
    await rename(temporary, options.historyFile);
  };

  const scheduleSave = () => {
    if (options.historyFile === undefined || saveTimer !== undefined) return;
    saveTimer = setTimeout(() => {
      saveTimer = undefined;
      void saveHistory().catch(() => undefined);
    }, 500);
  };

  const nextTs = (): string => {
    tsCounter += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(900_000 + tsCounter).padStart(6, '0')}`;
  };
  const bump = () => {
    localVersion += 1;
  };

  const persona = (user: string) => {
    if (!workspace.users.some((u) => u.id === user && !u.isBot)) {
      throw new SandboxRequestError(`unknown user ${user}`, 400);
    }
  };
  const channelFor = (channelId: string, user: string) => {
    const channel = workspace.channels.find((c) => c.id === channelId);
    if (channel === undefined) throw new SandboxRequestError(`unknown channel ${channelId}`, 400);
    if (channel.dmUser !== undefined && channel.dmUser !== user) {
      throw new SandboxRequestError(`${channelId} is another person's direct message`, 403);
    }
    return channel;
  };

  const notice = (user: string, channel: string, text: string) => {
    notices.push({ user, channel, ts: nextTs(), text });
    bump();
  };

  const applyCalls = (calls: RecordedCall[]) => {
    for (const call of calls) {
      lastSeq = Math.max(lastSeq, call.seq);
      if ((call.method === 'views.open' || call.method === 'views.push') && call.response['ok'] === true) {
        const view = call.response['view'] as StandInView | undefined;
        if (view?.user === undefined) continue;
        const stack = call.method === 'views.open' ? [] : [...(modalStacks.get(view.user) ?? [])];
        stack.push(view.id);
        modalStacks.set(view.user, stack);
      }
    }
  };

  /** Reads the stand-in's new calls over its HTTP readout, so a poll costs only what changed. */
  const refresh = (): Promise<void> => {
    refreshing ??= (async () => {
      try {
        const response = await fetch(`${standIn.origin}/_calls?after=${lastSeq}`);
        applyCalls((await response.json()) as RecordedCall[]);
      } finally {
        refreshing = undefined;
      }
    })();
    return refreshing;
  };

  const version = () => `${lastSeq}.${localVersion}`;

  const findView = (user: string, viewId: string): StandInView => {
    const view = ackViews.get(viewId) ?? standIn.views(user).find((v) => v.id === viewId);
    if (view === undefined) throw new SandboxRequestError(`no view ${viewId} for ${user}`, 404);
    return view;
  };

  const closeView = (user: string, viewId: string, all = false) => {
    const stack = modalStacks.get(user) ?? [];
    const index = stack.indexOf(viewId);
    modalStacks.set(user, all || index <= 0 ? [] : stack.slice(0, index));
    bump();
  };

  const state = async (): Promise<SandboxState> => {
    await refresh();
    const modals: Record<string, StandInView[]> = {};
    const homes: Record<string, StandInView> = {};
    for (const user of workspace.personas) {
      const views = standIn.views(user.id);
      const stack = (modalStacks.get(user.id) ?? [])
        .map((viewId) => ackViews.get(viewId) ?? views.find((v) => v.id === viewId))
        .filter((v): v is StandInView => v !== undefined && v.type === 'modal');
      if (stack.length > 0) modals[user.id] = stack;
      const home = standIn.home(user.id);
      if (home !== undefined) homes[user.id] = home;
    }
    await loadHistory();
    const messages = conversation();
    if (version() !== savedVersion) scheduleSave();
    return {
      version: version(),
      messages,
      notices: [...notices],
      modals,
      homes,
      demoCluster: demoClusterView(options.demoCluster),
      alerts: sampleAlerts.view(),
    };
  };

  const sendEvent = (event: Record<string, unknown>) => bot(eventCallbackBody(workspace, event), 'application/json');

  /** Slack shows a slash command's ack body to the person who typed it (or the channel for `in_channel`). */
  const showAck = (input: { user: string; channel: string; answer: BotAnswer }) => {
    const { answer } = input;
    if (answer.body.trim() === '') return;
    let content: Record<string, unknown>;
    if (answer.contentType.includes('application/json')) {
      try {
        content = JSON.parse(answer.body) as Record<string, unknown>;
      } catch {
        content = { text: answer.body };
      }
    } else {
      content = { text: answer.body };
    }
    if (typeof content['text'] !== 'string' && !Array.isArray(content['blocks'])) return;
    ackMessages.push({
      channel: input.channel,
      ts: nextTs(),
      text: typeof content['text'] === 'string' ? content['text'] : '',
      ...(Array.isArray(content['blocks']) ? { blocks: content['blocks'] } : {}),
      user: workspace.botUserId,
      ...(content['response_type'] === 'in_channel' ? {} : { ephemeral_to: input.user }),
    });
    bump();
  };

  const compose = async (input: z.infer<typeof ComposeSchema>) => {
    persona(input.user);
    const channel = channelFor(input.channel, input.user);
    const slash = /^\/([a-z0-9_-]+)(?:\s+([\s\S]*))?$/i.exec(input.text.trim());
    if (slash !== null) {
      const command = `/${slash[1]?.toLowerCase()}`;
      if (!workspace.commands.includes(command)) {
        notice(
          input.user,
          input.channel,
          `${command} is not a valid command. In Slack, all messages that start with the "/" character are interpreted as commands.`,
        );
        return { kind: 'notice' as const };
      }
      const body = slashCommandBody(workspace, {
        user: input.user,
        channel: input.channel,
        command,
        text: (slash[2] ?? '').trim(),
        responseUrl: standIn.responseUrl({ channel: input.channel, user: input.user }),
        triggerId: standIn.triggerId(input.user),
      });
      const answer = await bot(body, 'application/x-www-form-urlencoded');
      const failure = failureName(answer);
      if (failure !== undefined) notice(input.user, input.channel, `${command} failed with the error "${failure}"`);
      else showAck({ user: input.user, channel: input.channel, answer });
      return { kind: 'command' as const, status: answer.status, ...(failure === undefined ? {} : { failure }) };
    }
    const text = encodeMentions(workspace, input.text);
    const message = standIn.addUserMessage({
      channel: input.channel,
      user: input.user,
      text,
      ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
    });
    bump();
    const delivered = {
      user: input.user,
      channel: input.channel,
      text,
      ts: message.ts,
      ...(input.threadTs === undefined ? {} : { threadTs: input.threadTs }),
    };
    const events: Record<string, unknown>[] = [];
    const subscribed = (name: string) => workspace.botEvents.includes(name);
    if (channel.isIm) {
      if (subscribed('message.im')) events.push(messageEvent(workspace, delivered));
    } else if (channel.botIsMember) {
      if (text.includes(`<@${workspace.botUserId}>`) && subscribed('app_mention')) {
        events.push(appMentionEvent(workspace, delivered));
      }
      if (subscribed('message.channels')) events.push(messageEvent(workspace, delivered));
    }
    // Slack delivers the app_mention and the message copy as separate, concurrent requests.
    const answers = await Promise.all(events.map((event) => sendEvent(event)));
    return {
      kind: 'message' as const,
      ts: message.ts,
      events: events.map((e, i) => ({ type: e['type'], status: answers[i]?.status ?? 0 })),
    };
  };

  const action = async (input: z.infer<typeof ActionRequestSchema>) => {
    persona(input.user);
    const triggerId = standIn.triggerId(input.user);
    const act = stripUndefined(input.action);
    let body: string;
    if (input.container.type === 'message') {
      const { channel: channelId, ts } = input.container;
      channelFor(channelId, input.user);
      const message =
        standIn.messages(channelId).find((m) => m.ts === ts) ??
        ackMessages.find((m) => m.ts === ts) ??
        (await loadHistory()).find((m) => m.channel === channelId && m.ts === ts);
      if (message === undefined) throw new SandboxRequestError(`no message ${ts} in ${channelId}`, 404);
      if (message.ephemeral_to !== undefined && message.ephemeral_to !== input.user) {
        throw new SandboxRequestError('that message is visible only to someone else', 403);
      }
      const isEphemeral = message.ephemeral_to !== undefined;
      body = messageBlockActionsBody(workspace, {
        user: input.user,
        channel: channelId,
        messageTs: ts,
        ...(message.thread_ts === undefined ? {} : { threadTs: message.thread_ts }),
        isEphemeral,
        ...(isEphemeral ? {} : { message: messagePayload(workspace.teamId, message) }),
        action: act,
        state: input.state as ViewStateValues,
        responseUrl: standIn.responseUrl({ channel: channelId, user: input.user, messageTs: ts }),
        triggerId,
      });
    } else {
      const view = findView(input.user, input.container.viewId);
      body = viewBlockActionsBody(workspace, {
        user: input.user,
        view,
        action: act,
        state: input.state as ViewStateValues,
        triggerId,
      });
    }
    const answer = await bot(body, 'application/x-www-form-urlencoded');
    return { status: answer.status, ...(answer.failure === undefined ? {} : { failure: answer.failure }) };
  };

  const submit = async (input: z.infer<typeof ViewRequestSchema>) => {
    persona(input.user);
    const view = findView(input.user, input.viewId);
    const body = viewSubmissionBody(workspace, {
      user: input.user,
      view,
      state: input.state as ViewStateValues,
      triggerId: standIn.triggerId(input.user),
    });
    const answer = await bot(body, 'application/x-www-form-urlencoded');
    const failure = failureName(answer);
    // Slack keeps the modal open and says so inside it when the app does not answer properly.
    if (failure !== undefined) return { closed: false, failure };
    if (answer.body.trim() === '') {
      closeView(input.user, input.viewId);
      return { closed: true };
    }
    let ack: Record<string, unknown>;
    try {
      ack = JSON.parse(answer.body) as Record<string, unknown>;
    } catch {
      return { closed: false, failure: 'invalid_response' };
    }
    switch (ack['response_action']) {
      case 'errors':
        return { closed: false, errors: (ack['errors'] ?? {}) as Record<string, string> };
      case 'clear':
        closeView(input.user, input.viewId, true);
        return { closed: true };
      case 'update':
      case 'push': {
        const next = {
          ...(ack['view'] as Record<string, unknown>),
          id: ack['response_action'] === 'update' ? view.id : `V${randomBytes(5).toString('hex').toUpperCase()}`,
          hash: `${Date.now()}.${randomBytes(4).toString('hex')}`,
          user: input.user,
          type: 'modal',
        } as StandInView;
        ackViews.set(next.id, next);
        if (ack['response_action'] === 'push')
          modalStacks.set(input.user, [...(modalStacks.get(input.user) ?? []), next.id]);
        bump();
        return { closed: false };
      }
      default:
        closeView(input.user, input.viewId);
        return { closed: true };
    }
  };

  const closeModal = async (input: z.infer<typeof ViewRequestSchema>) => {
    persona(input.user);
    const view = findView(input.user, input.viewId);
    closeView(input.user, input.viewId);
    if (view['notify_on_close'] === true) {
      const answer = await bot(
        viewClosedBody(workspace, { user: input.user, view, state: input.state as ViewStateValues }),
        'application/x-www-form-urlencoded',
      );
      return { closed: true, status: answer.status };
    }
    return { closed: true };
  };

  const openHome = async (input: z.infer<typeof HomeRequestSchema>) => {
    persona(input.user);
    if (!workspace.botEvents.includes('app_home_opened')) return { sent: false };
    const dm = workspace.channels.find((c) => c.dmUser === input.user);
    const home = standIn.home(input.user);
    const event = appHomeOpenedEvent({
      user: input.user,
      channel: dm?.id ?? `D${input.user.slice(1)}`,
      ...(home === undefined ? {} : { view: home as Record<string, unknown> }),
    });
    const answer = await sendEvent(event);
    return { sent: true, status: answer.status };
  };

  const longPoll = async (since: string | null): Promise<SandboxState> => {
    const deadline = Date.now() + pollWaitMs;
    await refresh();
    while (!closed && since !== null && version() === since && Date.now() < deadline) {
      await sleep(120);
      await refresh();
    }
    return state();
  };

  const getAssets = () => {
    assets ??= loadClientAssets().catch((error: unknown) => {
      assets = undefined;
      throw error;
    });
    return assets;
  };

  // What the page reads (GET) and what it does (POST, JSON), one entry per path.
  const pages: Record<string, (response: ServerResponse, url: URL) => Promise<void>> = {
    '/sandbox': async (response) => {
      response.writeHead(302, { location: '/sandbox/' });
      response.end();
    },
    '/sandbox/': async (response) => sendAsset(response, 'text/html; charset=utf-8', (await getAssets()).html),
    '/sandbox/app.js': async (response) =>
      sendAsset(response, 'text/javascript; charset=utf-8', (await getAssets()).script),
    '/sandbox/app.css': async (response) => sendAsset(response, 'text/css; charset=utf-8', (await getAssets()).css),
    '/sandbox/api/workspace': async (response) => sendJson(response, 200, workspace),
    '/sandbox/api/state': async (response, url) =>
      sendJson(response, 200, await longPoll(url.searchParams.get('since'))),
  };
  const actions: Record<string, (body: unknown) => Promise<unknown>> = {
    '/sandbox/api/compose': (body) => compose(parse(ComposeSchema, body)),
    '/sandbox/api/action': (body) => action(parse(ActionRequestSchema, body)),
    '/sandbox/api/view/submit': (body) => submit(parse(ViewRequestSchema, body)),
    '/sandbox/api/view/close': (body) => closeModal(parse(ViewRequestSchema, body)),
    '/sandbox/api/home': (body) => openHome(parse(HomeRequestSchema, body)),
  };

  return {
    async handle(request, response) {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const path = url.pathname;
      const demo = isDemoRoute(path);
      const alert = isSampleAlertRoute(path);
      if (!demo && !alert && path !== '/sandbox' && !path.startsWith('/sandbox/')) return false;
      // Every route here acts as a person in the workspace or changes the demo cluster, and the state readout shows
      // every conversation: answer only this machine's own pages (see local/request-guard.ts).
      const host = hostRefusal(request);
      if (host !== undefined) {
        refuse(response, host);
        return true;
      }
      if (isStateChanging(request.method)) {
        const origin = originRefusal(request);
        if (origin !== undefined) {
          refuse(
            response,
            demo
              ? `the demo cluster is changed only from the sandbox page itself: ${origin}`
              : alert
                ? `sample alerts are sent only from the sandbox page itself: ${origin}`
                : origin,
          );
          return true;
        }
      }
      if (alert) {
        try {
          if (request.method !== 'POST') {
            sendJson(response, 405, { error: `${request.method} is not allowed on ${path}; use POST` });
          } else if (mediaType(request.headers['content-type']) !== 'application/json') {
            sendJson(response, 415, { error: 'send the request as application/json' });
          } else {
            const answer = await sampleAlerts.answer(await readJson(request));
            if (answer.changed) bump();
            sendJson(response, answer.status, answer.body);
          }
        } catch (error) {
          const status = error instanceof SandboxRequestError ? error.status : 500;
          sendJson(response, status, { error: (error as Error).message });
        }
        return true;
      }
      if (demo) {
        try {
          const answer = answerDemoRoute(request.method ?? 'GET', path, options.demoCluster);
          if (answer.changed) bump();
          sendJson(response, answer.status, answer.body);
        } catch (error) {
          sendJson(response, 500, { error: (error as Error).message });
        }
        return true;
      }
      try {
        if (request.method === 'GET') {
          const page = Object.hasOwn(pages, path) ? pages[path] : undefined;
          if (page === undefined) sendJson(response, 404, { error: `no such page ${path}` });
          else await page(response, url);
          return true;
        }
        if (request.method !== 'POST') {
          sendJson(response, 405, { error: `${request.method} is not allowed here` });
          return true;
        }
        // JSON only: a cross-origin page cannot send it without a preflight, which this server never grants.
        if (mediaType(request.headers['content-type']) !== 'application/json') {
          sendJson(response, 415, { error: 'send the request as application/json' });
          return true;
        }
        const body = await readJson(request);
        const run = Object.hasOwn(actions, path) ? actions[path] : undefined;
        if (run === undefined) sendJson(response, 404, { error: `no such action ${path}` });
        else sendJson(response, 200, await run(body));
      } catch (error) {
        if (error instanceof SandboxRequestError) sendJson(response, error.status, { error: error.message });
        else sendJson(response, 500, { error: (error as Error).message });
      }
      return true;
    },
    state,
    async warm() {
      await getAssets();
    },
    async close() {
      closed = true;
      if (saveTimer !== undefined) clearTimeout(saveTimer);
      saveTimer = undefined;
      await saveHistory().catch(() => undefined);
      await stopClientBuilds().catch(() => undefined);
    },
  };
}

function stripUndefined(action: z.infer<typeof ActionSchema>): ActionInput {
  return Object.fromEntries(Object.entries(action).filter(([, v]) => v !== undefined)) as unknown as ActionInput;
}

/** A channel message as Slack echoes it in a block_actions payload. */
function messagePayload(teamId: string, message: StandInMessage): Record<string, unknown> {
  return {
    type: 'message',
    ...(message.bot_id === undefined ? {} : { bot_id: message.bot_id, app_id: 'ACALMOPS' }),
    user: message.user,
    text: message.text,
    ...(message.blocks === undefined ? {} : { blocks: message.blocks }),
    ts: message.ts,
    ...(message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts }),
    ...(message.edited === undefined ? {} : { edited: { user: message.user, ts: message.edited.ts } }),
    team: teamId,
  };
}
