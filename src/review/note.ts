/**
 * A reviewer's "request changes" note, read as edits to the plan. Steps are referred to by the numbers the plan
 * view shows (or by their ids); commands are taken from backticks, or from the rest of the sentence when it starts
 * with kubectl/oc. What cannot be read is kept, so the revision can ask about it instead of guessing.
 */

/** A step as the note names it: its displayed number, or its id. */
export type StepRef = { number: number } | { id: string };

export type PlanEdit =
  | { kind: 'drop'; step: StepRef }
  | { kind: 'replace'; step: StepRef; command: string; rollback?: string }
  | { kind: 'move'; step: StepRef; position: 'before' | 'after'; anchor: StepRef }
  | { kind: 'move-to'; step: StepRef; position: 'start' | 'end' }
  | { kind: 'add'; command: string; rollback?: string; position: 'before' | 'after' | 'end'; anchor?: StepRef }
  | { kind: 'alternative'; index: number }
  /** "take DATABASE_URL from the ConfigMap (order-worker-config)": the variable comes from a ConfigMap or Secret. */
  | { kind: 'env-from'; variable: string; source: 'configmap' | 'secret'; name?: string; said: string };

export interface ParsedNote {
  edits: PlanEdit[];
  /** Sentences that asked for something the parser could not turn into an edit. */
  unparsed: string[];
}

const VERBS =
  'drop|remove|delete|skip|omit|replace|change|swap|move|put|run|do|use|choose|pick|take|prefer|go with|add|insert|append';
const STEP = String.raw`(?:step\s+)?(#?\d+|[a-z0-9]+(?:-[a-z0-9]+)+)`;
const COMMAND_START = /^(?:kubectl|oc|k|helm)\s/;
const PLEASANTRY =
  /^(?:thanks?|thank you|ty|cheers|please|pls|lgtm|ok(?:ay)?|looks good(?: otherwise)?|otherwise (?:fine|good)|good|great)[.!]*$/i;
const ORDINALS: Readonly<Record<string, number>> = { first: 1, second: 2, third: 3, a: 1, b: 2, c: 3, one: 1, two: 2 };

/** Sentences and clauses, never splitting inside backticks (commands contain `;`, `.` and `and`). */
function clauses(note: string): string[] {
  const out: string[] = [];
  let current = '';
  let code = false;
  for (let i = 0; i < note.length; i += 1) {
    const ch = note[i] as string;
    if (ch === '`') code = !code;
    const boundary = !code && (ch === '\n' || ch === ';' || (ch === '.' && /\s/.test(note[i + 1] ?? ' ')));
    if (boundary) {
      out.push(current);
      current = '';
    } else current += ch;
  }
  out.push(current);
  // "drop step 2 and move step 4 before step 1", "add … before step 3, take …": split where a new edit verb starts.
  return out
    .flatMap((c) =>
      splitOutsideCode(c, new RegExp(String.raw`\s*(?:(?:,\s*)?\b(?:and|then|also)\s+|,\s*)(?=(?:${VERBS})\b)`, 'i')),
    )
    .map((c) =>
      c
        .trim()
        .replace(/^(?:please|pls|and|then|also)\s+/i, '')
        .replace(/[,;]?\s*\b(?:thanks|thank you|ty|please|pls|cheers)[.!]*$/i, '')
        .trim(),
    )
    .filter((c) => c.length > 0);
}

