import { type ParsedKube, parseKubeArgs, tokenizeCommandLine } from '../diagnosis/commands/index.js';
import { canonicalKind, isClusterScoped, isKnownKind } from '../diagnosis/kinds.js';

/**
 * Matching what someone typed against the steps of an approved plan. kubectl accepts one change in many spellings
 * (`-n orders`, `--namespace=orders`, `deploy/x`, `deployment x`, flags in any order, `oc` for `kubectl`); the
 * matcher reads both sides with the same kubectl grammar the gate uses and compares what they do, not how they are
 * written. A `<placeholder>` in a step (a value the plan leaves to the person) matches any value.
 */

const KUBE_PROGRAMS = new Set(['kubectl', 'oc', 'k', 'kubecolor', 'microk8s.kubectl']);
/** Verbs whose second word is part of the verb (`rollout undo`, `set env`). */
const TWO_WORD_VERBS = new Set(['rollout', 'set', 'adm', 'auth', 'top', 'config']);
/** Verbs that act on one kind without naming it. */
const IMPLIED_KIND: Readonly<Record<string, string>> = {
  logs: 'pods',
  log: 'pods',
  cordon: 'nodes',
  uncordon: 'nodes',
  drain: 'nodes',
  'adm cordon': 'nodes',
  'adm uncordon': 'nodes',
  'adm drain': 'nodes',
  exec: 'pods',
};
/** Flags that change how the output looks or how long kubectl waits, not what the command does. */
const COSMETIC_FLAGS = new Set([
  'output',
  'watch',
  'timeout',
  'request-timeout',
  'v',
  'context',
  'cluster',
  'user',
  'kubeconfig',
  'record',
  'tail',
  'since',
  'show-labels',
  'no-headers',
  'label-columns',
  'L',
  'sort-by',
  'field-manager',
  'follow',
]);
const LONG_NAMES: Readonly<Record<string, string>> = {
  n: 'namespace',
  l: 'selector',
  c: 'container',
  o: 'output',
  f: 'filename',
  A: 'all-namespaces',
  w: 'watch',
  k: 'kustomize',
};
const VERB_LONG_NAMES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  logs: { p: 'previous', f: 'follow' },
  log: { p: 'previous', f: 'follow' },
};

const PLACEHOLDER = /<([a-z][a-z0-9-]*)>/g;
const HOLE = '\u0000';

/** One kubectl/oc invocation, in a form where two spellings of the same change compare equal. */
export interface KubeInvocation {
  verb: string;
  kind?: string;
  name?: string;
  namespace?: string;
  args: string[];
  flags: Map<string, string | true>;
}

/**
 * The kubectl/oc invocations of a command line; anything else in it (pipes into grep, redirections) is not part of
 * what the cluster sees. `<placeholders>` survive as holes that match any value.
 */
export function kubeInvocations(command: string): KubeInvocation[] {
  // The shell would read `<value>` as a redirection: hide placeholders before tokenising.
  const bare = command
    .trim()
    .replace(/^`+|`+$/g, '')
    .replace(/^\$\s+/, '');
  const masked = bare.replace(PLACEHOLDER, (_m, name: string) => `${HOLE}${name}${HOLE}`);
  const out: KubeInvocation[] = [];
  for (const words of tokenizeCommandLine(masked).commands) {
    const program = (words[0] ?? '').split('/').pop() ?? '';
    if (!KUBE_PROGRAMS.has(program)) continue;
    out.push(normalize(parseKubeArgs(words.slice(1))));
  }
  return out;
}

function normalize(parsed: ParsedKube): KubeInvocation {
  const positionals = [...parsed.positionals];
  const first = positionals.shift() ?? '';
  const verb = TWO_WORD_VERBS.has(first) && positionals[0] ? `${first} ${positionals.shift()}` : first;
  let kind: string | undefined;
  let name: string | undefined;
  const head = positionals[0];
  if (head?.includes('/') && !head.includes('=')) {
    const [k, n] = head.split('/', 2) as [string, string];
    kind = canonicalKind(k);
    name = n;
    positionals.shift();
  } else if (IMPLIED_KIND[verb]) {
    kind = IMPLIED_KIND[verb];
    if (head && !head.includes('=')) name = positionals.shift();
  } else if (head && (isKnownKind(head) || head.includes(HOLE))) {
    const word = positionals.shift() as string;
    kind = word.includes(HOLE) ? word : canonicalKind(word);
    if (positionals[0] && !positionals[0].includes('=')) name = positionals.shift();
  }
  const flags = new Map<string, string | true>();
  for (const [key, value] of parsed.flags) {
    const long = VERB_LONG_NAMES[verb]?.[key] ?? LONG_NAMES[key] ?? (key === 'p' ? 'patch' : key);
    if (long === 'namespace' || COSMETIC_FLAGS.has(long)) continue;
    flags.set(long, typeof value === 'string' ? squeeze(value) : value);
  }
  const ns = parsed.flags.get('namespace') ?? parsed.flags.get('n');
  const namespace = typeof ns === 'string' && !(kind && isClusterScoped(kind)) ? ns : undefined;
  return {
    verb,
    ...(kind ? { kind } : {}),
    ...(name ? { name } : {}),
    ...(namespace ? { namespace } : {}),
    args: [...positionals, ...parsed.trailing].map(squeeze).sort(),
    flags,
  };
}

