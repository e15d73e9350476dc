import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, sendJson as sendJsonAnswer } from '../http-json.js';
import { requestRefusal } from '../request-guard.js';
import { messageBlockProblems, SLACK_LIMITS, viewProblems } from './block-rules.js';
import {
  DEMO_IDS,
  demoChannels,
  demoUsergroups,
  demoUsers,
  type StandInChannel,
  type StandInUser,
  type StandInUsergroup,
} from './demo.js';

export interface SlackStandInOptions {
  /** 0 or absent picks a free port. */
  port?: number;
  users?: StandInUser[];
  usergroups?: StandInUsergroup[];
  channels?: StandInChannel[];
  botUserId?: string;
  botId?: string;
  teamId?: string;
}

/** One Web API call (or response_url post) as the stand-in received and answered it. */
export interface RecordedCall {
  seq: number;
  at: string;
  /** Web API method such as `chat.postMessage`, or `response_url` for a post to a response URL. */
  method: string;
  args: Record<string, unknown>;
  /** Whether the request carried a bearer token; the token itself is never recorded. */
  authenticated: boolean;
  response: Record<string, unknown>;
}

/** A message as a person in the channel would see it. */
export interface StandInMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  text: string;
  blocks?: unknown[];
  /** Who posted it (the bot user for bot messages). */
  user: string;
  bot_id?: string;
  /** Set on an ephemeral message: only this user sees it. */
  ephemeral_to?: string;
  edited?: { ts: string };
  deleted?: boolean;
}

/** A modal or App Home view as the stand-in holds it. */
export interface StandInView {
  id: string;
  hash: string;
  type: 'modal' | 'home';
  /** The user the view is shown to, when known (App Home, or a trigger id minted by `triggerId(user)`). */
  user?: string;
  callback_id?: string;
  private_metadata?: string;
  external_id?: string;
  closed?: boolean;
  [key: string]: unknown;
}

export interface ResponseUrlContext {
  channel: string;
  user: string;
  /** The message the interaction came from, for replace_original / delete_original. */
  messageTs?: string;
}

export interface SlackStandIn {
  /** Base URL of the Web API, ending in `/api/`: the value for `SLACK_API_URL`. */
  url: string;
  /** Root of the server, e.g. `http://127.0.0.1:1234`. */
  origin: string;
  calls(): RecordedCall[];
  callsFor(method: string): RecordedCall[];
  /** Messages in a channel (every channel when absent), oldest first, including ephemeral ones. */
  messages(channel?: string): StandInMessage[];
  views(user?: string): StandInView[];
  /** The App Home view last published for a user. */
  home(user: string): StandInView | undefined;
  /** A response_url for a signed interaction payload; posts to it are recorded and applied to the conversation. */
  responseUrl(context: ResponseUrlContext): string;
  /** A trigger id for views.open, remembered as belonging to `user`. */
  triggerId(user: string): string;
  /** Records a message a person typed (the sandbox does this before sending the matching event). */
  addUserMessage(input: { channel: string; user: string; text: string; thread_ts?: string }): StandInMessage;
  /** Makes the next `count` calls of `method` fail with `error` (e.g. `ratelimited`, `internal_error`). */
  failNext(method: string, error: string, count?: number): void;
  /** Forgets recorded calls only; the conversation and views stay. */
  clearCalls(): void;
  /** Forgets recorded calls, messages and views; users, groups and channels stay. */
  reset(): void;
  close(): Promise<void>;
}

type Args = Record<string, unknown>;
type Answer = Record<string, unknown>;

const JSON_FIELDS = new Set(['blocks', 'attachments', 'view', 'metadata', 'unfurl_links']);
const MAX_BODY_BYTES = 4 * 1024 * 1024;

class SlackApiError extends Error {
  constructor(
    readonly code: string,
    readonly messages: string[] = [],
  ) {
    super(code);
  }
}

function fail(code: string, messages: string[] = []): never {
  throw new SlackApiError(code, messages);
}

