import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { fill, leakedPart, REDACTION_FIXTURES, SecretFactory } from '../../support/redaction-support.js';
import { useSlackOnStack } from '../../support/slack-local-stack.js';
import { renderMessage } from '../../support/slack-messages.js';
import { fixture, waitFor } from '../../support/workflow-harness.js';

/**
 * A crashed pod's previous log holds credentials and Slack markup. Asked for in the session's thread, it comes back
 * the real way (signed Slack requests, the state machines on the local Step Functions endpoint, the reader against
 * the snapshot API server, the Slack stand-in) and nothing in the thread carries a secret or live markup.
 */

const channel = DEMO_IDS.incidents;
const POD = 'order-worker-69b7c4d8f5-fk2lp';

describe('a thread read of a log with secrets and Slack markup', () => {
  const planted = fill(readFileSync(join(REDACTION_FIXTURES, 'previous-logs.txt'), 'utf8'), new SecretFactory(4242));
  const base = fixture('crashloop-analysis--missing-env');
  const { slack, command, latestRootTs, say } = useSlackOnStack(
    {
      snapshot: {
        objects: base.objects,
        logs: { ...base.logs, [`orders/${POD}/order-worker:previous`]: planted.text },
      },
    },
    { label: 'redact', startTimeoutMs: 120_000 },
  );

  const thread = (threadTs: string) =>
    slack()
      .messages(channel)
      .filter((m) => m.thread_ts === threadTs || m.ts === threadTs);
  const waitForText = (threadTs: string, pattern: RegExp) =>
    waitFor(
      `a thread message matching ${pattern}`,
      async () =>
        thread(threadTs)
          .map(renderMessage)
          .find((t) => pattern.test(t)),
      60_000,
    );

  it('posts the read without a credential, with the markup inert, in the blocks and the notification text', async () => {
    const reply = await command('order-worker keeps crashing in orders');
    expect(reply.text).toMatch(/session `[^`]+`/);
    const threadTs = latestRootTs();
    await waitForText(threadTs, /similar incident/i);

    await say(threadTs, `kubectl logs ${POD} -n orders --previous`);
    await waitForText(threadTs, /\blines?\b/);
    // A long log shows its first lines in the reply and the whole text in the file attached to the thread.
    const posted = () => thread(threadTs).filter((m) => m.bot_id !== undefined);
    const files = () =>
      posted()
        .flatMap((m) => m.files ?? [])
        .map((f) => f.content)
        .join('\n');
    const read = await waitFor(
      'the whole log, in the reply or its file',
      async () => {
        const text = `${posted().map(renderMessage).join('\n')}\n${files()}`;
        return text.includes('ERROR tls: private key does not match certificate') ? text : undefined;
      },
      60_000,
    );
    expect(read).toContain('ERROR tls: private key does not match certificate');
    // The markup line is shown (inert in the reply's blocks, plain text in the file), never dropped.
    expect(read).toMatch(/&lt;!channel&gt; &lt;!here&gt;|<!channel> <!here>/);

    const everything = `${posted().map(renderMessage).join('\n')}\n${files()}`;
    for (const value of planted.secrets) expect(leakedPart(everything, value), value).toBeUndefined();
    for (const message of posted()) {
      for (const text of [message.text ?? '', JSON.stringify(message.blocks ?? [])]) {
        expect(text).not.toMatch(/<!(?:channel|here|everyone)/);
        expect(text).not.toContain('<@U024BE7LH>');
        expect(text).not.toContain('<https://evil.example');
      }
    }
  });
});
