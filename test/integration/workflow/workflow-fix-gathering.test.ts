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
  const h = useHarness({ minTimeInStateSeconds: 2 });

  it('validates the fix with a fresh triage, after the minimum time in GATHERING has passed', async () => {
    const { sessionId, threadTs } = await openSession(h);
    await waitForInputWait(h, sessionId);
    // Past the minimum time: the next input first moves the session on, then is read in the state it reached.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await say(h, sessionId, 'resolved', 'fix-1');
    await waitForThread(h, threadTs, /Fix (not )?validated|Something failed/, 30_000);
    const texts = threadTexts(h, threadTs).join('\n');
    expect(texts).not.toMatch(/Something failed/);
    expect(texts).toMatch(/Fix (not )?validated/);
  });
});