/** The `ok: false` answer Slack gives for an API error; anything else is a fault of the stand-in and propagates. */
function errorAnswer(error: unknown): Answer {
  if (!(error instanceof SlackApiError)) throw error;
  return {
    ok: false,
    error: error.code,
    ...(error.messages.length > 0 ? { response_metadata: { messages: error.messages } } : {}),
  };
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function parseArgs(raw: string, contentType: string | undefined): Args {
  if (raw === '') return {};
  if ((contentType ?? '').includes('application/json')) {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Args) : {};
  }
  const args: Args = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    if (JSON_FIELDS.has(key) && /^\s*[[{]/.test(value)) {
      try {
        args[key] = JSON.parse(value);
        continue;
      } catch {
        // Slack itself answers invalid JSON in these fields with invalid_blocks / invalid_arguments below.
      }
    }
    args[key] = value;
  }
  return args;
}

async function readText(request: IncomingMessage): Promise<string> {
  const body = await readBody(request, MAX_BODY_BYTES);
  if (body === undefined) throw new SlackApiError('request_too_large');
  return body.toString('utf8');
}

// The sandbox page in the browser reads the stand-in's recordings directly.
const sendJson = (response: ServerResponse, status: number, body: unknown) =>
  sendJsonAnswer(response, status, body, { 'access-control-allow-origin': '*' });

/**
 * A Slack Web API stand-in on loopback: answers the methods calmops calls in Slack's JSON shapes, refuses what
 * Slack would refuse (unknown channels, oversized or malformed blocks), and records every call.
 *
 * Read-only HTTP endpoints for harnesses: `GET /_calls[?method=chat.postMessage&after=<seq>]`,
 * `GET /_messages[?channel=C…]`, `GET /_views[?user=U…]`. `POST /_reset` forgets calls, messages and views.
 */
export async function startSlackStandIn(options: SlackStandInOptions = {}): Promise<SlackStandIn> {
  const users = new Map((options.users ?? demoUsers()).map((u) => [u.id, u]));
  const usergroups = new Map((options.usergroups ?? demoUsergroups()).map((g) => [g.id, g]));
  const channels = new Map((options.channels ?? demoChannels()).map((c) => [c.id, c]));
  const botUserId = options.botUserId ?? DEMO_IDS.botUser;
  const botId = options.botId ?? DEMO_IDS.botId;
  const teamId = options.teamId ?? DEMO_IDS.team;
  if (!users.has(botUserId))
    users.set(botUserId, { id: botUserId, name: 'calmops', real_name: 'calmops', is_bot: true });

  let calls: RecordedCall[] = [];
  let messages: StandInMessage[] = [];
  let views = new Map<string, StandInView>();
  const homes = new Map<string, string>();
  const responseUrls = new Map<string, ResponseUrlContext>();
  const triggers = new Map<string, string>();
  const failures = new Map<string, { error: string; count: number }>();
  let seq = 0;
  let tsCounter = 0;
  let origin = '';

  const nextTs = (): string => {
    tsCounter += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(tsCounter).padStart(6, '0')}`;
  };
  const newId = (prefix: string): string => `${prefix}${randomBytes(5).toString('hex').toUpperCase()}`;

  const channelFor = (args: Args): StandInChannel => {
    const id = str(args['channel']);
    if (id === undefined) fail('channel_not_found');
    const channel = channels.get(id);
    if (channel === undefined) fail('channel_not_found');
    return channel;
  };

  const checkMessageContent = (args: Args, requireContent: boolean): void => {
    const text = args['text'];
    const blocks = args['blocks'];
    if (typeof text === 'string' && text.length > SLACK_LIMITS.messageText) fail('msg_too_long');
    if (blocks !== undefined) {
      if (typeof blocks === 'string') fail('invalid_blocks_format');
      const problems = messageBlockProblems(blocks);
      if (problems.length > 0) fail('invalid_blocks', problems);
    }
    const hasBlocks = Array.isArray(blocks) && blocks.length > 0;
    if (requireContent && str(text) === undefined && !hasBlocks && args['attachments'] === undefined) fail('no_text');
  };

  const findMessage = (channel: string, ts: string): StandInMessage | undefined =>
    messages.find((m) => m.channel === channel && m.ts === ts && m.ephemeral_to === undefined && !m.deleted);

  /** Stores a message the bot posts with `args` (text, blocks, thread_ts), visible only to `ephemeralTo` if given. */
  const addBotMessage = (channel: string, args: Args, ephemeralTo?: string): StandInMessage => {
    const threadTs = str(args['thread_ts']);
    const message: StandInMessage = {
      channel,
      ts: nextTs(),
      ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
      text: typeof args['text'] === 'string' ? args['text'] : '',
      ...(Array.isArray(args['blocks']) ? { blocks: args['blocks'] } : {}),
      user: botUserId,
      bot_id: botId,
      ...(ephemeralTo === undefined ? {} : { ephemeral_to: ephemeralTo }),
    };
    messages.push(message);
    return message;
  };

  /** Replaces what `args` carries (text, blocks) and marks the message edited, as chat.update does. */
  const editMessage = (message: StandInMessage, args: Args): void => {
    if (typeof args['text'] === 'string') message.text = args['text'];
    if (Array.isArray(args['blocks'])) message.blocks = args['blocks'];
    message.edited = { ts: nextTs() };
  };

  const postMessage = (args: Args): StandInMessage => {
    const channel = channelFor(args);
    if (!channel.is_member && !channel.is_im) fail('not_in_channel');
    checkMessageContent(args, true);
    return addBotMessage(channel.id, args);
  };

  const storeView = (raw: unknown, user: string | undefined, existing?: StandInView): StandInView => {
    const problems = viewProblems(raw);
    if (problems.length > 0) fail('invalid_arguments', problems);
    const view = raw as Record<string, unknown>;
    const stored: StandInView = {
      ...view,
      type: view['type'] as 'modal' | 'home',
      id: existing?.id ?? newId('V'),
      hash: `${Date.now()}.${randomBytes(4).toString('hex')}`,
      team_id: teamId,
      app_id: 'ACALMOPS',
      bot_id: botId,
      state: { values: {} },
      ...(user === undefined ? {} : { user }),
    };
    views.set(stored.id, stored);
    return stored;
  };

  const findView = (args: Args): StandInView => {
    const id = str(args['view_id']);
    const external = str(args['external_id']);
    const view =
      id !== undefined ? views.get(id) : [...views.values()].find((v) => external && v.external_id === external);
    if (view === undefined || view.closed) fail('not_found');
    const hash = str(args['hash']);
    if (hash !== undefined && hash !== view.hash) fail('hash_conflict');
    return view;
  };

  const methods: Record<string, (args: Args) => Answer> = {
    'auth.test': () => ({
      url: 'https://calmops-sandbox.slack.com/',
      team: 'calmops sandbox',
      user: 'calmops',
      team_id: teamId,
      user_id: botUserId,
      bot_id: botId,
      is_enterprise_install: false,
    }),
    'chat.postMessage': (args) => {
      const message = postMessage(args);
      return { channel: message.channel, ts: message.ts, message: { ...message, type: 'message' } };
    },
    'chat.update': (args) => {
      const channel = channelFor(args);
      const ts = str(args['ts']);
      if (ts === undefined) fail('message_not_found');
      const message = findMessage(channel.id, ts);
      if (message === undefined) fail('message_not_found');
      if (message.user !== botUserId) fail('cant_update_message');
      checkMessageContent(args, false);
      editMessage(message, args);
      return { channel: channel.id, ts, text: message.text, message: { ...message, type: 'message' } };
    },
    'chat.postEphemeral': (args) => {
      const channel = channelFor(args);
      const user = str(args['user']);
      if (user === undefined || !users.has(user)) fail('user_not_found');
      if (!channel.is_member && !channel.is_im) fail('not_in_channel');
      checkMessageContent(args, true);
      const message = addBotMessage(channel.id, args, user);
      return { message_ts: message.ts };
    },
    'views.open': (args) => {
      const trigger = str(args['trigger_id']);
      if (trigger === undefined) fail('invalid_trigger_id');
      if (typeof args['view'] === 'string')
        fail('invalid_arguments', ['[ERROR] failed to parse view [json-pointer:/view]']);
      const view = storeView(args['view'], triggers.get(trigger));
      if (view.type !== 'modal') fail('invalid_arguments', ['[ERROR] must be modal [json-pointer:/view/type]']);
      return { view };
    },
    'views.push': (args) => {
      const trigger = str(args['trigger_id']);
      if (trigger === undefined) fail('invalid_trigger_id');
      return { view: storeView(args['view'], triggers.get(trigger)) };
    },
    'views.update': (args) => {
      const existing = findView(args);
      return { view: storeView(args['view'], existing.user, existing) };
    },
    'views.publish': (args) => {
      const user = str(args['user_id']);
      if (user === undefined || !users.has(user)) fail('user_not_found');
      const raw = args['view'];
      if (typeof raw !== 'object' || raw === null || (raw as Args)['type'] !== 'home') {
        fail('invalid_arguments', ['[ERROR] must be home [json-pointer:/view/type]']);
      }
      const previous = homes.get(user);
      const view = storeView(raw, user, previous === undefined ? undefined : views.get(previous));
      homes.set(user, view.id);
      return { view };
    },
    'usergroups.users.list': (args) => {
      const id = str(args['usergroup']);
      const group = id === undefined ? undefined : usergroups.get(id);
      if (group === undefined) fail('no_such_subteam');
      return { users: [...group.users] };
    },
    'users.info': (args) => {
      const id = str(args['user']);
      const user = id === undefined ? undefined : users.get(id);
      if (user === undefined) fail('user_not_found');
      return {
        user: {
          id: user.id,
          team_id: teamId,
          name: user.name,
          real_name: user.real_name,
          is_bot: user.is_bot ?? false,
          tz: user.tz ?? 'UTC',
          profile: { real_name: user.real_name, display_name: user.name },
        },
      };
    },
    'conversations.info': (args) => {
      const channel = channelFor(args);
      return {
        channel: {
          id: channel.id,
          name: channel.name,
          is_channel: !channel.is_im && !channel.is_private,
          is_group: channel.is_private ?? false,
          is_im: channel.is_im ?? false,
          is_private: channel.is_private ?? channel.is_im ?? false,
          is_member: channel.is_member,
          ...(channel.user === undefined ? {} : { user: channel.user }),
        },
      };
    },
  };

  const record = (method: string, args: Args, authenticated: boolean, response: Answer): void => {
    seq += 1;
    calls.push({ seq, at: new Date().toISOString(), method, args, authenticated, response });
  };

  // What tests and the sandbox read (and reset) of the stand-in, beside the Web API methods.
  const readouts: Record<string, (query: URLSearchParams) => unknown> = {
    'GET /_calls': (query) => {
      const method = query.get('method');
      const after = Number(query.get('after') ?? '0');
      return calls.filter((c) => (method === null || c.method === method) && c.seq > after);
    },
    'GET /_messages': (query) => standIn.messages(query.get('channel') ?? undefined),
    'GET /_views': (query) => standIn.views(query.get('user') ?? undefined),
    'POST /_reset': () => {
      standIn.reset();
      return { ok: true };
    },
  };

  const callMethod = (method: string, args: Args, authenticated: boolean): Answer => {
    let response: Answer;
    try {
      const handler = methods[method];
      if (handler === undefined) fail('unknown_method');
      if (!authenticated) fail('not_authed');
      const failure = failures.get(method);
      if (failure !== undefined) {
        failure.count -= 1;
        if (failure.count <= 0) failures.delete(method);
        fail(failure.error);
      }
      response = { ok: true, ...handler(args) };
    } catch (error) {
      response = errorAnswer(error);
    }
    record(method, args, authenticated, response);
    return response;
  };

  const postToResponseUrl = (id: string, args: Args): Answer => {
    const context = responseUrls.get(id);
    let response: Answer;
    try {
      if (context === undefined) fail('expired_url');
      checkMessageContent(args, !(args['delete_original'] === true || args['delete_original'] === 'true'));
      const original = context.messageTs === undefined ? undefined : findMessage(context.channel, context.messageTs);
      if (args['delete_original'] === true && original !== undefined) original.deleted = true;
      else if (args['replace_original'] === true && original !== undefined) editMessage(original, args);
      else addBotMessage(context.channel, args, args['response_type'] === 'in_channel' ? undefined : context.user);
      response = { ok: true };
    } catch (error) {
      response = errorAnswer(error);
    }
    record('response_url', { ...args, response_url_id: id, ...(context ?? {}) }, false, response);
    return response;
  };

  const server = createServer((request, response) => {
    void (async () => {
      try {
        // Any page could otherwise post as the bot or read every message through a rebound DNS name.
        const refusal = requestRefusal(request);
        if (refusal !== undefined) {
          sendJson(response, 403, { ok: false, error: 'forbidden', detail: refusal });
          return;
        }
        const url = new URL(request.url ?? '/', 'http://127.0.0.1');
        const path = url.pathname;
        const readout = `${request.method} ${path}`;
        if (Object.hasOwn(readouts, readout)) {
          sendJson(response, 200, readouts[readout]?.(url.searchParams));
          return;
        }
        if (request.method === 'POST' && path.startsWith('/api/')) {
          const method = path.slice('/api/'.length);
          const raw = await readText(request);
          let args: Args;
          try {
            args = parseArgs(raw, request.headers['content-type']);
          } catch {
            sendJson(response, 200, { ok: false, error: 'invalid_json' });
            return;
          }
          const authorization = request.headers.authorization ?? '';
          const authenticated = /^Bearer \S+$/.test(authorization) || str(args['token']) !== undefined;
          delete args['token'];
          sendJson(response, 200, callMethod(method, args, authenticated));
          return;
        }
        if (request.method === 'POST' && path.startsWith('/response/')) {
          const raw = await readText(request);
          let args: Args;
          try {
            args = raw === '' ? {} : (JSON.parse(raw) as Args);
          } catch {
            sendJson(response, 400, { ok: false, error: 'invalid_json' });
            return;
          }
          const answer = postToResponseUrl(path.slice('/response/'.length), args);
          sendJson(response, answer['error'] === 'expired_url' ? 404 : 200, answer);
          return;
        }
        sendJson(response, 404, { ok: false, error: 'not_found' });
      } catch (error) {
        if (error instanceof SlackApiError) sendJson(response, 413, { ok: false, error: error.code });
        else sendJson(response, 500, { ok: false, error: 'internal_error', detail: (error as Error).message });
      }
    })();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  let closed: Promise<void> | undefined;

  const standIn: SlackStandIn = {
    url: `${origin}/api/`,
    origin,
    calls: () => calls.map((c) => structuredClone(c)),
    callsFor: (method) => calls.filter((c) => c.method === method).map((c) => structuredClone(c)),
    messages: (channel) =>
      messages
        .filter((m) => !m.deleted && (channel === undefined || m.channel === channel))
        .map((m) => structuredClone(m)),
    views: (user) =>
      [...views.values()].filter((v) => user === undefined || v.user === user).map((v) => structuredClone(v)),
    home: (user) => {
      const id = homes.get(user);
      const view = id === undefined ? undefined : views.get(id);
      return view === undefined ? undefined : structuredClone(view);
    },
    responseUrl: (context) => {
      const id = randomBytes(12).toString('hex');
      responseUrls.set(id, { ...context });
      return `${origin}/response/${id}`;
    },
    triggerId: (user) => {
      const id = `${Date.now()}.${randomBytes(6).toString('hex')}`;
      triggers.set(id, user);
      return id;
    },
    addUserMessage: (input) => {
      const message: StandInMessage = {
        channel: input.channel,
        ts: nextTs(),
        ...(input.thread_ts === undefined ? {} : { thread_ts: input.thread_ts }),
        text: input.text,
        user: input.user,
      };
      messages.push(message);
      return structuredClone(message);
    },
    failNext: (method, error, count = 1) => {
      failures.set(method, { error, count });
    },
    clearCalls: () => {
      calls = [];
    },
    reset: () => {
      calls = [];
      messages = [];
      views = new Map();
      homes.clear();
      failures.clear();
      seq = 0;
    },
    close: () => {
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
  return standIn;
}
