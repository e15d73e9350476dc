import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BREAK_GLASS_LIMITS } from '../../../src/diagnosis/break-glass.js';
import { breakGlassModal } from '../../../src/views/modals.js';

/** The form, the review's wait and the override's due date all say the same number of days. */
describe('the post-incident review deadline', () => {
  const review = JSON.parse(
    readFileSync(new URL('../../../statemachines/review.asl.json', import.meta.url), 'utf8'),
  ) as {
    States: Record<string, { TimeoutSeconds?: number }>;
  };

  it('is the review wait of the review machine', () => {
    expect(review.States['PostmortemReview']?.TimeoutSeconds).toBe(BREAK_GLASS_LIMITS.reviewDueDays * 86_400);
  });

  it('is what the break-glass form promises', () => {
    const text = JSON.stringify(breakGlassModal({ sessionId: 'S1', channelId: 'C1', currentState: 'ANALYZING' }));
    expect(text).toContain(`due within ${BREAK_GLASS_LIMITS.reviewDueDays} days`);
  });
});
