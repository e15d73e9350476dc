import { READABLE_KINDS, type ResourceKind } from '../cluster/types.js';
import { type ParsedKube, parseKubeArgs, tokenizeCommandLine } from '../diagnosis/commands/index.js';
import { type PipeStage, parsePipeStage } from '../diagnosis/commands/pipeline.js';
import { KUBE_PROGRAMS, programOf } from '../diagnosis/commands/programs.js';
import { canonicalKind } from '../diagnosis/kinds.js';

/**
 * A typed kubectl read, read with kubectl's own grammar: which verb, which objects, which selectors, which output.
 * What kubectl would do differently from what calmops can do (watch, a file, an unknown flag) is a refusal with its
 * reason, never a different read.
 */

type OutputFormat = 'table' | 'wide' | 'name' | 'yaml' | 'json' | 'jsonpath' | 'custom-columns';

interface ResourceRequest {
  kind: ResourceKind;
  /** Empty for "every object of the kind". */
  names: string[];
}

export interface GetLike {
  verb: 'get' | 'describe';
  resources: ResourceRequest[];
  /** Several types were asked for (`pods,svc`, `pod/a svc/b`): kubectl prefixes names with their kind. */
  withKind: boolean;
}

export interface LogsRead {
  verb: 'logs';
  /** `pods` for a pod; a workload or Service whose first pod kubectl reads. */
  kind: ResourceKind;
  name?: string;
  labelSelector?: string;
  container?: string;
  allContainers: boolean;
  previous: boolean;
  /** kubectl's default: every line for one pod, 10 per pod with a selector. */
  tail?: number;
  sinceSeconds?: number;
  prefix: boolean;
}

export interface EventsRead {
  verb: 'events';
  for?: { kind: ResourceKind; name: string };
  types: string[];
}

export interface TopRead {
  verb: 'top';
  kind: 'pods' | 'nodes';
  name?: string;
  containers: boolean;
  sortBy?: 'cpu' | 'memory';
}

export interface TypedRead {
  /** The read as typed, pipes included. */
  command: string;
  /** The kubectl part alone, as the answer's title. */
  title: string;
  target: GetLike | LogsRead | EventsRead | TopRead;
  /** Given with `-n`; the session's or the kubeconfig's namespace otherwise. */
  namespace?: string;
  allNamespaces: boolean;
  labelSelector?: string;
  fieldSelector?: string;
  output: { format: OutputFormat; template?: string };
  sortBy?: string;
  showLabels: boolean;
  labelColumns: string[];
  noHeaders: boolean;
  pipeline: PipeStage[];
  /** Pipe stages calmops does not run, answered without them. */
  skippedTools: string[];
}

export type ParseOutcome = { ok: true; read: TypedRead } | { ok: false; refusal: string };

const refuse = (refusal: string): ParseOutcome => ({ ok: false, refusal });

const READABLE: ReadonlySet<string> = new Set(READABLE_KINDS);
const READABLE_LIST = (READABLE_KINDS as readonly string[]).join(', ');

/** The kinds `kubectl get all` lists: kube-apiserver's `all` category, less what calmops never reads. */
const ALL_CATEGORY: readonly ResourceKind[] = [
  'pods',
  'services',
  'daemonsets',
  'deployments',
  'replicasets',
  'statefulsets',
  'horizontalpodautoscalers',
  'cronjobs',
  'jobs',
];

/** Flags each verb understands; any other is refused by name rather than ignored. */
const COMMON_FLAGS = ['n', 'namespace', 'context', 'request-timeout', 'kubeconfig', 'v'];
const VERB_FLAGS: Record<string, readonly string[]> = {
  get: [
    'A',
    'all-namespaces',
    'l',
    'selector',
    'field-selector',
    'o',
    'output',
    'sort-by',
    'show-labels',
    'L',
    'label-columns',
    'no-headers',
    'show-kind',
    'ignore-not-found',
    'chunk-size',
  ],
  describe: ['A', 'all-namespaces', 'l', 'selector', 'show-events', 'chunk-size'],
  logs: [
    'c',
    'container',
    'p',
    'previous',
    'tail',
    'since',
    'l',
    'selector',
    'all-containers',
    'prefix',
    'max-log-requests',
    'ignore-errors',
  ],
  events: ['A', 'all-namespaces', 'for', 'types', 'o', 'output', 'no-headers'],
  top: ['A', 'all-namespaces', 'l', 'selector', 'containers', 'sort-by', 'no-headers', 'use-protocol-buffers'],
};
const REFUSED_FLAGS: Record<string, string> = {
  w: 'watching keeps a read open, which a thread reply cannot do; run it without `-w` for the current state',
  watch: 'watching keeps a read open, which a thread reply cannot do; run it without `--watch` for the current state',
  'watch-only': 'watching keeps a read open, which a thread reply cannot do',
  f: 'following a log keeps a read open, which a thread reply cannot do; run it without `-f` for the lines so far',
  follow: 'following a log keeps a read open, which a thread reply cannot do',
  filename: 'reading objects named in a file needs the file, which calmops does not have',
  raw: 'raw API paths are not reads calmops runs; name a kind instead',
  token: 'credentials are never taken from a thread',
  as: 'calmops reads with its own read-only identity only',
  server: 'calmops reads the cluster this session is about only',
  template: 'Go templates are not supported; use `-o jsonpath=…` or `-o custom-columns=…`',
};

