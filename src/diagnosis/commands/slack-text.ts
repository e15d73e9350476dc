import { redactText } from '../../redact/index.js';
import { HOST_TOOLS } from './host-tools.js';
import { KUBE_PROGRAMS, programOf, WRAPPERS } from './programs.js';

/** What people paste into Slack, made ready to classify: entities decoded, credentials gone, command lines found. */

// Text preparation

/** Credentials never survive classification: they are replaced before the text is kept anywhere. */
export function redactCredentials(text: string): string {
  return redactText(text);
}

/** Slack sends `&`, `<` and `>` as entities, wraps mentions and links in angle brackets, and likes curly quotes. */
export function normalizeSlackText(text: string): string {
  return text
    .replace(/<@[A-Z0-9]+(?:\|[^>]*)?>/g, ' ')
    .replace(/<(https?:\/\/[^|>]+)(?:\|([^>]*))?>/g, (_m, url: string, label?: string) => label ?? url)
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/[\u2018\u2019\u201A\u2032]/g, "'")
    .replace(/[\u201C\u201D\u201E\u2033]/g, '"')
    .replace(/[\u2013\u2014]/g, (dash) => (dash === '\u2014' ? '--' : '-'))
    .replace(/\u00A0/g, ' ')
    .trim();
}

/**
 * Finds the command lines in a message: the whole text when it starts with a known program, otherwise the code
 * blocks and inline code spans that do. Backticks inside a bare command line are command substitution, so code
 * spans are only looked for when the message is not itself a command.
 */
export function extractCommandLines(text: string): string[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  if (looksLikeCommand(joined)) return splitLines(joined);
  const blocks = [...joined.matchAll(/```(?:[a-z]*\n)?([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  const spans =
    blocks.length > 0 ? blocks : [...joined.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? '').filter(Boolean);
  const commands = spans.filter((s) => looksLikeCommand(s));
  return commands.flatMap(splitLines);
}

function splitLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.replace(/^\s*[$>]\s+/, '').trim())
    .filter((l) => l.length > 0 && !l.startsWith('#'));
}

function looksLikeCommand(text: string): boolean {
  const first = text
    .trim()
    .replace(/^[$>]\s+/, '')
    .split(/\s+/)
    .find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  if (!first) return false;
  const program = programOf(first);
  return KUBE_PROGRAMS.has(program) || WRAPPERS.has(program) || program === 'helm' || program in HOST_TOOLS;
}
