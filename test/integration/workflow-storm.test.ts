import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverInput } from '../../src/workflow/deliver-input.js';
import { DEMO_IDS, type Harness, openSession, startHarness, waitFor } from './workflow-harness.js';

const SESSIONS = 20;
const PER_SESSION = 25;

describe('exactly-once input delivery under a storm', () => {
  let h: Harness;
  beforeAll(async () => {
    // Every handler runs in this process; dynalite in a worker thread gets the second core.
    h = await startHarness({ dynamoWorker: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('delivers 500 messages into 20 busy sessions exactly once each, in order, despite duplicates and retries', async () => {
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => openSession(h)));
    // One session's wait is claimed by a sender that "crashes" before SendTaskSuccess: the next attempt recovers it.
    let duplicates = 0;
    await Promise.all(
      sessions.map(async ({ sessionId }, s) => {
        for (let m = 0; m < PER_SESSION; m++) {
          const input = {
            sessionId,
            userId: DEMO_IDS.requester,
            text: `ack ${m}`,
            source: 'message' as const,
            messageKey: `s${s}-m${m}`,
          };
          await deliverInput(h.deps, input);
          // Slack retries and double submissions: the same message arrives again, sometimes at once, sometimes later.
          if ((s + m) % 7 === 0) {
            duplicates++;
            await deliverInput(h.deps, input);
          }
          if (m === 12 && s === 3) {
            await waitFor('a wait to claim', async () => {
              const w = await h.deps.store.waits.get(sessionId);
              return w && !w.claimedAt ? w : undefined;
            });
            await h.deps.store.waits.claim(sessionId);
          }
        }
      }),
    );
    await waitFor(
      'every message to be consumed',
      async () => {
        const counts = await Promise.all(
          sessions.map(
            async ({ sessionId }) =>
              (await h.deps.store.timeline.list(sessionId)).filter((e) => e.type === 'input.consumed').length,
          ),
        );
        const inboxes = await Promise.all(sessions.map(({ sessionId }) => h.deps.store.inbox.list(sessionId)));
        if (inboxes.some((i) => i.length > 0)) {
          // Nudge like a later message would: the recovery path re-sends a token whose sender never did.
          await Promise.all(
            sessions.map(({ sessionId }) =>
              import('../../src/workflow/delivery.js').then((d) => d.tryDeliver(h.deps, sessionId)),
            ),
          );
        }
        return counts.every((c) => c >= PER_SESSION) && inboxes.every((i) => i.length === 0);
      },
      150_000,
      1_000,
    );
    let dropped = 0;
    for (const [s, { sessionId }] of sessions.entries()) {
      const events = await h.deps.store.timeline.list(sessionId);
      const keys = events.filter((e) => e.type === 'input.consumed').map((e) => e.data?.['key']);
      expect(keys).toEqual(Array.from({ length: PER_SESSION }, (_, m) => `s${s}-m${m}`));
      dropped += events.filter((e) => e.type === 'input.duplicate').length;
    }
    expect(dropped).toBe(duplicates);
  }, 240_000);
});
