import { request as httpRequest } from 'node:http';
import { verifySlackRequest } from '@slack/bolt';
import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LocalHttpServer, type SlackHttpRequest, startLocalHttpServer } from '../../local/http-server.js';
import { createBotClient } from '../../local/sandbox/bot-client.js';
import { createSandbox, type Sandbox, type SandboxState } from '../../local/sandbox/server.js';
import { buildWorkspace, sandboxChannels } from '../../local/sandbox/workspace.js';
import { type SlackStandIn, startSlackStandIn } from '../../local/slack/index.js';
import { startLocalStepFunctions } from '../../local/stepfunctions/index.js';

/**
 * The sandbox's server routes against the real Web API stand-in and a scripted app behind `/slack/events`: every
 * request the app gets must verify with Bolt's own signature check and carry Slack's shapes.
 */

const SECRET = 'sandbox-routes-secret';

interface Received {
  contentType: string;
  raw: string;
  form?: URLSearchParams;
  json?: Record<string, unknown>;
  payload?: Record<string, unknown>;
}

type Script = (received: Received) => Promise<{ statusCode: number; headers?: Record<string, string>; body?: string }>;

let standIn: SlackStandIn;
let http: LocalHttpServer;
let sandbox: Sandbox;
let web: WebClient;
let received: Received[] = [];
let script: Script;
const ok: Script = async () => ({ statusCode: 200, body: '' });

async function app(request: SlackHttpRequest) {
  const body = request.body ?? '';
  const raw = request.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  // Throws (and fails the test through a 500) unless the signature is Slack's.
  verifySlackRequest({
    signingSecret: SECRET,
    body: raw,
    headers: {
      'x-slack-signature': request.headers['x-slack-signature'] ?? '',
      'x-slack-request-timestamp': Number(request.headers['x-slack-request-timestamp']),
    },
  });
  const contentType = request.headers['content-type'] ?? '';
  const entry: Received = { contentType, raw };
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    entry.form = new URLSearchParams(raw);
    const payload = entry.form.get('payload');
    if (payload !== null) entry.payload = JSON.parse(payload) as Record<string, unknown>;
  } else entry.json = JSON.parse(raw) as Record<string, unknown>;
  received.push(entry);
  const answer = await script(entry);
  return { statusCode: answer.statusCode, headers: answer.headers ?? {}, body: answer.body ?? '' };
}

