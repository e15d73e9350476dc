/**
 * Namespace extraction from free text. Explicit forms (`-n x`, `--namespace x`, `namespace: x`, `ns x`,
 * `the x namespace`, `project x`) must name a valid namespace or the request is refused; the natural form `in x` is
 * only taken when x is a valid name that is not an ordinary word of the request ("stuck in pending").
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_LABEL = 63;

/** True when `value` is a DNS-1123 label: at most 63 of a-z, 0-9 and '-', starting and ending alphanumeric. */
export function isDns1123Label(value: string): boolean {
  return value.length <= MAX_LABEL && DNS1123_LABEL.test(value);
}

/** Why `value` is not a DNS-1123 label, or undefined when it is one. */
export function explainInvalidNamespace(value: string): string | undefined {
  if (value === '') return 'it is empty';
  if (value.length > MAX_LABEL) return `it is ${value.length} characters long (at most ${MAX_LABEL})`;
  if (/[A-Z]/.test(value) && isDns1123Label(value.toLowerCase())) {
    return `it has upper-case letters (did you mean "${value.toLowerCase()}"?)`;
  }
  const bad = [...new Set(value.replace(/[a-zA-Z0-9-]/g, ''))];
  const problems = [
    ...(/[A-Z]/.test(value) ? ['upper-case letters'] : []),
    ...(bad.length > 0 ? [bad.map((c) => JSON.stringify(c)).join(', ')] : []),
  ];
  if (problems.length > 0) return `it contains ${problems.join(' and ')} (only a-z, 0-9 and "-" are allowed)`;
  if (!/^[a-z0-9]/.test(value)) return 'it must start with a letter or digit';
  if (!/[a-z0-9]$/.test(value)) return 'it must end with a letter or digit';
  return undefined;
}

