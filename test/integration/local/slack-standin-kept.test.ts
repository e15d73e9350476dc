import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebClient } from '@slack/web-api';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_IDS, startSlackStandIn } from '../../../local/slack/index.js';

/**
 * The Slack stand-in `npm start` runs keeps its conversation across a restart (in the data directory), so a message
 * posted before the restart can be updated after it: a decided approval loses its buttons, a superseded plan's
 * buttons are disabled. Without a state file nothing is kept, as before.
 */

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const client = (url: string) => new WebClient('xoxb-standin-test', { slackApiUrl: url, retryConfig: { retries: 0 } });

describe('the Slack stand-in across a restart', () => {
  it('updates a message posted before the restart when it keeps a state file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'calmops-standin-'));
    dirs.push(dir);
    const stateFile = join(dir, 'slack-conversation.json');
    const first = await startSlackStandIn({ stateFile });
    const posted = await client(first.url).chat.postMessage({
      channel: DEMO_IDS.incidents,
      text: 'Remediation plan for review',
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: 'Remediation plan for review' } },
        {
          type: 'actions',
          elements: [
            {
              type: 'button',
              action_id: 'approval_approve',
              value: 'ap-1',
              text: { type: 'plain_text', text: 'Approve' },
            },
          ],
        },
      ],
    });
    await first.close();

    const second = await startSlackStandIn({ stateFile });
    try {
      const updated = await client(second.url).chat.update({
        channel: DEMO_IDS.incidents,
        ts: posted.ts as string,
        text: 'Superseded by revision 1',
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Superseded by revision 1' } }],
      });
      expect(updated.ok).toBe(true);
      const shown = second.messages(DEMO_IDS.incidents).find((m) => m.ts === posted.ts);
      expect(shown?.text).toBe('Superseded by revision 1');
      expect(JSON.stringify(shown?.blocks)).not.toContain('approval_approve');
      // New messages after the restart do not reuse an old ts.
      const next = await client(second.url).chat.postMessage({ channel: DEMO_IDS.incidents, text: 'after' });
      expect(next.ts).not.toBe(posted.ts);
    } finally {
      await second.close();
    }
  });

  it('keeps nothing without a state file', async () => {
    const first = await startSlackStandIn();
    const posted = await client(first.url).chat.postMessage({ channel: DEMO_IDS.incidents, text: 'x' });
    await first.close();
    const second = await startSlackStandIn();
    try {
      await expect(
        client(second.url).chat.update({ channel: DEMO_IDS.incidents, ts: posted.ts as string, text: 'y' }),
      ).rejects.toMatchObject({ data: { error: 'message_not_found' } });
    } finally {
      await second.close();
    }
  });
});
