import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface Rule {
  Variable?: string;
  StringEquals?: string;
  BooleanEquals?: boolean;
  And?: Rule[];
  Next?: string;
}

const machine = JSON.parse(
  readFileSync(new URL('../../../statemachines/review.asl.json', import.meta.url), 'utf8'),
) as {
  States: Record<string, { Choices?: Rule[]; Default?: string; Parameters?: { Payload?: Record<string, unknown> } }>;
};

describe('the review machine', () => {
  it('regenerates after the rubric only a plan that passed the schema guard: a refused one goes to a human', () => {
    const choice = machine.States['AutomatedReviewPassed?'];
    const regenerate = choice?.Choices?.find((c) => c.Next === 'MarkRegenerated');
    expect(regenerate?.And).toEqual(
      expect.arrayContaining([
        { Variable: '$.regenerated', BooleanEquals: false },
        { Variable: '$.plan.value.status', StringEquals: 'draft' },
      ]),
    );
    expect(choice?.Default).toBe('HumanReview');
  });

  it('hands the reviewer’s note to the next synthesis', () => {
    expect(machine.States['Resynthesize']?.Parameters?.Payload).toMatchObject({ 'feedback.$': '$.feedback' });
  });
});