/** The text names a namespace explicitly but the name cannot exist in Kubernetes (or two names conflict). */
export class InvalidNamespaceError extends Error {
  override readonly name = 'InvalidNamespaceError';
  constructor(
    readonly value: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface NamespaceMatch {
  namespace?: string;
  /** The words the namespace was taken from, e.g. `in student03` or `-n payments`. */
  source?: string;
  /** Whether a flag or the word namespace/ns/project named it (as opposed to `in x`). */
  explicit: boolean;
  /** The text with the namespace phrase removed, for intent matching. */
  rest: string;
  /** An `in X` phrase passed over because X is not a valid name, so callers can say why no namespace was taken. */
  ignored?: string;
}

export interface ParseNamespaceOptions {
  /** Words that are part of the request rather than a name (intent vocabulary), so `in pending` is no namespace. */
  isReserved?: (word: string) => boolean;
}

/** Words that follow "in" or sit next to "namespace" without being a name. */
const NOT_A_NAME = new Set([
  'a',
  'an',
  'the',
  'my',
  'our',
  'your',
  'their',
  'his',
  'her',
  'its',
  'this',
  'that',
  'these',
  'those',
  'which',
  'what',
  'whole',
  'entire',
  'same',
  'each',
  'every',
  'any',
  'all',
  'some',
  'one',
  'current',
  'given',
  'other',
  'another',
  'is',
  'are',
  'was',
  'has',
  'have',
  'had',
  'and',
  'or',
  'but',
  'for',
  'of',
  'to',
  'with',
  'in',
  'on',
  'at',
  'it',
  'there',
  'here',
  'health',
  'status',
  'level',
  'wide',
  'scoped',
  'scope',
  'name',
  'named',
  'called',
  'cluster',
  'kubernetes',
  'openshift',
  'k8s',
  'ocp',
  'general',
  'particular',
  'progress',
]);

/** Status words that often follow "in" ("stuck in pending") and are never the namespace meant. */
/** Namespaces every cluster has, even where the word also occurs in the request vocabulary. */
const ALWAYS_NAMES = new Set(['default', 'kube-system', 'kube-public']);

const STATE_WORDS = new Set([
  'pending',
  'crashloop',
  'crashloopbackoff',
  'containercreating',
  'imagepullbackoff',
  'errimagepull',
  'error',
  'running',
  'terminating',
  'unknown',
  'notready',
  'ready',
  'loop',
  'backoff',
]);

const VALUE = String.raw`["'\x60]?([^\s,;!?()<>"'\x60]*)["'\x60]?`;
const KEY = 'namespace|ns|project';
const FLAG_RE = new RegExp(String.raw`(^|\s)(--namespace|--ns|-n)(?:=|\s+|$)${VALUE}`, 'gi');
const KEYED_SEP_RE = new RegExp(String.raw`\b(${KEY})\s*[:=]\s*${VALUE}`, 'gi');
const KEY_THEN_VALUE_RE = new RegExp(String.raw`\b(${KEY})\s+${VALUE}`, 'gi');
const VALUE_THEN_KEY_RE = new RegExp(String.raw`(^|\s)${VALUE}\s+(${KEY})\b`, 'gi');
const NATURAL_RE = new RegExp(String.raw`\b(in|within|inside)\s+(?:the\s+)?${VALUE}`, 'gi');

interface Candidate {
  value: string;
  start: number;
  end: number;
  source: string;
  explicit: boolean;
}

/**
 * Find the namespace a request names. Explicit forms win over `in x`; among several `in x` the last one wins
 * (scope usually closes a sentence). Throws InvalidNamespaceError when an explicit form names an invalid namespace
 * or two explicit forms disagree.
 */
export function parseNamespace(text: string, options: ParseNamespaceOptions = {}): NamespaceMatch {
  const reserved = (word: string): boolean => {
    const w = word.toLowerCase();
    if (ALWAYS_NAMES.has(w)) return false;
    return NOT_A_NAME.has(w) || STATE_WORDS.has(w) || options.isReserved?.(w) === true;
  };
  const explicit: Candidate[] = [];
  const natural: Candidate[] = [];
  const taken: [number, number][] = [];
  const overlaps = (s: number, e: number) => taken.some(([a, b]) => s < b && a < e);
  const add = (list: Candidate[], c: Candidate) => {
    if (overlaps(c.start, c.end)) return;
    taken.push([c.start, c.end]);
    list.push(c);
  };

  for (const m of text.matchAll(FLAG_RE)) {
    const lead = m[1] ?? '';
    const start = (m.index ?? 0) + lead.length;
    const value = trimValue(m[3] ?? '');
    const flag = m[2] ?? '-n';
    if (value === '' || value.startsWith('-')) {
      throw new InvalidNamespaceError(value, `${flag} needs a namespace name after it`);
    }
    add(explicit, { value, start, end: (m.index ?? 0) + m[0].length, source: m[0].slice(lead.length), explicit: true });
  }
  for (const m of text.matchAll(KEYED_SEP_RE)) {
    const value = trimValue(m[2] ?? '');
    const start = m.index ?? 0;
    if (value === '') throw new InvalidNamespaceError(value, `"${m[0].trim()}" needs a namespace name after it`);
    add(explicit, { value, start, end: start + m[0].length, source: m[0], explicit: true });
  }
  for (const m of text.matchAll(KEY_THEN_VALUE_RE)) {
    const value = trimValue(m[2] ?? '');
    const start = m.index ?? 0;
    if (value === '' || reserved(value) || isKey(value)) continue;
    add(explicit, { value, start, end: start + m[0].length, source: m[0], explicit: true });
  }
  for (const m of text.matchAll(VALUE_THEN_KEY_RE)) {
    const lead = m[1] ?? '';
    const value = trimValue(m[2] ?? '');
    const start = (m.index ?? 0) + lead.length;
    if (value === '' || reserved(value) || isKey(value)) continue;
    add(explicit, { value, start, end: (m.index ?? 0) + m[0].length, source: m[0].slice(lead.length), explicit: true });
  }
  let ignored: string | undefined;
  for (const m of text.matchAll(NATURAL_RE)) {
    const value = trimValue(m[2] ?? '');
    const start = m.index ?? 0;
    // Natural phrasing only counts when it is unmistakably a name: valid, not a word of the request, not a number.
    if (reserved(value) || isKey(value) || /^\d+$/.test(value)) continue;
    if (!isDns1123Label(value)) {
      if (isDns1123Label(value.toLowerCase())) ignored = m[0].trim();
      continue;
    }
    add(natural, { value, start, end: start + m[0].length, source: m[0], explicit: false });
  }

  for (const c of explicit) {
    const why = explainInvalidNamespace(c.value);
    if (why) {
      throw new InvalidNamespaceError(
        c.value,
        `"${c.value}" (from "${c.source.trim()}") is not a valid namespace: ${why}`,
      );
    }
  }
  const names = [...new Set(explicit.map((c) => c.value))];
  if (names.length > 1) {
    throw new InvalidNamespaceError(
      names.join(','),
      `the request names more than one namespace (${names.map((n) => `"${n}"`).join(' and ')}); give exactly one`,
    );
  }

  const chosen = explicit[0] ?? natural[natural.length - 1];
  if (!chosen) return { explicit: false, rest: text, ...(ignored ? { ignored } : {}) };
  const remove = [...explicit, ...natural.filter((c) => c.value === chosen.value)].sort((a, b) => b.start - a.start);
  let rest = text;
  for (const c of remove) rest = `${rest.slice(0, c.start)} ${rest.slice(c.end)}`;
  return {
    namespace: chosen.value,
    source: chosen.source.trim(),
    explicit: chosen.explicit,
    rest: rest.replace(/\s+/g, ' ').trim(),
  };
}

function trimValue(value: string): string {
  return value.replace(/[.:]+$/, '');
}

function isKey(value: string): boolean {
  return /^(namespace|ns|project)$/i.test(value);
}
