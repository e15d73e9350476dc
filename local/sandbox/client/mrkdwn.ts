import { replaceEmoji } from './emoji.js';
import { decodeSlackEntities, escapeHtml, safeHref } from './html.js';

export interface MrkdwnContext {
  /** Display name for a user id, for `<@U…>` mentions. */
  userName(id: string): string | undefined;
  /** Name for a channel id, for `<#C…>` links without a label. */
  channelName?(id: string): string | undefined;
}

const MARK = '\u0000';

/**
 * Renders Slack `mrkdwn` to HTML the way the Slack client shows it: ```code blocks```, `inline code`, *bold*,
 * _italic_, ~strike~, `>` quotes, `<url|text>` links, `<@U…>` mentions with display names, `<#C…|name>`
 * channels, `<!here>`, and emoji shortcodes. Everything else is text, HTML-escaped.
 */
export function mrkdwnToHtml(text: string, context: MrkdwnContext): string {
  const out: string[] = [];
  const fence = /```([\s\S]*?)```/g;
  let last = 0;
  for (let match = fence.exec(text); match !== null; match = fence.exec(text)) {
    if (match.index > last) out.push(inlineSegment(text.slice(last, match.index), context));
    const code = (match[1] ?? '').replace(/^\n/, '');
    out.push(`<pre class="md-pre">${escapeHtml(decodeSlackEntities(code))}</pre>`);
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(inlineSegment(text.slice(last), context));
  return out.join('');
}

/** Text outside code fences: inline code first (nothing inside it is formatted), then the rest. */
function inlineSegment(text: string, context: MrkdwnContext): string {
  const out: string[] = [];
  const code = /`([^`\n]+)`/g;
  let last = 0;
  for (let match = code.exec(text); match !== null; match = code.exec(text)) {
    if (match.index > last) out.push(formatted(text.slice(last, match.index), context));
    out.push(`<code class="md-code">${escapeHtml(decodeSlackEntities(match[1] ?? ''))}</code>`);
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(formatted(text.slice(last), context));
  return quoteLines(out.join(''));
}

/** Lines that start with `>` (escaped by Slack as `&gt;`) become a quote. */
function quoteLines(html: string): string {
  const lines = html.split('\n');
  const out: string[] = [];
  let quote: string[] = [];
  const flush = () => {
    if (quote.length > 0) out.push(`<blockquote class="md-quote">${quote.join('<br>')}</blockquote>`);
    quote = [];
  };
  for (const line of lines) {
    const match = /^&gt;\s?(.*)$/.exec(line);
    if (match !== null) quote.push(match[1] ?? '');
    else {
      flush();
      out.push(line);
    }
  }
  flush();
  return out
    .join('\n')
    .replace(/\n/g, '<br>')
    .replace(/<\/blockquote><br>/g, '</blockquote>');
}

function formatted(text: string, context: MrkdwnContext): string {
  // Links and mentions are replaced by markers first, so their URLs never take part in *bold* or _italic_.
  const tokens: string[] = [];
  const withMarkers = text.replace(/<([^<>\n]+)>/g, (_whole, inner: string) => {
    tokens.push(angleToken(inner, context));
    return `${MARK}${tokens.length - 1}${MARK}`;
  });
  let html = escapeHtml(decodeSlackEntities(withMarkers));
  html = html.replace(/(^|[^\w*])\*(?!\s)([^*\n]+?)\*(?!\w)/g, '$1<b>$2</b>');
  html = html.replace(/(^|[^\w_])_(?!\s)([^_\n]+?)_(?!\w)/g, '$1<i>$2</i>');
  html = html.replace(/(^|[^\w~])~(?!\s)([^~\n]+?)~(?!\w)/g, '$1<s>$2</s>');
  html = replaceEmoji(html);
  return html.replace(new RegExp(`${MARK}(\\d+)${MARK}`, 'g'), (_whole, index: string) => tokens[Number(index)] ?? '');
}

function angleToken(inner: string, context: MrkdwnContext): string {
  const [target = '', label] = splitOnce(inner, '|');
  if (target.startsWith('@')) {
    const id = target.slice(1);
    const name = label ?? context.userName(id) ?? id;
    return `<span class="md-mention" data-user="${escapeHtml(id)}">@${escapeHtml(name)}</span>`;
  }
  if (target.startsWith('#')) {
    const id = target.slice(1);
    const name = label ?? context.channelName?.(id) ?? id;
    return `<span class="md-channel">#${escapeHtml(name)}</span>`;
  }
  if (target.startsWith('!')) {
    const special = target.slice(1).split('^')[0] ?? '';
    const name = label ?? (special.startsWith('subteam') ? 'group' : special);
    return `<span class="md-mention">@${escapeHtml(name.replace(/^@/, ''))}</span>`;
  }
  const url = decodeSlackEntities(target);
  const href = safeHref(url);
  const shown = escapeHtml(decodeSlackEntities(label ?? target));
  return href === undefined
    ? shown
    : `<a class="md-link" href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${shown}</a>`;
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const index = text.indexOf(separator);
  return index < 0 ? [text, undefined] : [text.slice(0, index), text.slice(index + 1)];
}

/** Plain text objects: escaped, with emoji shortcodes when `emoji` is not false. */
export function plainToHtml(text: string, emoji = true): string {
  const html = escapeHtml(text).replace(/\n/g, '<br>');
  return emoji ? replaceEmoji(html) : html;
}
