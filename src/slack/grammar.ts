import { clip, isStoredId } from '../limits.js';
import type { TriggerMode } from '../triage/envelope/index.js';
import {
  explainInvalidNamespace,
  type IntentSuggestion,
  InvalidNamespaceError,
  isDns1123Label,
  resolveEntry,
  SWEEP_INTENT,
} from '../triage/route/index.js';
import type { TemplateRegistry } from '../triage/templates/index.js';
import { describeImpostor, findImpostors } from './homoglyphs.js';

/**
 * The `/triage` command grammar:
 *
 *   /triage <free text or intent> [in|-n] <namespace> [note]
 *   /triage help | intents | list | stats | status [session] | breakglass [session]
 *
 * Pure: text in, a command or one specific problem out. Nothing here is ever executed; the checks exist so that a
 * person gets a precise answer (which character, which word, what to type instead) rather than a silent failure.
 * A described problem is never refused for its words: when they name no single intent the request runs the
 * namespace sweep (the cluster's evidence decides), and when they name no namespace the triage finds it in the
 * cluster. Only input that cannot be read safely, or a namespace that cannot exist, is refused here.
 */

export const GRAMMAR_LIMITS = {
  /** Long enough for a symptom, a namespace and a note; anything longer belongs in the incident thread. */
  maxLength: 1000,
  maxNoteLength: 500,
} as const;

type TriageCommand =
  | { kind: 'help' }
  | { kind: 'intents' }
  | { kind: 'list' }
  | { kind: 'stats' }
  | { kind: 'status'; sessionId?: string }
  | { kind: 'breakglass'; sessionId?: string }
  | StartCommand;

export interface StartCommand {
  kind: 'start';
  /** The request as typed (Slack escaping undone), without the note. */
  text: string;
  /** The intent the words name, or the namespace sweep when they name none clearly. */
  intent: string;
  /** Absent when the request names none: the triage locates it from the words and the cluster. */
  namespace?: string;
  note?: string;
  confidence: number;
  why: string;
  triggerMode: TriggerMode;
  suggestions: IntentSuggestion[];
}

const GRAMMAR_PROBLEM_CODES = [
  'empty',
  'too-long',
  'control-characters',
  'shell-metacharacters',
  'homoglyph',
  'non-ascii-namespace',
  'invalid-namespace',
  'unknown-intent',
  'bad-session-id',
] as const;
type GrammarProblemCode = (typeof GRAMMAR_PROBLEM_CODES)[number];

interface GrammarProblem {
  code: GrammarProblemCode;
  /** One or two sentences for the person who typed the command (Slack mrkdwn). */
  message: string;
}

export type ParseResult = { ok: true; command: TriageCommand } | { ok: false; problem: GrammarProblem };

export interface ParseOptions {
  /** How the command is invoked in examples: `/triage` for the slash command, `@calmops` for a mention. */
  invocation?: string;
}

const SUBCOMMANDS = new Set(['help', 'intents', 'list', 'stats', 'status', 'breakglass', 'break-glass']);
const NAMESPACE_MARKER = '(?:in|within|inside|-n|--namespace|--ns|namespace|ns|project)';
const MARKER_THEN_VALUE = new RegExp(String.raw`(?:^|\s)${NAMESPACE_MARKER}(?:\s*[=:]\s*|\s+)(\S+)`, 'giu');
const VALUE_THEN_KEY = /(?:^|\s)(\S+)\s+(?:namespace|ns|project)\b/giu;
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const EXAMPLE = 'pods stuck pending -n payments';

function problem(code: GrammarProblemCode, message: string): ParseResult {
  return { ok: false, problem: { code, message } };
}