function splitDuration(text: string): number | undefined {
  // Go's time.ParseDuration for the units kubectl users type: 90s, 5m, 1h30m.
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!match || text === '') return undefined;
  const [, h = '0', m = '0', s = '0'] = match;
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
}

function stringFlag(parsed: ParsedKube, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = parsed.flags.get(name);
    if (typeof value === 'string') return value;
  }
  return undefined;
}

function boolFlag(parsed: ParsedKube, ...names: string[]): boolean {
  return names.some((name) => {
    const value = parsed.flags.get(name);
    return value === true || value === 'true';
  });
}

function parseOutput(value: string | undefined): { format: OutputFormat; template?: string } | string {
  if (value === undefined || value === '') return { format: 'table' };
  const eq = value.indexOf('=');
  const head = eq >= 0 ? value.slice(0, eq) : value;
  const template = eq >= 0 ? value.slice(eq + 1) : undefined;
  switch (head) {
    case 'wide':
    case 'name':
    case 'yaml':
    case 'json':
      return { format: head };
    case 'jsonpath':
    case 'custom-columns':
      if (!template)
        return `\`-o ${head}\` needs a template, e.g. \`-o ${head}=${head === 'jsonpath' ? '{.items[*].metadata.name}' : 'NAME:.metadata.name'}\``;
      return { format: head, template };
    case 'jsonpath-as-json':
      return 'jsonpath-as-json is not supported; use `-o jsonpath=…` or `-o json`';
    default:
      return `unable to match a printer suitable for the output format "${value}", allowed formats are: custom-columns,json,jsonpath,name,wide,yaml`;
  }
}

/** `pods`, `pods,svc`, `pod/a`, `pod a b`, `pod/a svc/b`: the resources kubectl's resource builder would visit. */
function resourcesOf(words: readonly string[]): ResourceRequest[] | string {
  if (words.length === 0) return 'you must specify the type of resource to get';
  const requests: ResourceRequest[] = [];
  const kindOf = (word: string): ResourceKind | string => {
    if (word === 'all') return 'all';
    const kind = canonicalKind(word);
    if (kind === 'secrets') return 'Secrets are never read by calmops';
    if (!READABLE.has(kind)) return `calmops does not read ${word}; it reads ${READABLE_LIST}`;
    return kind as ResourceKind;
  };
  if (words.every((w) => w.includes('/'))) {
    for (const word of words) {
      const slash = word.indexOf('/');
      const kind = kindOf(word.slice(0, slash));
      if (kind === 'all' || !READABLE.has(kind)) return kind === 'all' ? 'all/NAME is not a resource' : kind;
      const name = word.slice(slash + 1);
      if (name === '') return `arguments in resource/name form must have a single resource and name`;
      const existing = requests.find((r) => r.kind === kind);
      if (existing) existing.names.push(name);
      else requests.push({ kind: kind as ResourceKind, names: [name] });
    }
    return requests;
  }
  if (words.some((w) => w.includes('/')))
    return 'there is no need to specify a resource type as a separate argument when passing arguments in resource/name form';
  const [types = '', ...names] = words;
  for (const type of types.split(',').filter(Boolean)) {
    const kind = kindOf(type);
    if (kind === 'all') {
      for (const k of ALL_CATEGORY) if (!requests.some((r) => r.kind === k)) requests.push({ kind: k, names: [] });
      continue;
    }
    if (!READABLE.has(kind)) return kind;
    requests.push({ kind: kind as ResourceKind, names: [...names] });
  }
  if (names.length > 0 && requests.length > 1) return 'you may only specify a single resource type when naming objects';
  return requests;
}

function checkFlags(verb: string, parsed: ParsedKube): string | undefined {
  const allowed = new Set([...COMMON_FLAGS, ...(VERB_FLAGS[verb] ?? [])]);
  for (const name of parsed.flags.keys()) {
    // `-f` follows a log, and names a file everywhere else.
    const refused = name === 'f' && verb !== 'logs' ? REFUSED_FLAGS['filename'] : REFUSED_FLAGS[name];
    if (refused) return refused;
    if (!allowed.has(name)) return `calmops does not run \`${verb}\` with \`${name.length === 1 ? '-' : '--'}${name}\``;
  }
  return undefined;
}

