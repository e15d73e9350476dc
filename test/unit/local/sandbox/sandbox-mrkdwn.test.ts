import { describe, expect, it } from 'vitest';
import { mrkdwnToHtml, plainToHtml } from '../../../../local/sandbox/client/mrkdwn.js';

const context = {
  userName: (id: string) => ({ UREQUESTER: 'alex', USENIOR: 'sam' })[id],
  channelName: (id: string) => ({ CINCIDENTS: 'incidents' })[id],
};
const md = (text: string) => mrkdwnToHtml(text, context);

describe('sandbox mrkdwn', () => {
  it('renders bold, italic, strike and inline code', () => {
    expect(md('*PVC* is _pending_ since ~never~ `kubectl get pvc`')).toBe(
      '<b>PVC</b> is <i>pending</i> since <s>never</s> <code class="md-code">kubectl get pvc</code>',
    );
  });

  it('leaves snake_case and math alone', () => {
    expect(md('data_db_0 has 2*3*4 items')).toBe('data_db_0 has 2*3*4 items');
  });

  it('keeps code blocks verbatim, without formatting inside', () => {
    expect(md('before\n```\n*not bold* &lt;tag&gt;\n```\nafter')).toBe(
      'before<br><pre class="md-pre">*not bold* &lt;tag&gt;\n</pre><br>after',
    );
  });

  it('renders links with labels and refuses script URLs', () => {
    expect(md('see <https://example.com/a_b_c|the runbook>')).toBe(
      'see <a class="md-link" href="https://example.com/a_b_c" target="_blank" rel="noopener noreferrer">the runbook</a>',
    );
    expect(md('<javascript:alert(1)|click>')).toBe('click');
  });

  it('shows user mentions with display names, and channels', () => {
    expect(md('<@UREQUESTER> asked <@UNKNOWN> in <#CINCIDENTS>')).toBe(
      '<span class="md-mention" data-user="UREQUESTER">@alex</span> asked ' +
        '<span class="md-mention" data-user="UNKNOWN">@UNKNOWN</span> in <span class="md-channel">#incidents</span>',
    );
  });

  it('turns emoji shortcodes into emoji and keeps unknown ones', () => {
    expect(md(':white_check_mark: done :not_an_emoji:')).toBe('✅ done :not_an_emoji:');
  });

  it('escapes HTML that is not Slack markup', () => {
    expect(md('<img src=x onerror=alert(1)> & "quotes"')).not.toContain('<img');
    expect(md('a &amp; b &lt;c&gt;')).toBe('a &amp; b &lt;c&gt;');
  });

  it('renders quotes', () => {
    expect(md('&gt; quoted line\nnext')).toBe('<blockquote class="md-quote">quoted line</blockquote>next');
  });

  it('renders plain text escaped, with emoji unless disabled', () => {
    expect(plainToHtml('<b> :fire:')).toBe('&lt;b&gt; 🔥');
    expect(plainToHtml(':fire:', false)).toBe(':fire:');
  });
});
