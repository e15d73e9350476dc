import { describe, expect, it } from 'vitest';
import { DEMO_NAMESPACES, DEMO_SNAPSHOT } from '../../../local/demo/index.js';
import { loadSnapshotFiles } from '../../../src/cluster/snapshot.js';
import { startedForSuite } from '../../support/suite-lifecycle.js';
import {
  DEMO_IDS,
  decide,
  openSession,
  say,
  startHarness,
  threadTexts,
  waitFor,
  waitForThread,
} from '../../support/workflow-harness.js';

/**
 * Every prompt the envelope suggests, typed verbatim into the thread of every demo incident, gets a substantive
 * answer through the real workflow: a read of the objects the incident names, what the triage found, an explanation,
 * a memory search or a handoff proposal. So do the phrasings docs/diagnosis.md promises ("show me the logs", "have we
 * seen this before?"). A non-answer is silence, "Name one", or a refusal with nothing in it.
 */

/** Replies that leave the person where they were. */
function isNonAnswer(text: string): boolean {
  if (/Name one, e\.g\./.test(text)) return true;
  if (/Not yet:/.test(text)) return true;
  return /I did not run/.test(text) && !/What the triage found/.test(text);
}

const INTENTS: Record<string, string> = {
  'ml-team': 'pvc-binding',
  payments: 'scheduling-failures',
  orders: 'crashloop-analysis',
  inventory: 'route-5xx',
  wiki: 'route-5xx',
};

/** Phrasings docs/diagnosis.md documents for asking about an incident. */
const DOCUMENTED = ['show me the logs', 'have we seen this before?', 'similar incidents'];

describe('every message gets an answer', () => {
  // The demo snapshot is read from disk first, which `useHarness`'s options cannot wait for.
  const h = startedForSuite(async () => {
    const snapshot = await loadSnapshotFiles(DEMO_SNAPSHOT, DEMO_SNAPSHOT.replace(/\.yaml$/, '.logs.json'));
    return startHarness({ snapshot: { objects: snapshot.objects, logs: snapshot.logs } });
  });

  /** Waits until the session waits for input, declining a handoff calmops proposed on its own meanwhile. */
  async function settle(sessionId: string) {
    await waitFor('the session to wait for input', async () => {
      const pending = await h.deps.artifacts.getPending(sessionId, 'handoff');
      const approval = pending ? await h.deps.store.approvals.get(pending.approvalId) : undefined;
      if (approval?.status === 'pending' && approval.token) {
        await decide(h, sessionId, 'handoff', 'deny', DEMO_IDS.requester, undefined, approval.id);
      }
      const wait = await h.deps.store.waits.get(sessionId);
      return wait !== undefined && !wait.claimedAt;
    });
  }

  it('answers every suggestion of every demo incident, and the documented phrasings', async () => {
    const outcomes: Array<{ namespace: string; text: string; answered: boolean; replies: string[] }> = [];
    for (const demo of DEMO_NAMESPACES) {
      const { sessionId, threadTs } = await openSession(
        h,
        demo.try.replace(/^\/triage\s+/, ''),
        demo.namespace,
        INTENTS[demo.namespace],
      );
      await waitForThread(h, threadTs, /similar incident/i);
      await settle(sessionId);
      const envelope = await waitFor('the envelope', () => h.deps.artifacts.getEnvelope(sessionId));
      const suggestions = envelope.promptSuggestions;
      expect(suggestions.length).toBeGreaterThan(0);
      // A handoff waits for its answer, so it goes last.
      const handoffLast = [
        ...DOCUMENTED,
        ...suggestions.filter((s) => !/specialist/.test(s)),
        ...suggestions.filter((s) => /specialist/.test(s)),
      ];
      let key = 0;
      for (const text of handoffLast) {
        await settle(sessionId);
        const before = threadTexts(h, threadTs).length;
        await say(h, sessionId, text, `${demo.namespace}-${++key}`);
        const handoff = /specialist/.test(text);
        if (handoff) {
          await waitFor(`an answer to "${text}"`, async () =>
            threadTexts(h, threadTs)
              .slice(before)
              .some((t) => /Shall I consult|handoff/i.test(t)),
          );
        } else {
          await waitFor(`an answer to "${text}"`, async () => {
            const wait = await h.deps.store.waits.get(sessionId);
            return threadTexts(h, threadTs).length > before && wait !== undefined && !wait.claimedAt;
          });
        }
        const replies = threadTexts(h, threadTs).slice(before);
        const answered = replies.length > 0 && replies.some((r) => !isNonAnswer(r));
        outcomes.push({ namespace: demo.namespace, text, answered, replies });
        if (handoff) break;
      }
    }
    const unanswered = outcomes.filter((o) => !o.answered);
    expect(unanswered.map((o) => `${o.namespace}: ${o.text} → ${o.replies.join(' | ').slice(0, 300)}`)).toEqual([]);
    expect(outcomes.length).toBeGreaterThan(DEMO_NAMESPACES.length * 3);
  });
});