/** The first word after the program that is a verb, and the kubectl words that follow it. */
function kubectlWords(words: readonly string[]): { program: string; args: string[] } | undefined {
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string)) i++;
  const program = programOf(words[i] ?? '');
  if (!KUBE_PROGRAMS.has(program)) return undefined;
  return { program, args: words.slice(i + 1) };
}

/**
 * Parses one typed read: `kubectl get pods -n shop -o wide | grep Pending`. Undefined when the line is not a kubectl
 * or oc command at all; a refusal when it is one calmops does not run as typed.
 */
/** `kubectl events`: the object it is --for and the --types it keeps. */
function eventsRead(base: Omit<TypedRead, 'target'>, parsed: ParsedKube, output: TypedRead['output']): ParseOutcome {
  const forText = stringFlag(parsed, 'for');
  let target: EventsRead['for'];
  if (forText !== undefined) {
    const slash = forText.indexOf('/');
    const kind = canonicalKind(slash > 0 ? forText.slice(0, slash) : '');
    if (slash <= 0 || !READABLE.has(kind))
      return refuse(`--for must be KIND/NAME of a kind calmops reads, got "${forText}"`);
    target = { kind: kind as ResourceKind, name: forText.slice(slash + 1) };
  }
  const types = (stringFlag(parsed, 'types') ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  for (const type of types) {
    if (type !== 'Normal' && type !== 'Warning') return refuse(`valid --types are Normal or Warning, got "${type}"`);
  }
  if (output.format !== 'table' && output.format !== 'yaml' && output.format !== 'json') {
    return refuse(
      `\`kubectl events\` prints tables, yaml or json; use \`kubectl get events ${`-o ${output.format}`}\``,
    );
  }
  return { ok: true, read: { ...base, target: { verb: 'events', ...(target ? { for: target } : {}), types } } };
}

/** `kubectl top pod|node`, sorted by cpu or memory. */
function topRead(base: Omit<TypedRead, 'target'>, parsed: ParsedKube, rest: readonly string[]): ParseOutcome {
  const [what = '', name] = rest;
  const kind = canonicalKind(what);
  if (kind !== 'pods' && kind !== 'nodes') return refuse('`kubectl top` reads `pod` or `node`');
  const sort = stringFlag(parsed, 'sort-by');
  if (sort !== undefined && sort !== 'cpu' && sort !== 'memory')
    return refuse(`--sort-by for top is cpu or memory, got "${sort}"`);
  const { sortBy: _ignored, ...withoutSort } = base;
  return {
    ok: true,
    read: {
      ...withoutSort,
      target: {
        verb: 'top',
        kind,
        ...(name ? { name } : {}),
        containers: boolFlag(parsed, 'containers'),
        ...(sort ? { sortBy: sort } : {}),
      },
    },
  };
}

/** The stages after `|` calmops runs, and the tools of those it leaves out; a refusal when a stage cannot be run. */
function pipeStages(
  stages: readonly string[][],
): { pipeline: PipeStage[]; skippedTools: string[] } | { refused: string } {
  const pipeline: PipeStage[] = [];
  const skippedTools: string[] = [];
  for (const stage of stages) {
    const parsed = parsePipeStage(stage);
    if (parsed.kind === 'refused') return { refused: parsed.reason };
    // After a stage calmops does not run, the ones that follow would filter a different text: they are left out too.
    if (parsed.kind === 'stage' && skippedTools.length === 0) pipeline.push(parsed.stage);
    else skippedTools.push(parsed.kind === 'stage' ? parsed.stage.tool : parsed.tool);
  }
  return { pipeline, skippedTools };
}

export function parseTypedRead(line: string): ParseOutcome | undefined {
  const tokens = tokenizeCommandLine(line.trim());
  const [first, ...stages] = tokens.commands;
  if (!first) return undefined;
  const words = kubectlWords(first);
  if (!words) return undefined;
  if (tokens.scan.substitutions.length > 0) return refuse('command substitution is not a read calmops runs');
  if (tokens.operators.some((op) => op !== '|')) {
    const op = tokens.operators.find((o) => o !== '|');
    return refuse(`\`${op}\` runs more than a read; type the read alone`);
  }
  if (tokens.scan.unbalancedQuote) return refuse('the command has an unbalanced quote');
  const piped = pipeStages(stages);
  if ('refused' in piped) return refuse(piped.refused);
  const { pipeline, skippedTools } = piped;
  const parsed = parseKubeArgs(words.args);
  const [verb = '', ...rest] = parsed.positionals;
  const pipeText = stages.length > 0 ? ` | ${stages.map((s) => s.join(' ')).join(' | ')}` : '';
  const title = `${words.program} ${words.args.join(' ')}`.trim();
  const flagsProblem = checkFlags(verb === 'log' ? 'logs' : verb, parsed);
  if (!VERB_FLAGS[verb === 'log' ? 'logs' : verb]) {
    return refuse(
      `\`${words.program} ${verb}\` is not one of the reads calmops answers (get, describe, logs, events, top)`,
    );
  }
  if (flagsProblem) return refuse(flagsProblem);
  const namespace = stringFlag(parsed, 'n', 'namespace');
  const allNamespaces = boolFlag(parsed, 'A', 'all-namespaces');
  const output = parseOutput(stringFlag(parsed, 'o', 'output'));
  if (typeof output === 'string') return refuse(output);
  const labelColumns = (stringFlag(parsed, 'L', 'label-columns') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const base = {
    command: `${title}${pipeText}`,
    title,
    ...(namespace ? { namespace } : {}),
    allNamespaces,
    ...(stringFlag(parsed, 'l', 'selector') !== undefined
      ? { labelSelector: stringFlag(parsed, 'l', 'selector') }
      : {}),
    ...(stringFlag(parsed, 'field-selector') !== undefined
      ? { fieldSelector: stringFlag(parsed, 'field-selector') }
      : {}),
    output,
    ...(stringFlag(parsed, 'sort-by') !== undefined ? { sortBy: stringFlag(parsed, 'sort-by') } : {}),
    showLabels: boolFlag(parsed, 'show-labels'),
    labelColumns,
    noHeaders: boolFlag(parsed, 'no-headers'),
    pipeline,
    skippedTools,
  };
  switch (verb) {
    case 'get':
    case 'describe': {
      if (verb === 'describe' && rest.length === 0)
        return refuse('describe needs a type, e.g. `kubectl describe pods`');
      const resources = resourcesOf(rest);
      if (typeof resources === 'string') return refuse(resources);
      const withKind = resources.length > 1 || (verb === 'get' && boolFlag(parsed, 'show-kind'));
      return { ok: true, read: { ...base, target: { verb, resources, withKind } } };
    }
    case 'logs':
    case 'log':
      return logsRead(base, parsed, rest);
    case 'events':
      return eventsRead(base, parsed, output);
    case 'top':
      return topRead(base, parsed, rest);
    default:
      return refuse(
        `\`${words.program} ${verb}\` is not one of the reads calmops answers (get, describe, logs, events, top)`,
      );
  }
}

function logsRead(base: Omit<TypedRead, 'target'>, parsed: ParsedKube, rest: readonly string[]): ParseOutcome {
  const [word, maybeContainer] = rest;
  let kind: ResourceKind = 'pods';
  let name: string | undefined;
  if (word !== undefined) {
    const slash = word.indexOf('/');
    if (slash > 0) {
      const k = canonicalKind(word.slice(0, slash));
      if (!['pods', 'deployments', 'statefulsets', 'daemonsets', 'jobs', 'replicasets', 'services'].includes(k)) {
        return refuse(`cannot get the logs of ${word.slice(0, slash)}; name a pod, a workload or a service`);
      }
      kind = k as ResourceKind;
      name = word.slice(slash + 1);
    } else {
      name = word;
    }
  }
  const selector = base.labelSelector;
  if (name === undefined && selector === undefined) return refuse('logs need a pod name, TYPE/NAME or `-l selector`');
  if (name !== undefined && selector !== undefined)
    return refuse('only one of a name or a selector (`-l`) can be given');
  const tailText = stringFlag(parsed, 'tail');
  let tail: number | undefined;
  if (tailText !== undefined) {
    if (!/^-?\d+$/.test(tailText)) return refuse(`--tail must be a number, got "${tailText}"`);
    tail = Number(tailText) < 0 ? undefined : Number(tailText);
  } else if (selector !== undefined) {
    tail = 10;
  }
  const sinceText = stringFlag(parsed, 'since');
  let sinceSeconds: number | undefined;
  if (sinceText !== undefined) {
    const seconds = splitDuration(sinceText);
    if (seconds === undefined || seconds <= 0)
      return refuse(`--since must be a duration like 5m or 1h, got "${sinceText}"`);
    sinceSeconds = seconds;
  }
  const container = stringFlag(parsed, 'c', 'container') ?? maybeContainer;
  return {
    ok: true,
    read: {
      ...base,
      labelSelector: undefined,
      target: {
        verb: 'logs',
        kind,
        ...(name !== undefined ? { name } : {}),
        ...(selector !== undefined ? { labelSelector: selector } : {}),
        ...(container !== undefined ? { container } : {}),
        allContainers: boolFlag(parsed, 'all-containers'),
        previous: boolFlag(parsed, 'p', 'previous'),
        ...(tail !== undefined ? { tail } : {}),
        ...(sinceSeconds !== undefined ? { sinceSeconds } : {}),
        prefix: boolFlag(parsed, 'prefix'),
      },
    } as TypedRead,
  };
}
