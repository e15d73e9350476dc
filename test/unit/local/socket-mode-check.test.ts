import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SocketModeError, startSocketMode } from '../../../local/socket-mode.js';
import { createSlackClient } from '../../../src/slack/client.js';
import type { SlackAppDeps } from '../../../src/slack/deps.js';

/** Socket Mode checks the bot token once before connecting, so a bad setting fails at once with its reason. */

let refusing: Server;
let refusingUrl: string;

beforeAll(async () => {
  // Answers every Web API call as Slack answers a revoked token.
  refusing = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ok: false, error: 'invalid_auth' }));
  });
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/api/`;
});

afterAll(async () => {
  await new Promise((resolve) => refusing.close(resolve));
});

function deps(botToken: string, slackApiUrl: string): SlackAppDeps {
  // Only the token and the client are used before the connection is made.
  return { botToken, client: createSlackClient({ token: botToken, slackApiUrl, retries: 0 }) } as SlackAppDeps;
}

describe('Socket Mode start-up checks', () => {
  it('refuses tokens of the wrong kind before any request', async () => {
    await expect(
      startSocketMode({ appToken: 'xoxb-not-an-app-token', deps: deps('xoxb-1', refusingUrl) }),
    ).rejects.toThrow(/SLACK_APP_TOKEN must be an app-level token/);
    await expect(startSocketMode({ appToken: 'xapp-1', deps: deps('xoxp-user-token', refusingUrl) })).rejects.toThrow(
      /SLACK_BOT_TOKEN must be a bot token/,
    );
  });

  it("names Slack's reason when the bot token is refused", async () => {
    const error = await startSocketMode({ appToken: 'xapp-1', deps: deps('xoxb-revoked', refusingUrl) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SocketModeError);
    expect((error as Error).message).toBe('Slack refused SLACK_BOT_TOKEN: invalid_auth');
    expect((error as Error).message).not.toContain('xoxb-revoked');
  });

  it('says when Slack cannot be reached instead of retrying for minutes', async () => {
    const error = await startSocketMode({ appToken: 'xapp-1', deps: deps('xoxb-1', 'http://127.0.0.1:1/api/') }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SocketModeError);
    expect((error as Error).message).toMatch(/^cannot reach Slack to check SLACK_BOT_TOKEN: /);
  });
});
