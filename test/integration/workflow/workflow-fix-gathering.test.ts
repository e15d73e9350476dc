import { describe, expect, it } from 'vitest';
import {
  openSession,
  say,
  threadTexts,
  useHarness,
  waitForInputWait,
  waitForThread,
} from '../../support/workflow-harness.js';

describe('"resolved" while the session still gathers', () => {
  const h = useHarness({ minTimeInStateSeconds: 30 });

  it('validates the fix with a fresh triage, after the minimum time in GATHERING has passed', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await waitForInputWait(h, sessionId);
    // Past the minimum time (the recorded state-entry time is what the rule reads: GATHERING began 31 s ago), the
    // next input first moves the session on, then is read in the state it reached.
    await h.deps.artifacts.mutateWorkflow(sessionId, new Date(), (w) => ({
      ...w,
      stateEnteredAt: new Date(Date.now() - 31_000).toISOString(),
    }));
    await say(h, sessionId, 'resolved', 'fix-1');
    await waitForThread(h, threadTs, /Fix (not )?validated|Something failed/, 30_000);
    const texts = threadTexts(h, threadTs).join('\n');
    expect(texts).not.toMatch(/Something failed/);
    expect(texts).toMatch(/Fix (not )?validated/);
  });
});
