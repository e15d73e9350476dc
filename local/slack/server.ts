import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestRefusal } from '../request-guard.js';
import { UPLOAD_PATH, uploadRoute } from './files.js';
import { keeper, loadKept } from './kept.js';
import { readoutRoutes } from './readouts.js';
import type { RecordedCall, ResponseUrlContext, StandInMessage, StandInView } from './records.js';
import { RESPONSE_URL_PATH, responseUrlRoute } from './response-url.js';
import {
  createStandInState,
  homeOf,
  nextTs,
  resetState,
  type StandInWorkspace,
  viewsOf,
  visibleMessages,
} from './state.js';
import { WEB_API_PATH, webApiRoute } from './web-api.js';
import { SlackApiError, sendJson } from './wire.js';

export type { StandInMessage } from './records.js';

export interface SlackStandInOptions extends StandInWorkspace {
  /** 0 or absent picks a free port. */
  port?: number;
  /** Keeps the conversation (messages, views) in this file across restarts; absent keeps it in memory only. */
  stateFile?: string;
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

/**
 * A Slack Web API stand-in on loopback: answers the methods calmops calls in Slack's JSON shapes, refuses what
 * Slack would refuse (unknown channels, oversized or malformed blocks), and records every call.
 *
 * Read-only HTTP endpoints for harnesses: `GET /_calls[?method=chat.postMessage&after=<seq>]`,
 * `GET /_messages[?channel=C…]`, `GET /_views[?user=U…]`. `POST /_reset` forgets calls, messages and views.
 */
export async function startSlackStandIn(options: SlackStandInOptions = {}): Promise<SlackStandIn> {
  const state = createStandInState(options);
  if (options.stateFile !== undefined) loadKept(state, options.stateFile);
  const kept = options.stateFile === undefined ? undefined : keeper(state, options.stateFile);
  const readouts = readoutRoutes(state);
  const webApi = webApiRoute(state);
  const responseUrl = responseUrlRoute(state);
  const upload = uploadRoute(state);

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
          if (request.method === 'POST') kept?.changed();
          return;
        }
        if (request.method === 'POST' && path.startsWith(WEB_API_PATH)) {
          await webApi(request, response, path.slice(WEB_API_PATH.length));
          kept?.changed();
          return;
        }
        if (request.method === 'POST' && path.startsWith(UPLOAD_PATH)) {
          await upload(request, response, path.slice(UPLOAD_PATH.length));
          return;
        }
        if (request.method === 'POST' && path.startsWith(RESPONSE_URL_PATH)) {
          await responseUrl(request, response, path.slice(RESPONSE_URL_PATH.length));
          kept?.changed();
          return;
        }
        sendJson(response, 404, { ok: false, error: 'not_found' });
      } catch (error) {
        // The only API error that reaches here is a body over the limit, refused before any method ran.
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
  const origin = `http://127.0.0.1:${port}`;
  state.origin = origin;
  let closed: Promise<void> | undefined;

  return {
    url: `${origin}${WEB_API_PATH}`,
    origin,
    calls: () => state.calls.map((c) => structuredClone(c)),
    callsFor: (method) => state.calls.filter((c) => c.method === method).map((c) => structuredClone(c)),
    messages: (channel) => visibleMessages(state, channel),
    views: (user) => viewsOf(state, user),
    home: (user) => homeOf(state, user),
    responseUrl: (context) => {
      const id = randomBytes(12).toString('hex');
      state.responseUrls.set(id, { ...context });
      return `${origin}${RESPONSE_URL_PATH}${id}`;
    },
    triggerId: (user) => {
      const id = `${Date.now()}.${randomBytes(6).toString('hex')}`;
      state.triggers.set(id, user);
      return id;
    },
    addUserMessage: (input) => {
      const message: StandInMessage = {
        channel: input.channel,
        ts: nextTs(state),
        ...(input.thread_ts === undefined ? {} : { thread_ts: input.thread_ts }),
        text: input.text,
        user: input.user,
      };
      state.messages.push(message);
      kept?.changed();
      return structuredClone(message);
    },
    failNext: (method, error, count = 1) => {
      state.failures.set(method, { error, count });
    },
    clearCalls: () => {
      state.calls = [];
    },
    reset: () => {
      resetState(state);
      kept?.changed();
    },
    close: () => {
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }).then(() => kept?.flush());
      return closed;
    },
  };
}
