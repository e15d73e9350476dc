import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_IDS, type StandInMessage } from '../../../local/slack/index.js';
import { type LocalStack, startLocalStack } from '../../../local/stack.js';
import { createSlackDepsFromEnv } from '../../../src/app/slack-runtime.js';
import { createSlackHttpHandler, type SlackHttpHandler, signSlackRequest } from '../../../src/slack/receiver.js';
import { fill, leakedPart, REDACTION_FIXTURES, SecretFactory } from '../../support/redaction-support.js';
import { fixture, waitFor } from '../../support/workflow-harness.js';

/**
 * A crashed pod's previous log holds credentials and Slack markup. Asked for in the session's thread, it comes back
 * the real way (signed Slack requests, the state machines on the local Step Functions endpoint, the reader against
 * the snapshot API server, the Slack stand-in) and nothing in the thread carries a secret or live markup.
 */

const { requester } = DEMO_IDS;
const channel = DEMO_IDS.incidents;
const POD = 'order-worker-69b7c4d8f5-fk2lp';

describe('a thread read of a log with secrets and Slack markup', () => {
  let stack: LocalStack;
  let handle: SlackHttpHandler;
  let secret: string;
  let counter = 0;
  const planted = fill(readFileSync(join(REDACTION_FIXTURES, 'previous-logs.txt'), 'utf8'), new SecretFactory(4242));

  beforeAll(async () => {
    const base = fixture('crashloop-analysis--missing-env');
    stack = await startLocalStack({
      snapshot: {
        objects: base.objects,
        logs: { ...base.logs, [`orders/${POD}/order-worker:previous`]: planted.text },
      },
      logLevel: 'SILENT',
    });
    secret = stack.env['SLACK_SIGNING_SECRET'] ?? '';
    handle = createSlackHttpHandler(
      await createSlackDepsFromEnv(stack.env, {
        logger: new Logger({ serviceName: 'calmops-slack', logLevel: 'SILENT' }),
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const slack = () => {
    if (stack.slack === undefined) throw new Error('the stack did not start the Slack stand-in');
    return stack.slack;
  };

  async function post(body: string, contentType: string) {
    const response = await handle({
      headers: { 'content-type': contentType, ...signSlackRequest(secret, body, Date.now() / 1000) },
      body,
      isBase64Encoded: false,
    });
    expect(response.statusCode).toBe(200);
    return response;
  }

  async function say(threadTs: string, text: string) {
    const message = slack().addUserMessage({ channel, user: requester, text, thread_ts: threadTs });
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: DEMO_IDS.team,
      event_id: `EvRedact${++counter}`,
      event: {
        type: 'message',
        channel_type: 'channel',
        user: requester,
        text,
        ts: message.ts,
        thread_ts: threadTs,
        channel,
      },
    });
    await post(body, 'application/json');
  }

  const render = (m: StandInMessage) => `${m.text}\n${JSON.stringify(m.blocks ?? [])}`;
  const thread = (threadTs: string) =>
    slack()
      .messages(channel)
      .filter((m) => m.thread_ts === threadTs || m.ts === threadTs);
  const waitForText = (threadTs: string, pattern: RegExp) =>
    waitFor(
      `a thread message matching ${pattern}`,
      async () =>
        thread(threadTs)
          .map(render)
          .find((t) => pattern.test(t)),
      60_000,
    );

  it('posts the read without a credential, with the markup inert, in the blocks and the notification text', async () => {
    const body = new URLSearchParams({
      command: '/triage',
      text: 'order-worker keeps crashing in orders',
      user_id: requester,
      channel_id: channel,
      team_id: DEMO_IDS.team,
      trigger_id: `trigger.redact.${++counter}`,
    }).toString();
    const reply = JSON.parse((await post(body, 'application/x-www-form-urlencoded')).body) as { text: string };
    expect(reply.text).toMatch(/session `[^`]+`/);
    const threadTs =
      slack()
        .messages(channel)
        .filter((m) => m.thread_ts === undefined && m.bot_id !== undefined)
        .at(-1)?.ts ?? '';
    await waitForText(threadTs, /similar incident/i);

    await say(threadTs, `kubectl logs ${POD} -n orders --previous`);
    const read = await waitForText(threadTs, /log line\(s\)/);
    expect(read).toContain('ERROR tls: private key does not match certificate');
    expect(read).toContain('&lt;!channel&gt; &lt;!here&gt; &lt;@U024BE7LH&gt; &lt;https://evil.example|Click here&gt;');

    const posted = thread(threadTs).filter((m) => m.bot_id !== undefined);
    const everything = posted.map(render).join('\n');
    for (const value of planted.secrets) expect(leakedPart(everything, value), value).toBeUndefined();
    for (const message of posted) {
      for (const text of [message.text ?? '', JSON.stringify(message.blocks ?? [])]) {
        expect(text).not.toMatch(/<!(?:channel|here|everyone)/);
        expect(text).not.toContain('<@U024BE7LH>');
        expect(text).not.toContain('<https://evil.example');
      }
    }
  });
});
