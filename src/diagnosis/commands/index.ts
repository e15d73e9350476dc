import { classifyPhrase } from '../phrases.js';
import type { UserRequest } from '../request.js';
import { classifyHelm } from './helm.js';
import { classifyHostTool, HOST_TOOLS } from './host-tools.js';
import { classifyKube } from './kubectl.js';
import { parsePipeStage } from './pipeline.js';
import { KUBE_PROGRAMS, programOf, SEVERITY, WRAPPERS } from './programs.js';
import { tokenizeCommandLine } from './shell.js';
import { extractCommandLines, normalizeSlackText, redactCredentials } from './slack-text.js';

export { type ParsedKube, parseKubeArgs } from './kubectl.js';
export { tokenizeCommandLine } from './shell.js';
export { extractCommandLines, normalizeSlackText, redactCredentials } from './slack-text.js';

/**
 * Classifies what a user typed in the incident thread. Command lines are tokenised like a POSIX shell would
 * (quotes, escapes, operators) and read with kubectl/oc grammar; anything else goes to the phrase rules.
 * Nothing here runs anything: the class decides what the gate lets through.
 */

// Entry points

/** Classifies one simple command (no operators). Undefined when the words are not a command calmops knows. */
function classifySimple(words: readonly string[]): Omit<UserRequest, 'raw'> | undefined {
  let i = 0;
  const wrapped: string[] = [];
  while (i < words.length) {
    const word = words[i] as string;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      i++;
      continue;
    }
    const program = programOf(word);
    if (WRAPPERS.has(program)) {
      wrapped.push(program);
      i++;
      // Wrapper options (`watch -n 5`, `sudo -u root`) come before the wrapped program.
      while (i < words.length && (words[i] as string).startsWith('-')) {
        const opt = words[i] as string;
        i += /^-[nuUgdC]$/.test(opt) ? 2 : 1;
      }
      continue;
    }
    break;
  }
  const head = words[i];
  if (head === undefined) return undefined;
  const program = programOf(head);
  const args = words.slice(i + 1);
  let result: Omit<UserRequest, 'raw'> | undefined;
  if (KUBE_PROGRAMS.has(program)) result = classifyKube(program === 'oc' ? 'oc' : 'kubectl', args, wrapped);
  else if (program === 'helm') result = classifyHelm(args);
  else if (program in HOST_TOOLS) result = classifyHostTool(program, args, wrapped);
  else if (wrapped.length > 0 && (wrapped.includes('sudo') || wrapped.includes('doas'))) {
    result = {
      kind: 'dangerous',
      toolClass: 'destructive',
      verb: program,
      allNamespaces: false,
      source: 'command',
      reasons: [`unknown program "${program}" run with sudo`],
      escalation: true,
      malformed: false,
    };
  }
  if (result) result.argv = [...words];
  return result;
}

/**
 * Classifies one command line. Operators (`;`, `&&`, `||`, `|`, `&`, redirections) and substitutions (`$(…)`,
 * backticks) make the whole line dangerous: what runs is no longer the command a reader would check.
 */
export function classifyCommandLine(line: string): UserRequest | undefined {
  const raw = redactCredentials(line.trim());
  const tokens = tokenizeCommandLine(raw);
  const parts = tokens.commands.map((words) => classifySimple(words));
  const known = parts.filter((p): p is Omit<UserRequest, 'raw'> => p !== undefined);
  if (known.length === 0) return undefined;
  const operators = [...new Set(tokens.operators)].filter(
    (op) => !((op === '(' || op === ')') && tokens.scan.substitutions.includes('$(…)')),
  );
  const compoundReasons = [
    ...new Set([
      ...operators.map((op) => (op === '(' || op === ')' ? 'subshell ( … )' : `compound command (${op})`)),
      ...tokens.scan.substitutions.map((s) => `command substitution (${s})`),
    ]),
  ];
  // A read piped into text filters (`| grep -A 8 …`, `| wc -l`) only looks at the read's text: it is that read.
  const [head, ...stages] = tokens.commands;
  const first = parts[0];
  const onlyPipes =
    operators.length > 0 && operators.every((op) => op === '|') && tokens.scan.substitutions.length === 0;
  if (
    onlyPipes &&
    head !== undefined &&
    first?.kind === 'read' &&
    stages.length > 0 &&
    stages.every((stage) => parsePipeStage(stage).kind !== 'refused')
  ) {
    return {
      ...first,
      reasons: [...first.reasons, `piped into ${stages.map((s) => programOf(s[0] ?? '')).join(', ')}`],
      malformed: tokens.scan.unbalancedQuote,
      argv: [...head],
      raw,
    };
  }
  if (tokens.commands.length === 1 && compoundReasons.length === 0) {
    const single = known[0] as Omit<UserRequest, 'raw'>;
    const malformed = tokens.scan.unbalancedQuote;
    return {
      ...single,
      malformed,
      reasons: malformed ? [...single.reasons, 'unbalanced quote'] : single.reasons,
      raw,
    };
  }
  const worst = known.reduce((a, b) =>
    SEVERITY[b.toolClass ?? 'read'] > SEVERITY[a.toolClass ?? 'read'] ? b : a,
  ) as Omit<UserRequest, 'raw'>;
  return {
    ...worst,
    kind: 'dangerous',
    toolClass: 'destructive',
    reasons: [...compoundReasons, ...worst.reasons],
    escalation: known.some((p) => p.escalation),
    malformed: tokens.scan.unbalancedQuote,
    argv: tokens.commands.flat(),
    parts: known.map((p) => ({ ...p, raw: (p.argv ?? []).join(' ') })),
    raw,
  };
}

/**
 * Classifies a message from the incident thread. Several command lines in one message count as one compound
 * command; a message without a command goes to the phrase rules ("just delete the pod", "hypothesis 2").
 */
export function classifyRequest(text: string): UserRequest {
  const normalized = redactCredentials(normalizeSlackText(text));
  const lines = extractCommandLines(normalized);
  const classified = lines.map((l) => classifyCommandLine(l)).filter((r): r is UserRequest => r !== undefined);
  if (classified.length === 1) return { ...(classified[0] as UserRequest), raw: normalized };
  if (classified.length > 1) {
    const worst = classified.reduce((a, b) =>
      SEVERITY[b.toolClass ?? 'read'] > SEVERITY[a.toolClass ?? 'read'] ? b : a,
    );
    return {
      ...worst,
      kind: 'dangerous',
      toolClass: 'destructive',
      reasons: [`compound command (${classified.length} command lines)`, ...worst.reasons],
      escalation: classified.some((c) => c.escalation),
      parts: classified,
      raw: normalized,
    };
  }
  return classifyPhrase(normalized);
}