function splitOutsideCode(text: string, separator: RegExp): string[] {
  const parts: string[] = [];
  const masked = text.replace(/`[^`]*`/g, (m) => '\u0001'.repeat(m.length));
  let from = 0;
  const global = new RegExp(separator.source, 'gi');
  for (const match of masked.matchAll(global)) {
    parts.push(text.slice(from, match.index));
    from = (match.index ?? 0) + match[0].length;
  }
  parts.push(text.slice(from));
  return parts;
}

function stepRef(word: string): StepRef {
  const n = /^#?(\d+)$/.exec(word);
  return n ? { number: Number(n[1]) } : { id: word.toLowerCase() };
}

/** The command a clause names: in backticks, else the clause from the first kubectl/oc word on. */
function commandIn(text: string): { command: string; rollback?: string } | undefined {
  const spans = [...text.matchAll(/`([^`]+)`/g)].map((m) => (m[1] ?? '').trim());
  const rollbackSpan = /\brollback\s*:?\s*`([^`]+)`/i.exec(text)?.[1]?.trim();
  const command = spans.find((s) => s !== rollbackSpan);
  if (command) return { command, ...(rollbackSpan ? { rollback: rollbackSpan } : {}) };
  const bare = /\b((?:kubectl|oc|helm)\s.+)$/i.exec(text)?.[1];
  if (!bare) return undefined;
  const [cmd, rollback] = bare.split(/\s+rollback\s*:?\s+/i) as [string, string | undefined];
  return { command: cmd.trim(), ...(rollback ? { rollback: rollback.trim() } : {}) };
}

function parseClause(clause: string): PlanEdit[] | undefined {
  const text = clause.trim();
  const lower = text.toLowerCase();
  let m: RegExpExecArray | null;

  m = new RegExp(String.raw`^(?:swap|switch)\s+steps?\s+${STEP}\s+(?:and|with|&)\s+${STEP}`, 'i').exec(lower);
  if (m) {
    const [a, b] = [stepRef(m[1] as string), stepRef(m[2] as string)];
    return [
      { kind: 'move', step: a, position: 'after', anchor: b },
      { kind: 'move', step: b, position: 'before', anchor: a },
    ];
  }
  m = new RegExp(
    String.raw`^(?:move|put|run|do)\s+${STEP}\s+(?:to\s+(?:the\s+)?)?(before|after|ahead of|first|last|start|end|top|bottom)(?:\s+(?:of\s+)?(?:the\s+plan|${STEP}))?`,
    'i',
  ).exec(lower);
  if (m) {
    const where = m[2] as string;
    const step = stepRef(m[1] as string);
    if (['first', 'start', 'top'].includes(where)) return [{ kind: 'move-to', step, position: 'start' }];
    if (['last', 'end', 'bottom'].includes(where)) return [{ kind: 'move-to', step, position: 'end' }];
    if (!m[3]) return undefined;
    return [{ kind: 'move', step, position: where === 'after' ? 'after' : 'before', anchor: stepRef(m[3]) }];
  }
  m = /^(?:drop|remove|delete|skip|omit|don't run|do not run|no)\s+steps?\s+(.+)$/i.exec(lower);
  if (m && !/`/.test(text)) {
    const refs = (m[1] as string).split(/\s*(?:,|\band\b|&)\s*/).map((w) => w.replace(/^step\s+/, '').trim());
    if (refs.every((r) => /^(?:#?\d+|[a-z0-9]+(?:-[a-z0-9]+)+)$/.test(r))) {
      return refs.map((r) => ({ kind: 'drop', step: stepRef(r) }));
    }
    return undefined;
  }
  m = new RegExp(String.raw`^(?:replace|change|swap out)\s+${STEP}\s+(?:with|to|by|for)\b`, 'i').exec(lower);
  const stepFirst = /^step\s+(#?\d+|[a-z0-9]+(?:-[a-z0-9]+)+)\s*(?::|should be|must be|becomes|=)/i.exec(lower);
  const useFor = /^(?:use|run)\s+.+\s+(?:for|in|as|instead of)\s+step\s+(#?\d+|[a-z0-9]+(?:-[a-z0-9]+)+)\b/i.exec(
    lower,
  );
  const target = m?.[1] ?? stepFirst?.[1] ?? useFor?.[1];
  if (target) {
    const found = commandIn(text);
    if (!found) return undefined;
    return [{ kind: 'replace', step: stepRef(target), ...found }];
  }
  m =
    /^(?:take|read|load|get|source|set|pull)\s+(?:the\s+)?(?:variable\s+|env\s+)?`?([A-Z_][A-Z0-9_]*)`?\s+from\s+(?:the\s+|a\s+)?(configmap|config map|secret)\b(?:\s+(?:called|named)?\s*`?([a-z0-9][a-z0-9.-]*)`?)?/i.exec(
      text,
    );
  if (m) {
    const name = m[3] && !/^(?:instead|and|then|too|as|please)$/i.test(m[3]) ? m[3] : undefined;
    return [
      {
        kind: 'env-from',
        variable: m[1] as string,
        source: /secret/i.test(m[2] as string) ? 'secret' : 'configmap',
        ...(name ? { name } : {}),
        said: text,
      },
    ];
  }
  m =
    /^(?:use|choose|pick|take|prefer|go with|switch to)\s+(?:the\s+)?(?:(first|second|third|other|alternative|another)\s+)?(?:alternative|option|fix|alternate)(?:\s+fix)?(?:\s+(?:#?(\d+)|([abc])\b|"([^"]+)"))?/i.exec(
      text,
    );
  if (m) {
    const word = (m[1] ?? '').toLowerCase();
    const index = m[2] ? Number(m[2]) : m[3] ? (ORDINALS[m[3].toLowerCase()] ?? 1) : (ORDINALS[word] ?? 1);
    return [{ kind: 'alternative', index }];
  }
  if (/^(?:add|insert|append|also run|run)\b/i.test(lower)) {
    const found = commandIn(text);
    if (!found || !(COMMAND_START.test(found.command) || /`/.test(text))) return undefined;
    const where = /\b(before|after)\s+step\s+(#?\d+|[a-z0-9]+(?:-[a-z0-9]+)+)/i.exec(text.replace(/`[^`]*`/g, ''));
    return [
      {
        kind: 'add',
        ...found,
        position: where ? (where[1]?.toLowerCase() as 'before' | 'after') : 'end',
        ...(where ? { anchor: stepRef((where[2] as string).toLowerCase()) } : {}),
      },
    ];
  }
  return undefined;
}

export function parseReviewNote(note: string): ParsedNote {
  const edits: PlanEdit[] = [];
  const unparsed: string[] = [];
  for (const clause of clauses(note)) {
    if (PLEASANTRY.test(clause)) continue;
    const parsed = parseClause(clause);
    if (parsed) edits.push(...parsed);
    else unparsed.push(clause);
  }
  return { edits, unparsed };
}