async function post<T = Record<string, unknown>>(path: string, body: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${http.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function state(): Promise<SandboxState> {
  return (await (await fetch(`${http.origin}/sandbox/api/state`)).json()) as SandboxState;
}

beforeAll(async () => {
  standIn = await startSlackStandIn({ channels: sandboxChannels() });
  const workspace = buildWorkspace({ channels: sandboxChannels() });
  let origin = '';
  sandbox = createSandbox({
    standIn,
    workspace,
    bot: createBotClient({ url: () => `${origin}/slack/events`, signingSecret: SECRET }),
    pollWaitMs: 300,
  });
  http = await startLocalHttpServer({
    slack: async (request) => {
      try {
        return await app(request);
      } catch (error) {
        return { statusCode: 500, headers: {}, body: (error as Error).message };
      }
    },
    sandbox,
    standInOrigin: standIn.origin,
    health: async () => ({ ok: true, services: { slack: { url: standIn.url, up: true } } }),
  });
  origin = http.origin;
  web = new WebClient('xoxb-sandbox-test', { slackApiUrl: standIn.url, retryConfig: { retries: 0 } });
});

afterAll(async () => {
  await http?.close();
  await standIn?.close();
});

beforeEach(() => {
  received = [];
  script = ok;
});

describe('sandbox routes', () => {
  it('sends a slash command form-encoded and signed, and shows the ack to its author only', async () => {
    script = async () => ({
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Looking at *payments* now' }),
    });
    const answer = await post('/sandbox/api/compose', {
      user: 'UREQUESTER',
      channel: 'CINCIDENTS',
      text: '/triage pods stuck pending in payments',
    });
    expect(answer).toEqual({ status: 200, body: { kind: 'command', status: 200 } });
    expect(received).toHaveLength(1);
    const [command] = received;
    expect(command?.contentType).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(command?.form ?? [])).toMatchObject({
      command: '/triage',
      text: 'pods stuck pending in payments',
      user_id: 'UREQUESTER',
      channel_id: 'CINCIDENTS',
    });
    expect(command?.form?.get('trigger_id')).toMatch(/\S/);
    expect(command?.form?.get('response_url')).toMatch(new RegExp(`^${standIn.origin}/response/`));
    const ack = (await state()).messages.find((m) => m.text === 'Looking at *payments* now');
    expect(ack).toMatchObject({ channel: 'CINCIDENTS', ephemeral_to: 'UREQUESTER', user: 'UCALMOPSBOT' });
  });

  it('answers an unknown command and a failing app the way Slack does, as a notice', async () => {
    await post('/sandbox/api/compose', { user: 'UENGINEER', channel: 'CINCIDENTS', text: '/deploy now' });
    expect(received).toHaveLength(0);
    script = async () => ({ statusCode: 500, body: 'boom' });
    const failed = await post('/sandbox/api/compose', { user: 'UENGINEER', channel: 'CINCIDENTS', text: '/triage x' });
    expect(failed.body).toMatchObject({ kind: 'command', status: 500, failure: 'http_service_error' });
    const notices = (await state()).notices.filter((n) => n.user === 'UENGINEER').map((n) => n.text);
    expect(notices).toEqual([
      expect.stringContaining('/deploy is not a valid command'),
      '/triage failed with the error "http_service_error"',
    ]);
  });

  it('sends a mention as app_mention plus the message copy, with the mention encoded and the text kept exactly', async () => {
    const text = '@calmops why is ledger pending? café 🔥 “quotes” & <tags>';
    const answer = await post<{ kind: string; ts: string; events: unknown[] }>('/sandbox/api/compose', {
      user: 'UREQUESTER',
      channel: 'CINCIDENTS',
      text,
    });
    expect(answer.body.events).toEqual([
      { type: 'app_mention', status: 200 },
      { type: 'message', status: 200 },
    ]);
    const events = received.map((r) => r.json?.['event'] as Record<string, unknown>);
    expect(received.every((r) => r.contentType === 'application/json' && r.json?.['type'] === 'event_callback')).toBe(
      true,
    );
    expect(new Set(received.map((r) => r.json?.['event_id'])).size).toBe(2);
    const expected = '<@UCALMOPSBOT> why is ledger pending? café 🔥 “quotes” & <tags>';
    expect(events.map((e) => [e['type'], e['text'], e['ts']])).toEqual(
      expect.arrayContaining([
        ['app_mention', expected, answer.body.ts],
        ['message', expected, answer.body.ts],
      ]),
    );
    const message = (await state()).messages.find((m) => m.ts === answer.body.ts);
    expect(message).toMatchObject({ user: 'UREQUESTER', text: expected, channel: 'CINCIDENTS' });
  });

  it('sends a thread reply with thread_ts, a DM as an im message, and nothing for a channel the bot is not in', async () => {
    const root = await web.chat.postMessage({ channel: 'CINCIDENTS', text: 'root' });
    await post('/sandbox/api/compose', { user: 'USENIOR', channel: 'CINCIDENTS', text: 'resolved', threadTs: root.ts });
    expect(received.map((r) => r.json?.['event'])).toEqual([
      expect.objectContaining({ type: 'message', thread_ts: root.ts, channel_type: 'channel', user: 'USENIOR' }),
    ]);
    received = [];
    await post('/sandbox/api/compose', { user: 'UREQUESTER', channel: 'DREQUESTER', text: '@calmops help' });
    expect(received.map((r) => r.json?.['event'])).toEqual([
      expect.objectContaining({ type: 'message', channel_type: 'im', channel: 'DREQUESTER' }),
    ]);
    received = [];
    await post('/sandbox/api/compose', { user: 'UREQUESTER', channel: 'CRANDOM', text: '@calmops help' });
    expect(received).toEqual([]);
    const other = await post('/sandbox/api/compose', { user: 'USENIOR', channel: 'DREQUESTER', text: 'hi' });
    expect(other.status).toBe(403);
  });

  it('sends a button click as block_actions with the message, and refuses clicks on someone else’s ephemeral', async () => {
    const posted = await web.chat.postMessage({
      channel: 'CINCIDENTS',
      text: 'Handoff to storage?',
      blocks: [
        {
          type: 'actions',
          block_id: 'handoff',
          elements: [
            {
              type: 'button',
              action_id: 'approval_approve',
              text: { type: 'plain_text', text: 'Approve' },
              style: 'primary',
              value: 'APPROVAL123',
            },
          ],
        },
      ],
    });
    const answer = await post('/sandbox/api/action', {
      user: 'USENIOR',
      container: { type: 'message', channel: 'CINCIDENTS', ts: posted.ts },
      action: {
        action_id: 'approval_approve',
        block_id: 'handoff',
        type: 'button',
        value: 'APPROVAL123',
        text: 'Approve',
        style: 'primary',
      },
    });
    expect(answer.body).toEqual({ status: 200 });
    const payload = received[0]?.payload ?? {};
    expect(payload['type']).toBe('block_actions');
    expect(payload['user']).toMatchObject({ id: 'USENIOR' });
    expect(payload['message']).toMatchObject({ ts: posted.ts, text: 'Handoff to storage?', bot_id: 'BCALMOPS' });
    expect(payload['actions']).toEqual([
      expect.objectContaining({ action_id: 'approval_approve', value: 'APPROVAL123' }),
    ]);
    expect(payload['response_url']).toMatch(/\/response\//);

    const ephemeral = await web.chat.postEphemeral({ channel: 'CINCIDENTS', user: 'UREQUESTER', text: 'only alex' });
    const refused = await post('/sandbox/api/action', {
      user: 'USENIOR',
      container: { type: 'message', channel: 'CINCIDENTS', ts: ephemeral.message_ts },
      action: { action_id: 'x', block_id: 'y', type: 'button', text: 'X' },
    });
    expect(refused.status).toBe(403);
  });

  it('opens a modal by trigger id, shows validation errors from the ack, and closes it on an empty ack', async () => {
    script = async (entry) => {
      const payload = entry.payload ?? {};
      if (payload['type'] === 'block_actions') {
        await web.views.open({
          trigger_id: String(payload['trigger_id']),
          view: {
            type: 'modal',
            callback_id: 'breakglass',
            title: { type: 'plain_text', text: 'Break glass' },
            submit: { type: 'plain_text', text: 'Request' },
            blocks: [
              {
                type: 'input',
                block_id: 'approver',
                label: { type: 'plain_text', text: 'Senior approver' },
                element: { type: 'users_select', action_id: 'value' },
              },
            ],
          },
        });
        return { statusCode: 200, body: '' };
      }
      const values = (payload['view'] as { state: { values: Record<string, Record<string, Record<string, unknown>>> } })
        .state.values;
      if (values['approver']?.['value']?.['selected_user'] === (payload['user'] as { id: string }).id) {
        return {
          statusCode: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ response_action: 'errors', errors: { approver: 'Pick someone else.' } }),
        };
      }
      return { statusCode: 200, body: '' };
    };
    const posted = await web.chat.postMessage({
      channel: 'CINCIDENTS',
      text: 'break glass?',
      blocks: [
        {
          type: 'actions',
          elements: [
            {
              type: 'button',
              action_id: 'breakglass_open',
              text: { type: 'plain_text', text: 'Break glass' },
              value: 'S1',
            },
          ],
        },
      ],
    });
    await post('/sandbox/api/action', {
      user: 'UREQUESTER',
      container: { type: 'message', channel: 'CINCIDENTS', ts: posted.ts },
      action: { action_id: 'breakglass_open', block_id: 'b0', type: 'button', value: 'S1', text: 'Break glass' },
    });
    const modal = (await state()).modals['UREQUESTER']?.at(-1);
    expect(modal).toMatchObject({ type: 'modal', callback_id: 'breakglass' });
    expect((await state()).modals['USENIOR']).toBeUndefined();

    const self = { approver: { value: { type: 'users_select', selected_user: 'UREQUESTER' } } };
    const refused = await post('/sandbox/api/view/submit', { user: 'UREQUESTER', viewId: modal?.id, state: self });
    expect(refused.body).toEqual({ closed: false, errors: { approver: 'Pick someone else.' } });
    const submission = received.at(-1)?.payload ?? {};
    expect(submission['type']).toBe('view_submission');
    expect(submission['view']).toMatchObject({ id: modal?.id, callback_id: 'breakglass', state: { values: self } });

    const senior = { approver: { value: { type: 'users_select', selected_user: 'USENIOR' } } };
    const accepted = await post('/sandbox/api/view/submit', { user: 'UREQUESTER', viewId: modal?.id, state: senior });
    expect(accepted.body).toEqual({ closed: true });
    expect((await state()).modals['UREQUESTER']).toBeUndefined();
  });

  it('sends app_home_opened and shows the Home the app publishes', async () => {
    script = async (entry) => {
      const event = entry.json?.['event'] as Record<string, unknown> | undefined;
      if (event?.['type'] === 'app_home_opened') {
        await web.views.publish({
          user_id: String(event['user']),
          view: { type: 'home', blocks: [{ type: 'header', text: { type: 'plain_text', text: 'Your sessions' } }] },
        });
      }
      return { statusCode: 200, body: '' };
    };
    const answer = await post('/sandbox/api/home', { user: 'UENGINEER' });
    expect(answer.body).toEqual({ sent: true, status: 200 });
    expect(received[0]?.json?.['event']).toMatchObject({ type: 'app_home_opened', user: 'UENGINEER', tab: 'home' });
    expect((await state()).homes['UENGINEER']).toMatchObject({ type: 'home', blocks: [expect.anything()] });
  });

  it('long-polls: a state request with the current version waits for the next change', async () => {
    const before = await state();
    const waiting = fetch(`${http.origin}/sandbox/api/state?since=${before.version}`).then(
      async (r) => (await r.json()) as SandboxState,
    );
    await web.chat.postMessage({ channel: 'CPAYMENTSONCALL', text: 'news' });
    const after = await waiting;
    expect(after.version).not.toBe(before.version);
    expect(after.messages.some((m) => m.channel === 'CPAYMENTSONCALL' && m.text === 'news')).toBe(true);
  });

  it('refuses malformed requests with a message that names the field', async () => {
    const bad = await post<{ error: string }>('/sandbox/api/compose', { user: 'UREQUESTER', channel: 'CINCIDENTS' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('text');
    const unknown = await post<{ error: string }>('/sandbox/api/compose', {
      user: 'UNOBODY',
      channel: 'CINCIDENTS',
      text: 'x',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('unknown user UNOBODY');
  });

  it('serves the page, /healthz, and the recorded Web API calls under /_slack/', async () => {
    const page = await fetch(`${http.origin}/sandbox/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module" src="/sandbox/app.js">');
    const script = await fetch(`${http.origin}/sandbox/app.js`);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect(await script.text()).toContain('/sandbox/api/state');
    expect((await fetch(`${http.origin}/healthz`)).status).toBe(200);
    await web.chat.postMessage({ channel: 'CINCIDENTS', text: 'recorded' });
    const calls = (await (await fetch(`${http.origin}/_slack/calls?method=chat.postMessage`)).json()) as {
      args: { text: string };
    }[];
    expect(calls.at(-1)?.args.text).toBe('recorded');
    const messages = (await (await fetch(`${http.origin}/_slack/messages?channel=CINCIDENTS`)).json()) as unknown[];
    expect(messages.length).toBeGreaterThan(0);
  });

  it('refuses GET on /slack/events and passes the app’s status through', async () => {
    expect((await fetch(`${http.origin}/slack/events`)).status).toBe(405);
    const unsigned = await fetch(`${http.origin}/slack/events`, { method: 'POST', body: 'x=1' });
    expect(unsigned.status).toBe(500);
  });
});

/**
 * A plain HTTP request with exactly the headers given (fetch would set Host and Origin itself), as a browser sends it
 * from another page or after a DNS rebinding.
 */
function rawRequest(
  url: string,
  input: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: input.method ?? 'GET', headers: input.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(input.body);
  });
}

describe('sandbox attacks from other pages', () => {
  const compose = JSON.stringify({
    user: 'UREQUESTER',
    channel: 'CINCIDENTS',
    text: '/triage pods stuck pending in payments',
  });
  const port = () => new URL(http.origin).port;
  const messagesNow = () => standIn.messages().length;

  it('refuses a cross-origin text/plain POST to compose, and starts nothing', async () => {
    const before = messagesNow();
    const foreign = await rawRequest(`${http.origin}/sandbox/api/compose`, {
      method: 'POST',
      headers: { host: `127.0.0.1:${port()}`, origin: 'https://evil.example', 'content-type': 'text/plain' },
      body: compose,
    });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error).toMatch(/only from this server's own pages/);
    // Without an Origin (a privacy setting or an old browser), a text/plain body is still not accepted.
    const noOrigin = await rawRequest(`${http.origin}/sandbox/api/compose`, {
      method: 'POST',
      headers: { host: `127.0.0.1:${port()}`, 'content-type': 'text/plain;charset=UTF-8' },
      body: compose,
    });
    expect(noOrigin.status).toBe(415);
    for (const origin of [
      'https://evil.example',
      'null',
      `http://localhost.evil.example:${port()}`,
      `https://127.0.0.1:${port()}`,
    ]) {
      const json = await rawRequest(`${http.origin}/sandbox/api/compose`, {
        method: 'POST',
        headers: { host: `127.0.0.1:${port()}`, origin, 'content-type': 'application/json' },
        body: compose,
      });
      expect([origin, json.status]).toEqual([origin, 403]);
    }
    for (const path of [
      '/sandbox/api/action',
      '/sandbox/api/view/submit',
      '/sandbox/api/view/close',
      '/sandbox/api/home',
    ]) {
      const refused = await rawRequest(`${http.origin}${path}`, {
        method: 'POST',
        headers: { host: `127.0.0.1:${port()}`, origin: 'https://evil.example', 'content-type': 'text/plain' },
        body: JSON.stringify({ user: 'UREQUESTER' }),
      });
      expect([path, refused.status]).toEqual([path, 403]);
    }
    expect(received).toEqual([]);
    expect(messagesNow()).toBe(before);
  });

  it('accepts the page’s own POST (same Origin, JSON)', async () => {
    const own = await rawRequest(`${http.origin}/sandbox/api/compose`, {
      method: 'POST',
      headers: { host: `127.0.0.1:${port()}`, origin: http.origin, 'content-type': 'application/json' },
      body: compose,
    });
    expect(own.status).toBe(200);
    expect(received).toHaveLength(1);
  });

  it('refuses every sandbox route, and the readouts, under a foreign Host (DNS rebinding)', async () => {
    const before = messagesNow();
    const rebound = { host: `evil.example:${port()}` };
    const paths: [string, string][] = [
      ['GET', '/sandbox/'],
      ['GET', '/sandbox/api/state'],
      ['GET', '/sandbox/api/workspace'],
      ['POST', '/sandbox/api/compose'],
      ['GET', '/_sandbox/demo'],
      ['POST', '/_sandbox/demo/payments/fix'],
      ['GET', '/_slack/messages'],
      ['GET', '/_slack/calls'],
    ];
    for (const [method, path] of paths) {
      const answer = await rawRequest(`${http.origin}${path}`, {
        method,
        // Same-origin from the rebound page's point of view: its Origin matches its Host.
        headers: { ...rebound, origin: `http://evil.example:${port()}`, 'content-type': 'application/json' },
        ...(method === 'POST' ? { body: compose } : {}),
      });
      expect([method, path, answer.status]).toEqual([method, path, 403]);
      expect(answer.body).not.toContain('UREQUESTER');
    }
    for (const host of [`127.0.0.1:${Number(port()) + 1}`, '127.0.0.1', `localhost.evil.example:${port()}`]) {
      const answer = await rawRequest(`${http.origin}/sandbox/api/state`, { headers: { host } });
      expect([host, answer.status]).toEqual([host, 403]);
    }
    expect(received).toEqual([]);
    expect(messagesNow()).toBe(before);
    for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`, `LOCALHOST:${port()}`]) {
      const answer = await rawRequest(`${http.origin}/sandbox/api/workspace`, { headers: { host } });
      expect([host, answer.status]).toEqual([host, 200]);
    }
  });

  it('leaves /slack/events to its signature check: Slack (or a tunnel) may use any Host', async () => {
    const answer = await rawRequest(`${http.origin}/slack/events`, {
      method: 'POST',
      headers: { host: 'calmops.tunnel.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'x=1',
    });
    // The scripted app behind it throws on the missing signature (the real one answers 401).
    expect(answer.status).toBe(500);
  });

  it('applies the Host and Origin checks to the Slack stand-in and the Step Functions endpoint too', async () => {
    const standInPort = new URL(standIn.origin).port;
    const before = messagesNow();
    const post = await rawRequest(`${standIn.origin}/api/chat.postMessage`, {
      method: 'POST',
      headers: {
        host: `evil.example:${standInPort}`,
        authorization: 'Bearer xoxb-x',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ channel: 'CINCIDENTS', text: 'from a rebound page' }),
    });
    expect(post.status).toBe(403);
    const crossSite = await rawRequest(`${standIn.origin}/_reset`, {
      method: 'POST',
      headers: { host: `127.0.0.1:${standInPort}`, origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    const read = await rawRequest(`${standIn.origin}/_messages`, { headers: { host: `evil.example:${standInPort}` } });
    expect(read.status).toBe(403);
    expect(messagesNow()).toBe(before);
    expect((await fetch(`${standIn.origin}/_messages`)).status).toBe(200);

    const sfn = await startLocalStepFunctions();
    try {
      const sfnPort = new URL(sfn.endpoint).port;
      const target = {
        'x-amz-target': 'AWSStepFunctions.ListStateMachines',
        'content-type': 'application/x-amz-json-1.0',
      };
      const rebound = await rawRequest(sfn.endpoint, {
        method: 'POST',
        headers: { ...target, host: `evil.example:${sfnPort}` },
        body: '{}',
      });
      expect(rebound.status).toBe(403);
      expect(JSON.parse(rebound.body).__type).toBe('AccessDeniedException');
      const own = await rawRequest(sfn.endpoint, {
        method: 'POST',
        headers: { ...target, host: `127.0.0.1:${sfnPort}` },
        body: '{}',
      });
      expect(own.status).toBe(200);
    } finally {
      await sfn.close();
    }
  });
});