/** Slack escapes `&`, `<` and `>` in command text and message text. */
export function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Mentions, channel links and URLs are Slack markup, not shell syntax. */
function withoutSlackMarkup(text: string): string {
  return text.replace(/<(?:[@#!][^>]*|(?:https?|mailto):[^>]*)>/g, ' ');
}

function shellMetacharacters(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(/\$\(|\$\{|\$[A-Za-z_]|&&|\|\||[;|&`<>\\]/g)) {
    found.add(
      match[0].startsWith('$') && match[0].length === 2 && /[A-Za-z_]/.test(match[0][1] ?? '') ? '$' : match[0],
    );
  }
  return [...found];
}

function codeList(items: readonly string[]): string {
  return items.map((i) => `\`${i.replace(/`/g, 'ˋ')}\``).join(' ');
}

/** Candidate namespace words: whatever follows `in`/`-n`/`namespace`, or precedes `namespace`. */
function namespaceCandidates(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(MARKER_THEN_VALUE)) out.push(m[1] ?? '');
  for (const m of text.matchAll(VALUE_THEN_KEY)) out.push(m[1] ?? '');
  return out.map((v) => v.replace(/^["'`]+|["'`.,:;!?)]+$/g, '')).filter((v) => v !== '');
}

function checkNamespaceCharacters(text: string, invocation: string): ParseResult | undefined {
  for (const candidate of namespaceCandidates(text)) {
    if (/^[\x00-\x7f]*$/.test(candidate)) continue;
    const { impostors, others, ascii } = findImpostors(candidate);
    if (impostors.length > 0 && others.length === 0 && isDns1123Label(ascii)) {
      const what =
        impostors.length > 3
          ? `${impostors.length} look-alike characters from other scripts (${impostors
              .slice(0, 3)
              .map((i) => `"${i.char}" ${i.codePoint}`)
              .join(', ')}, …)`
          : impostors.map(describeImpostor).join(', ');
      return problem(
        'homoglyph',
        `The namespace "${candidate}" contains ${what}. Kubernetes names are plain ASCII, so it would match nothing. ` +
          `Did you mean \`${invocation} … -n ${ascii}\`? Retype the name rather than pasting it.`,
      );
    }
    const odd = [...new Set([...impostors.map((i) => i.char), ...others])].map((c) => `"${c}"`).join(', ');
    return problem(
      'non-ascii-namespace',
      `"${candidate}" cannot be a namespace: it contains ${odd}, and namespaces use only a-z, 0-9 and "-".`,
    );
  }
  return undefined;
}

function subcommand(words: readonly string[], invocation: string): ParseResult | undefined {
  const [first, second, ...rest] = words;
  const name = first?.toLowerCase();
  if (name === undefined || !SUBCOMMANDS.has(name)) return undefined;
  if (name === 'status' || name === 'breakglass' || name === 'break-glass') {
    if (rest.length > 0) return undefined;
    const kind = name === 'status' ? 'status' : 'breakglass';
    if (second === undefined) return { ok: true, command: { kind } };
    if (!isStoredId(second)) {
      return problem(
        'bad-session-id',
        `"${second}" is not a session id. Session ids look like \`01JD3Q7K8M2N4P6R8T0V2X4Z6B\`; ` +
          `\`${invocation} list\` shows the open sessions in this channel.`,
      );
    }
    return { ok: true, command: { kind, sessionId: second } };
  }
  if (second !== undefined) return undefined;
  return { ok: true, command: { kind: name as 'help' | 'intents' | 'list' | 'stats' } };
}

/** Where the note starts: after the last `in|-n|namespace <ns>` phrase naming the chosen namespace. */
function splitNote(text: string, namespace: string): { request: string; note?: string } {
  // The namespace is a validated DNS label (a-z, 0-9, '-'), so it is safe inside a pattern as is.
  const escaped = namespace;
  const phrase = new RegExp(
    String.raw`(?:^|\s)(?:${NAMESPACE_MARKER}(?:\s*[=:]\s*|\s+)["'\x60]?${escaped}["'\x60]?|["'\x60]?${escaped}["'\x60]?\s+(?:namespace|ns|project))(?=$|[\s.,:;!?])`,
    'giu',
  );
  let end = -1;
  for (const m of text.matchAll(phrase)) end = (m.index ?? 0) + m[0].length;
  if (end < 0) return { request: text.trim() };
  const note = text
    .slice(end)
    .replace(/^[\s.,:;!?-]+/, '')
    .trim();
  const request = text.slice(0, end).trim();
  return note === '' ? { request } : { request, note };
}

/** Parses the text after `/triage` (or after the bot's mention). */
export function parseTriageCommand(raw: string, registry: TemplateRegistry, options: ParseOptions = {}): ParseResult {
  const invocation = options.invocation ?? '/triage';
  const text = unescapeSlack(raw).trim();
  if (text === '') {
    return problem(
      'empty',
      `Tell me what is wrong and where, e.g. \`${invocation} ${EXAMPLE}\`. \`${invocation} help\` lists everything I understand.`,
    );
  }
  if (text.length > GRAMMAR_LIMITS.maxLength) {
    return problem(
      'too-long',
      `That is ${text.length.toLocaleString('en-US')} characters; a triage request is at most ` +
        `${GRAMMAR_LIMITS.maxLength.toLocaleString('en-US')}. Start with the symptom and the namespace ` +
        `(\`${invocation} ${EXAMPLE}\`) and paste details into the incident thread.`,
    );
  }
  if (CONTROL.test(text)) {
    return problem(
      'control-characters',
      'The request contains control characters (often from a paste of terminal output). Type the symptom and namespace as plain text.',
    );
  }
  const metacharacters = shellMetacharacters(withoutSlackMarkup(text));
  if (metacharacters.length > 0) {
    return problem(
      'shell-metacharacters',
      `I never run shell commands, so ${codeList(metacharacters)} ${metacharacters.length === 1 ? 'has' : 'have'} no meaning here and ${metacharacters.length === 1 ? 'is' : 'are'} refused. ` +
        `Describe the symptom instead, e.g. \`${invocation} ${EXAMPLE}\`; to propose a command, write it in the incident thread.`,
    );
  }

  const words = text.split(/\s+/);
  const sub = subcommand(words, invocation);
  if (sub !== undefined) return sub;

  const charProblem = checkNamespaceCharacters(text, invocation);
  if (charProblem !== undefined) return charProblem;

  // An intent id typed as the first word is taken as is: `/triage pvc-binding -n payments`.
  const firstWord = words[0]?.toLowerCase() ?? '';
  const named = registry.get(firstWord);

  let resolution: ReturnType<typeof resolveEntry>;
  try {
    resolution = resolveEntry(text, registry);
  } catch (error) {
    if (error instanceof InvalidNamespaceError) {
      return problem('invalid-namespace', `${capitalize(error.message)}. Example: \`${invocation} ${EXAMPLE}\`.`);
    }
    throw error;
  }

  // Words that fit several areas, or none, still describe a problem: the sweep reads the whole namespace and the
  // evidence decides; the dictionary's suggestions stay in the command and the text goes along as hints.
  const swept = named === undefined && resolution.intent === undefined && registry.get(SWEEP_INTENT) !== undefined;
  const intent = named?.id ?? resolution.intent ?? (swept ? SWEEP_INTENT : undefined);
  if (intent === undefined) {
    // Only a registry without the sweep template gets here.
    return problem(
      'unknown-intent',
      `I could not tell what is wrong from "${clip(text, 120)}". Name an intent; \`${invocation} intents\` lists them.`,
    );
  }

  const namespace = resolution.namespace;
  if (namespace !== undefined) {
    const invalid = explainInvalidNamespace(namespace);
    if (invalid !== undefined) {
      return problem('invalid-namespace', `"${namespace}" is not a valid namespace: ${invalid}.`);
    }
  }

  const { request, note } = namespace === undefined ? { request: text, note: undefined } : splitNote(text, namespace);
  if (note !== undefined && note.length > GRAMMAR_LIMITS.maxNoteLength) {
    return problem(
      'too-long',
      `The note after the namespace is ${note.length} characters; keep it under ${GRAMMAR_LIMITS.maxNoteLength} and put the rest in the thread.`,
    );
  }
  return {
    ok: true,
    command: {
      kind: 'start',
      text: request,
      intent,
      ...(namespace === undefined ? {} : { namespace }),
      ...(note === undefined ? {} : { note }),
      confidence: named ? 1 : resolution.confidence,
      why: named ? `intent named directly ("${named.id}")` : resolution.why,
      triggerMode: named ? 'replace' : swept ? 'observe' : resolution.triggerMode,
      suggestions: resolution.suggestions,
    },
  };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
