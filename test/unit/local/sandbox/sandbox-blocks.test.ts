import { describe, expect, it } from 'vitest';
import { renderBlocks } from '../../../../local/sandbox/client/blocks.js';

const context = {
  userName: (id: string) => ({ UREQUESTER: 'alex' })[id],
  people: [
    { id: 'UREQUESTER', name: 'alex', realName: 'Alex Rivera' },
    { id: 'USENIOR', name: 'sam', realName: 'Sam Okafor' },
  ],
};

describe('sandbox Block Kit rendering', () => {
  it('renders header, section text and fields, context, divider and image', () => {
    const html = renderBlocks(
      [
        { type: 'header', text: { type: 'plain_text', text: 'PVC pending :warning:' } },
        {
          type: 'section',
          block_id: 'summary',
          text: { type: 'mrkdwn', text: '*Root cause* for <@UREQUESTER>' },
          fields: [
            { type: 'mrkdwn', text: '*Priority*\nP2' },
            { type: 'plain_text', text: 'Confidence: High' },
          ],
        },
        { type: 'divider' },
        {
          type: 'context',
          elements: [
            { type: 'image', image_url: 'https://example.com/badge.png', alt_text: 'safety ALLOW' },
            { type: 'mrkdwn', text: 'completeness `0.8`' },
          ],
        },
        { type: 'image', image_url: 'javascript:alert(1)', alt_text: 'rubric' },
      ],
      context,
    );
    expect(html).toContain('<div class="blk blk-header" data-block-id="b0">PVC pending ⚠️</div>');
    expect(html).toContain('<b>Root cause</b> for <span class="md-mention" data-user="UREQUESTER">@alex</span>');
    expect(html).toContain('<div class="sec-field"><b>Priority</b><br>P2</div>');
    expect(html).toContain('<div class="sec-field">Confidence: High</div>');
    expect(html).toContain('<hr class="blk blk-divider"');
    expect(html).toContain('alt="safety ALLOW"');
    expect(html).toContain('<code class="md-code">0.8</code>');
    expect(html).toContain('<img class="blk-img" src="" alt="rubric"');
  });

  it('renders buttons in their styles with what a click must report', () => {
    const html = renderBlocks(
      [
        {
          type: 'actions',
          block_id: 'approval',
          elements: [
            {
              type: 'button',
              action_id: 'approval_approve',
              text: { type: 'plain_text', text: 'Approve' },
              style: 'primary',
              value: 'A1',
            },
            {
              type: 'button',
              action_id: 'approval_deny',
              text: { type: 'plain_text', text: 'Deny' },
              style: 'danger',
              value: 'A1',
            },
            { type: 'button', action_id: 'more', text: { type: 'plain_text', text: 'Details' } },
          ],
        },
      ],
      context,
    );
    expect(html).toContain(
      '<button type="button" class="sk-button sk-primary" data-interactive data-action-id="approval_approve" data-block-id="approval" data-type="button" data-value="A1" data-style="primary" data-text="Approve">Approve</button>',
    );
    expect(html).toContain('class="sk-button sk-danger"');
    expect(html).toContain('class="sk-button" data-interactive data-action-id="more"');
  });

  it('renders modal inputs with optional markers and validation errors under the field', () => {
    const html = renderBlocks(
      [
        {
          type: 'input',
          block_id: 'justification',
          label: { type: 'plain_text', text: 'Justification' },
          element: { type: 'plain_text_input', action_id: 'value', multiline: true },
        },
        {
          type: 'input',
          block_id: 'approver',
          label: { type: 'plain_text', text: 'Senior approver' },
          element: { type: 'users_select', action_id: 'value', initial_user: 'USENIOR' },
        },
        {
          type: 'input',
          block_id: 'limit',
          optional: true,
          label: { type: 'plain_text', text: 'Time limit' },
          element: {
            type: 'static_select',
            action_id: 'value',
            options: [
              { text: { type: 'plain_text', text: '15 minutes' }, value: '15' },
              { text: { type: 'plain_text', text: '30 minutes' }, value: '30' },
            ],
            initial_option: { text: { type: 'plain_text', text: '30 minutes' }, value: '30' },
          },
        },
      ],
      { ...context, errors: { approver: 'The approver cannot be the requester.' } },
    );
    expect(html).toContain('<textarea class="sk-input" rows="3"');
    expect(html).toContain(
      'data-input data-action-id="value" data-block-id="justification" data-type="plain_text_input"',
    );
    expect(html).toContain('<option value="USENIOR" data-label="Sam Okafor" selected>');
    expect(html).toContain('<div class="inp-error" role="alert">The approver cannot be the requester.</div>');
    expect(html).toContain('blk-input has-error');
    expect(html).toContain('<span class="inp-optional">(optional)</span>');
    expect(html).toContain('<option value="30" data-label="30 minutes" selected>30 minutes</option>');
  });

  it('renders what people type (rich_text) with mentions, and marks unknown blocks', () => {
    const html = renderBlocks(
      [
        {
          type: 'rich_text',
          elements: [
            {
              type: 'rich_text_section',
              elements: [
                { type: 'user', user_id: 'UREQUESTER' },
                { type: 'text', text: ' hi <b>' },
              ],
            },
          ],
        },
        { type: 'video' },
      ],
      context,
    );
    expect(html).toContain('@alex</span> hi &lt;b&gt;');
    expect(html).toContain('[video block]');
  });
});
