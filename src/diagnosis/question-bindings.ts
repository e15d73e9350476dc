/**
 * The questions an envelope offers (and people ask in their own words) that calmops answers by computing over what
 * it reads, each bound to the computation that answers it (src/workflow/question-reads.ts) and the kind it reads
 * first (for the session's scope). Pure: matching words to a question, nothing more.
 */

const QUESTION_IDS = [
  'free-capacity',
  'crash-vs-rollout',
  'liveness-kills',
  'container-ports',
  'endpoint-readiness',
  'recent-changes',
  'default-storageclass',
  'memory-limit',
] as const;
export type QuestionId = (typeof QUESTION_IDS)[number];

interface Binding {
  id: QuestionId;
  /** The kind whose namespace scope the computation stays in. */
  kind: string;
  clusterScoped: boolean;
  pattern: RegExp;
}

const BINDINGS: readonly Binding[] = [
  {
    id: 'free-capacity',
    kind: 'nodes',
    clusterScoped: true,
    pattern:
      /\b(?:free|spare|left|available|remaining)\b.*\bcapacity\b|\bcapacity\b.*\b(?:free|left)\b|\bwhich nodes?\b.*\b(?:fit|room)\b/i,
  },
  {
    id: 'crash-vs-rollout',
    kind: 'pods',
    clusterScoped: false,
    pattern: /\bcrash\w*\b.*\b(?:rollout|deploy\w*|release)\b|\b(?:rollout|deploy\w*)\b.*\bcrash\w*/i,
  },
  { id: 'liveness-kills', kind: 'pods', clusterScoped: false, pattern: /\bliveness\b|\bprobe\b.*\bkill/i },
  {
    id: 'container-ports',
    kind: 'services',
    clusterScoped: false,
    pattern: /\bwhich port\b|\bport\b.*\blisten|\blisten\w*\b.*\bport\b|\btarget ?port\b/i,
  },
  {
    id: 'endpoint-readiness',
    kind: 'endpoints',
    clusterScoped: false,
    pattern: /\b(?:ready )?endpoints?\b|\bpods? (?:are )?(?:not )?ready\b.*\bservice\b/i,
  },
  {
    id: 'recent-changes',
    kind: 'events',
    clusterScoped: false,
    pattern: /\bwhat changed\b|\bchanges?\b.*\blast (?:\d+ )?(?:hour|minutes?|day)|\bwhat happened\b.*\blast\b/i,
  },
  {
    id: 'default-storageclass',
    kind: 'storageclasses',
    clusterScoped: true,
    pattern: /\bdefault\b.*\bstorage ?class\b|\bstorage ?class\b.*\bdefault\b/i,
  },
  {
    id: 'memory-limit',
    kind: 'pods',
    clusterScoped: false,
    pattern: /\bmemory limit\b|\bhit (?:its|the) (?:memory )?limit\b|\busing more memory\b|\bmemory usage\b/i,
  },
];

export interface BoundQuestion {
  id: QuestionId;
  kind: string;
  clusterScoped: boolean;
  /** The span the question asks about, in minutes ("in the last hour" → 60), when it names one. */
  windowMinutes?: number;
}

function windowOf(text: string): number | undefined {
  const match = /\blast (\d+)?\s*(minute|min|hour|day)s?\b/i.exec(text);
  if (!match) return undefined;
  const n = match[1] ? Number(match[1]) : 1;
  const unit = (match[2] ?? '').toLowerCase();
  return unit.startsWith('min') ? n : unit === 'hour' ? n * 60 : n * 1440;
}

/** A question's binding by its id (as a read carries it to the cluster reader). */
export function bindingOf(id: string): BoundQuestion | undefined {
  const binding = BINDINGS.find((b) => b.id === id);
  return binding ? { id: binding.id, kind: binding.kind, clusterScoped: binding.clusterScoped } : undefined;
}

/** The computation a question is bound to, or undefined when calmops answers it another way. */
export function bindQuestion(text: string): BoundQuestion | undefined {
  const binding = BINDINGS.find((b) => b.pattern.test(text));
  if (!binding) return undefined;
  const window = windowOf(text);
  return {
    id: binding.id,
    kind: binding.kind,
    clusterScoped: binding.clusterScoped,
    ...(window !== undefined ? { windowMinutes: window } : {}),
  };
}
