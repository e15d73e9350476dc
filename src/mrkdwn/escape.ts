/**
 * Slack mrkdwn primitives for text calmops did not write. They sit apart from the views so the domain can phrase an
 * answer in mrkdwn (RESOLVING quotes the plan and the person) without depending on how messages are laid out.
 */

/**
 * For text that came from people or clusters: Slack treats these three characters as markup, so `<!channel>`,
 * `<@U…>` and `<https://…|label>` in a pod log would ping, mention or disguise a link. Escape each piece of foreign
 * text once, where the view puts it into a message; the markup the view composes itself (its own mentions, dates,
 * links) stays as it is.
 */
export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A mention the view composes itself: a Slack user id (upper-case letters and digits, `U…`/`W…`) becomes `<@U…>`;
 * anything else, `calmops` for the bot's own actions included, is shown as text.
 */
export function mention(userId: string): string {
  return /^[A-Z][A-Z0-9]+$/.test(userId) ? `<@${userId}>` : escapeText(userId);
}
