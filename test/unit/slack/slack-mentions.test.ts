import { describe, expect, it } from 'vitest';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import { answerFromPlan } from '../../../src/diagnosis/resolving.js';
import { mention } from '../../../src/mrkdwn/escape.js';
import { handoffProposalView } from '../../../src/views/handoff.js';
import { postmortemReviewView } from '../../../src/views/plan.js';
import { renderMessage } from '../../support/slack-messages.js';

describe('people in messages', () => {
  it('are Slack mentions when they are user ids, and text otherwise', () => {
    expect(mention('U024BE7LH')).toBe('<@U024BE7LH>');
    expect(mention('W0123ABC')).toBe('<@W0123ABC>');
    expect(mention('calmops')).toBe('calmops');
    expect(mention('<!channel>')).toBe('&lt;!channel&gt;');
  });

  it('name who asked for a handoff with a working mention, with the reason still escaped', () => {
    const view = renderMessage(
      handoffProposalView({
        sessionId: 's1',
        approvalId: 'a1',
        domain: 'storage',
        reason: 'asked for the storage specialist <!here>',
        askedBy: 'UREQ1',
        remaining: 2,
        expiresAt: '2026-11-27T10:00:00.000Z',
      }),
    );
    expect(view).toContain('<@UREQ1> asked for the storage specialist');
    expect(view).toContain('&lt;!here&gt;');
    expect(view).not.toContain('&lt;@');
  });

  it('show the approver of a plan as a mention when a step is quoted', () => {
    const answer = answerFromPlan(classifyRequest('kubectl rollout restart deployment/api -n shop'), {
      id: 'p1',
      title: 'Restart api',
      approvedBy: 'USENIOR1',
      steps: [
        {
          id: 'step-1',
          mode: 'write',
          command: 'kubectl rollout restart deployment/api -n shop',
          rollback: 'kubectl rollout undo deployment/api -n shop',
          description: 'Restart the api <b>now</b>',
        },
      ],
    });
    expect(answer.message).toContain('(approved by <@USENIOR1>)');
    expect(answer.message).toContain('Restart the api &lt;b&gt;now&lt;/b&gt;');
    expect(answer.message).not.toMatch(/approved by USENIOR1/);
  });

  it('keep the audit lines of a post-incident review as composed, mentions intact', () => {
    const view = renderMessage(
      postmortemReviewView({
        sessionId: 's1',
        approvalId: 'a1',
        requestId: 'bg-1',
        summary: 'Break-glass bg-1 has ended.',
        lines: ['10:00:00 granted by <@USENIOR1>: payments down &lt;!channel&gt;'],
        expiresAt: '2026-12-02T10:00:00.000Z',
      }),
    );
    expect(view).toContain('granted by <@USENIOR1>');
    expect(view).not.toContain('&amp;lt;');
  });
});