/** JSON patches and file paths are compared without the whitespace and `./` that do not change them. */
function squeeze(value: string): string {
  return value.replace(/\s+/g, '').replace(/^\.\//, '');
}

function holeToPattern(value: string): RegExp {
  const parts = value.split(new RegExp(`${HOLE}[a-z0-9-]*${HOLE}`));
  return new RegExp(`^${parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+')}$`);
}

/** A plan's value (perhaps with holes) against what was typed. */
function sameValue(plan: string | true | undefined, typed: string | true | undefined): boolean {
  if (plan === typed) return true;
  if (typeof plan !== 'string' || typeof typed !== 'string') return false;
  return plan.includes(HOLE) && holeToPattern(plan).test(typed);
}

interface InvocationMatch {
  namespaceAssumed: boolean;
}

function matchInvocation(plan: KubeInvocation, typed: KubeInvocation): InvocationMatch | undefined {
  if (plan.verb !== typed.verb || !sameValue(plan.kind, typed.kind)) return undefined;
  if (!sameValue(plan.name, typed.name)) return undefined;
  let namespaceAssumed = false;
  if (plan.namespace !== typed.namespace) {
    // kubectl falls back to the context's namespace: typed without -n, the plan's namespace is assumed.
    if (plan.namespace === undefined || typed.namespace !== undefined) return undefined;
    namespaceAssumed = true;
  }
  if (plan.args.length !== typed.args.length) return undefined;
  const remaining = [...typed.args];
  for (const arg of plan.args) {
    const at = remaining.findIndex((t) => sameValue(arg, t));
    if (at === -1) return undefined;
    remaining.splice(at, 1);
  }
  const keys = new Set([...plan.flags.keys(), ...typed.flags.keys()]);
  for (const key of keys) if (!sameValue(plan.flags.get(key), typed.flags.get(key))) return undefined;
  return { namespaceAssumed };
}

/** Every kubectl invocation typed is one of the text's, in order (a step may chain several). */
function matchText(planText: string, typed: readonly KubeInvocation[]): InvocationMatch | undefined {
  const plan = kubeInvocations(planText);
  if (plan.length === 0 || typed.length === 0 || typed.length > plan.length) return undefined;
  let from = 0;
  let namespaceAssumed = false;
  for (const t of typed) {
    let found: InvocationMatch | undefined;
    for (; from < plan.length && !found; from += 1) found = matchInvocation(plan[from] as KubeInvocation, t);
    if (!found) return undefined;
    namespaceAssumed ||= found.namespaceAssumed;
  }
  return { namespaceAssumed };
}

export interface PlanStepMatch {
  /** Index into `plan.steps`; the plan views show it as step `stepIndex + 1`. */
  stepIndex: number;
  /**
   * Whether the steps this one needs are done (for a rollback: whether the step it undoes was done). Without
   * `completed`, only a step that needs nothing is in order.
   */
  inOrder: boolean;
  /** The step's own command, or its rollback. */
  via: 'command' | 'rollback';
  /** The command named no namespace; the step's namespace was assumed to be the context's. */
  namespaceAssumed: boolean;
}

export interface MatchOptions {
  /** Indexes of the steps already run, in any order. */
  completed?: readonly number[];
}

/**
 * Which approved step a typed command is, if any. The step's command wins over another step's rollback; among
 * several equal steps the first one not yet completed is chosen. Pure: the caller keeps what was completed.
 */
/** The parts of a step the matcher reads: a `RemediationPlan`'s steps fit, and so do an `ApprovedPlan`'s. */
export interface MatchableStep {
  id: string;
  command: string;
  rollback?: string | undefined;
  needs?: readonly string[];
}

export function matchPlanStep(
  plan: { steps: readonly MatchableStep[] },
  command: string,
  options: MatchOptions = {},
): PlanStepMatch | undefined {
  const typed = kubeInvocations(command);
  if (typed.length === 0) return undefined;
  const completed = new Set(options.completed ?? []);
  const candidates: PlanStepMatch[] = [];
  for (const via of ['command', 'rollback'] as const) {
    plan.steps.forEach((step, stepIndex) => {
      const text = via === 'command' ? step.command : step.rollback;
      const found = text ? matchText(text, typed) : undefined;
      if (!found) return;
      const inOrder =
        via === 'rollback'
          ? completed.has(stepIndex)
          : (step.needs ?? []).every((need) => {
              const at = plan.steps.findIndex((s) => s.id === need);
              return at !== -1 && completed.has(at);
            });
      candidates.push({ stepIndex, inOrder, via, namespaceAssumed: found.namespaceAssumed });
    });
    const open = candidates.filter((c) => !completed.has(c.stepIndex) || via === 'rollback');
    const chosen = open[0] ?? candidates[0];
    if (chosen) return chosen;
  }
  return undefined;
}
