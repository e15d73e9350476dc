import { describe, expect, it } from 'vitest';
import { messageBlockProblems, viewProblems } from '../../../local/slack/block-rules.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';
import { helpView, intentsView } from '../../../src/views/help.js';
import { breakGlassModal, requestChangesModal } from '../../../src/views/modals.js';

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });
const button = (over: Record<string, unknown> = {}) => ({
  type: 'button',
  action_id: 'approval_approve',
  value: 'ap-1',
  text: { type: 'plain_text', text: 'Approve' },
  ...over,
});

describe('the stand-in refuses what Slack would refuse', () => {
  it('accepts ordinary blocks', () => {
    expect(
      messageBlockProblems([section('hello'), { type: 'actions', elements: [button()] }, { type: 'divider' }]),
    ).toEqual([]);
  });

  it.each([
    [
      'more than 50 blocks',
      Array.from({ length: 51 }, () => section('x')),
      /no more than 50 items \[json-pointer:\/blocks\]/,
    ],
    [
      'section text over 3000',
      [section('x'.repeat(3001))],
      /less than 3001 characters \[json-pointer:\/blocks\/0\/text\/text\]/,
    ],
    [
      'button value over 2000',
      [{ type: 'actions', elements: [button({ value: 'v'.repeat(2001) })] }],
      /elements\/0\/value/,
    ],
    ['action_id over 255', [{ type: 'actions', elements: [button({ action_id: 'a'.repeat(256) })] }], /action_id/],
    ['block_id over 255', [{ ...section('x'), block_id: 'b'.repeat(256) }], /block_id/],
    [
      'duplicate block ids',
      [
        { ...section('x'), block_id: 'b' },
        { ...section('y'), block_id: 'b' },
      ],
      /duplicate block_id/,
    ],
    ['an unknown block type', [{ type: 'table' }], /unsupported block type/],
    ['an empty text', [section('')], /more than 0 characters/],
    [
      'an input block in a message',
      [{ type: 'input', label: { type: 'plain_text', text: 'x' }, element: { type: 'plain_text_input' } }],
      /only allowed in modals/,
    ],
  ])('refuses %s', (_name, blocks, expected) => {
    expect(messageBlockProblems(blocks).join('\n')).toMatch(expected);
  });

  it('checks modal titles and required submit buttons', () => {
    expect(
      viewProblems({
        type: 'modal',
        title: { type: 'plain_text', text: 'A title that is far too long' },
        blocks: [],
      }).join(),
    ).toMatch(/title\/text/);
    expect(
      viewProblems({
        type: 'modal',
        title: { type: 'plain_text', text: 'x' },
        blocks: [{ type: 'input', label: { type: 'plain_text', text: 'x' }, element: { type: 'plain_text_input' } }],
      }).join(),
    ).toMatch(/must provide submit/);
  });

  it('passes the views this app builds', () => {
    expect(messageBlockProblems(helpView().blocks)).toEqual([]);
    expect(messageBlockProblems(intentsView(loadTemplates()).blocks)).toEqual([]);
    expect(viewProblems(breakGlassModal({ sessionId: 's1', channelId: 'C1', currentState: 'GATHERING' }))).toEqual([]);
    expect(viewProblems(requestChangesModal({ approvalId: 'ap-1' }))).toEqual([]);
  });
});
