import { describe, expect, it } from 'vitest';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { createStore } from '../../../src/store/index.js';
import { useSlackOnStack } from '../../support/slack-local-stack.js';
import { renderMessage } from '../../support/slack-messages.js';
import { fixture, waitFor } from '../../support/workflow-harness.js';

/**
 * What a person types is shown to the channel and kept only once it is scrubbed: a credential in a `/triage` note
 * (which Slack shows to its author alone) or in a thread reply reaches neither the thread root, nor the timeline,
 * nor what the session keeps. Signed Slack requests against the whole local stack.
 */

const channel = DEMO_IDS.incidents;
const PASSWORD = 'Velvet842#Hn2q';
const TOKEN = 'ghp_q7Lr2mXv9TzPk4WnR8s1Yb6Dc3Fg5Hj0KlMn';

describe('secrets typed by a person', () => {
  const { stack, slack, triage, say } = useSlackOnStack(
    { snapshot: fixture('crashloop-analysis--missing-env') },
    { label: 'typed', startTimeoutMs: 120_000 },
  );

  it('are not posted in the thread root nor kept on the timeline', async () => {
    const { sessionId, threadTs } = await triage(`crashloop in orders db password is ${PASSWORD}, token ${TOKEN}`);
    const root = slack()
      .messages(channel)
      .find((m) => m.ts === threadTs);
    expect(root).toBeDefined();
    const shown = JSON.stringify(root);
    expect(shown).not.toContain(PASSWORD);
    expect(shown).not.toContain(TOKEN);
    expect(shown).toContain('[REDACTED]');

    await say(threadTs, `tried again with password ${PASSWORD}`);
    const store = createStore({ client: stack().docClient, tableName: stack().env['CALMOPS_TABLE'] ?? 'calmops' });
    const events = await waitFor(
      'the reply consumed',
      async () => {
        const list = await store.timeline.list(sessionId);
        return list.some((e) => e.type === 'input.consumed') ? list : undefined;
      },
      60_000,
    );
    const kept = JSON.stringify(events);
    expect(kept).not.toContain(PASSWORD);
    expect(kept).not.toContain(TOKEN);
    const thread = slack()
      .messages(channel)
      .filter((m) => m.thread_ts === threadTs)
      .map(renderMessage)
      .join('\n');
    expect(thread).not.toContain(TOKEN);
  }, 120_000);

  it('runs a read whose words are longer than a step may carry, and the session goes on', async () => {
    const { threadTs } = await triage('crashloop in orders');
    const labels = Array.from({ length: 40 }, (_, i) => `team-${i}`).join(',');
    const long = `kubectl get pods -n orders -l 'app in (order-worker),team notin (${labels})'`;
    expect(long.length).toBeGreaterThan(300);
    const threadText = () =>
      slack()
        .messages(channel)
        .filter((m) => m.thread_ts === threadTs)
        .map(renderMessage);
    await say(threadTs, long);
    await waitFor(
      'the long read answered',
      async () =>
        threadText().find((t) => /kubectl get pods -n orders -l/.test(t) && /pod|No resources|matched/i.test(t)),
      60_000,
    );
    expect(threadText().some((t) => /Something failed/i.test(t))).toBe(false);
    await say(threadTs, 'kubectl get configmaps -n orders');
    await waitFor(
      'the next read answered',
      async () => threadText().find((t) => /`kubectl get configmaps -n orders`/.test(t)),
      60_000,
    );
  }, 150_000);
});
