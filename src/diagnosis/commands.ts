import { parse as parseShell } from 'shell-quote';
import { redactText } from '../redact/index.js';
import type { Domain } from '../triage/findings.js';
import { canonicalKind, domainOfKind, isKnownKind } from './kinds.js';
import { classifyPhrase } from './phrases.js';
import type { RequestTarget, UserRequest } from './request.js';
import type { ToolClass } from './state-machine.js';

/**
 * Classifies what a user typed in the incident thread. Command lines are tokenised like a POSIX shell would
 * (quotes, escapes, operators) and read with kubectl/oc grammar; anything else goes to the phrase rules.
 * Nothing here runs anything: the class decides what the gate lets through.
 */

const SEVERITY: Record<ToolClass, number> = { read: 0, inspect: 1, write: 2, destructive: 3 };

const KUBE_PROGRAMS = new Set(['kubectl', 'oc', 'k', 'kubecolor', 'microk8s.kubectl']);
const WRAPPERS = new Set(['sudo', 'time', 'nohup', 'env', 'watch', 'doas']);

// ---------------------------------------------------------------------------------------------------------------
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

function programOf(word: string): string {
  const base = word.split('/').pop() ?? word;
  return base.replace(/\.exe$/i, '').toLowerCase();
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

// ---------------------------------------------------------------------------------------------------------------
// Shell tokenising

export interface ShellScan {
  /** `$(…)`, backticks or process substitution outside single quotes. */
  substitutions: string[];
  unbalancedQuote: boolean;
}

/** Walks the line as a shell would for quoting, to find what shell-quote does not report. */
export function scanShell(line: string): ShellScan {
  const substitutions: string[] = [];
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      continue;
    }
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '`') substitutions.push('backticks');
    else if (ch === '$' && line[i + 1] === '(') substitutions.push('$(…)');
    else if ((ch === '<' || ch === '>') && line[i + 1] === '(' && quote === undefined) {
      substitutions.push(`${ch}(…)`);
    } else if (ch === '"' || ch === "'") {
      if (quote === undefined) quote = ch;
      else if (quote === ch) quote = undefined;
    }
  }
  return { substitutions: [...new Set(substitutions)], unbalancedQuote: quote !== undefined };
}

export interface TokenizedLine {
  /** Simple commands, split at control operators. */
  commands: string[][];
  /** Control and redirection operators in the order they appear. */
  operators: string[];
  scan: ShellScan;
}

export function tokenizeCommandLine(line: string): TokenizedLine {
  const scan = scanShell(line);
  // Keep `$VAR` literal: expanding it would hide what the user wrote.
  const entries = parseShell(line, (key) => `$${key}`);
  const commands: string[][] = [[]];
  const operators: string[] = [];
  for (const [index, entry] of entries.entries()) {
    if (typeof entry === 'string') {
      // shell-quote reads `$(` as a literal `$` followed by a `(` operator; the scan reports the substitution.
      const next = entries[index + 1];
      if (entry === '$' && next !== undefined && typeof next === 'object' && 'op' in next && next.op === '(') continue;
      commands[commands.length - 1]?.push(entry);
    } else if ('comment' in entry) {
      break;
    } else if ('op' in entry) {
      if (entry.op === 'glob') {
        commands[commands.length - 1]?.push((entry as { pattern: string }).pattern);
        continue;
      }
      operators.push(entry.op);
      if (commands[commands.length - 1]?.length) commands.push([]);
    }
  }
  return { commands: commands.filter((c) => c.length > 0), operators, scan };
}

// ---------------------------------------------------------------------------------------------------------------
// kubectl / oc grammar

const LONG_VALUE_FLAGS = new Set([
  'namespace',
  'selector',
  'output',
  'container',
  'filename',
  'context',
  'cluster',
  'user',
  'kubeconfig',
  'as',
  'as-group',
  'as-uid',
  'field-selector',
  'sort-by',
  'tail',
  'since',
  'since-time',
  'replicas',
  'image',
  'type',
  'patch',
  'grace-period',
  'timeout',
  'server',
  'token',
  'request-timeout',
  'template',
  'kustomize',
  'cascade',
  'for',
  'to-revision',
  'limits',
  'requests',
  'port',
  'address',
  'name',
  'current-replicas',
  'resource-version',
  'min',
  'max',
  'cpu-percent',
  'subresource',
  'profile',
  'target',
  'image-pull-policy',
  'env',
  'from',
  'field-manager',
  'label-columns',
  'chunk-size',
  'certificate-authority',
  'client-key',
  'client-certificate',
  'password',
  'username',
  'pod-running-timeout',
  'max-log-requests',
  'limit-bytes',
  'revision',
  'to',
  'selector',
  'overrides',
  'prune-allowlist',
  'node-name',
  'delete-emptydir-data-grace',
]);
const SHORT_VALUE_FLAGS = new Set(['n', 'l', 'o', 'c', 'f', 'p', 'k', 's']);
/** Short flags that are booleans for particular verbs (`logs -p` is --previous, `logs -f` is --follow). */
const VERB_SHORT_BOOLEANS: Record<string, ReadonlySet<string>> = {
  logs: new Set(['p', 'f']),
  log: new Set(['p', 'f']),
};

export interface ParsedKube {
  positionals: string[];
  flags: Map<string, string | true>;
  trailing: string[];
}

/** kubectl/oc arguments (after the program) as positionals and flags; the one reading of kubectl grammar. */
export function parseKubeArgs(args: readonly string[]): ParsedKube {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  const trailing: string[] = [];
  const verb = () => positionals[0];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      trailing.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith('--') && arg.length > 2) {
      const eq = arg.indexOf('=');
      if (eq > 0) {
        flags.set(arg.slice(2, eq), arg.slice(eq + 1));
      } else {
        const name = arg.slice(2);
        const next = args[i + 1];
        if (LONG_VALUE_FLAGS.has(name) && next !== undefined) {
          flags.set(name, next);
          i++;
        } else {
          flags.set(name, true);
        }
      }
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1 && !/^-\d/.test(arg)) {
      const letters = arg.slice(1);
      const first = letters[0] as string;
      const booleans = VERB_SHORT_BOOLEANS[verb() ?? ''];
      const takesValue = SHORT_VALUE_FLAGS.has(first) && !booleans?.has(first);
      const loginUser = first === 'u' && verb() === 'login';
      if (takesValue || loginUser) {
        if (letters.length > 1) {
          flags.set(first, letters.slice(1).replace(/^=/, ''));
        } else if (args[i + 1] !== undefined) {
          flags.set(first, args[i + 1] as string);
          i++;
        } else {
          flags.set(first, true);
        }
      } else {
        for (const letter of letters) flags.set(letter, true);
      }
      continue;
    }
    positionals.push(arg);
  }
  return { positionals, flags, trailing };
}

function flag(parsed: ParsedKube, ...names: string[]): string | true | undefined {
  for (const name of names) {
    const value = parsed.flags.get(name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** `pod/web-1`, `deployment.apps/web`, `pods web-1`, `pods,services`. */
function targetFrom(words: readonly string[]): RequestTarget | undefined {
  const [first, second] = words;
  if (!first) return undefined;
  const slash = first.indexOf('/');
  if (slash > 0) return { kind: canonicalKind(first.slice(0, slash)), name: first.slice(slash + 1) || undefined };
  const kind = first.includes(',') ? first.split(',').map(canonicalKind).join(',') : canonicalKind(first);
  return second && !second.includes('=') ? { kind, name: second } : { kind };
}

interface VerbRule {
  toolClass: ToolClass;
  /** How to find the target: `typed` = `<type> [name]` or `<type>/<name>`, or a fixed kind for the next word. */
  target: 'typed' | 'none' | { kind: string };
  reason?: string;
  escalation?: boolean;
}

const typed = (toolClass: ToolClass, reason?: string): VerbRule => ({ toolClass, target: 'typed', reason });
const fixed = (toolClass: ToolClass, kind: string, reason?: string): VerbRule => ({
  toolClass,
  target: { kind },
  reason,
});
const bare = (toolClass: ToolClass, reason?: string): VerbRule => ({ toolClass, target: 'none', reason });

const KUBE_VERBS: Record<string, VerbRule> = {
  get: typed('read'),
  describe: typed('read'),
  logs: fixed('read', 'pods'),
  log: fixed('read', 'pods'),
  events: bare('read'),
  explain: bare('read'),
  'api-resources': bare('read'),
  'api-versions': bare('read'),
  version: bare('read'),
  'cluster-info': bare('read'),
  diff: bare('read'),
  wait: typed('read'),
  status: bare('read'),
  whoami: bare('read'),
  projects: bare('read'),
  project: bare('read'),
  observe: typed('read'),
  process: bare('read'),
  completion: bare('read'),
  options: bare('read'),
  help: bare('read'),
  plugin: bare('read'),
  kustomize: bare('read'),
  config: bare('read'),
  auth: bare('read'),
  rollout: bare('read'),
  extract: typed('read'),
  apply: bare('write'),
  patch: typed('write'),
  scale: typed('write'),
  edit: typed('write'),
  label: typed('write'),
  annotate: typed('write'),
  replace: bare('write'),
  autoscale: typed('write'),
  expose: typed('write'),
  run: fixed('write', 'pods'),
  'new-app': bare('write'),
  'new-build': bare('write'),
  'start-build': fixed('write', 'buildconfigs'),
  'cancel-build': fixed('write', 'builds'),
  tag: bare('write'),
  'import-image': fixed('write', 'imagestreams'),
  rollback: typed('write'),
  uncordon: fixed('write', 'nodes', 'uncordon puts a node back into scheduling'),
  idle: typed('destructive', 'idling scales the workload to zero'),
  delete: typed('destructive', 'delete removes objects'),
  drain: fixed('destructive', 'nodes', 'drain evicts every pod from the node'),
  cordon: fixed('destructive', 'nodes', 'cordon stops scheduling on the node'),
  taint: typed('destructive', 'taint changes which pods may run on nodes'),
  cp: fixed('destructive', 'pods', 'cp copies files into or out of a container'),
  rsync: fixed('destructive', 'pods', 'rsync copies files into or out of a container'),
  exec: fixed('inspect', 'pods', 'exec opens a process inside a running container'),
  rsh: fixed('inspect', 'pods', 'rsh opens a shell inside a running container'),
  attach: fixed('inspect', 'pods', 'attach connects to a running container'),
  debug: typed('inspect', 'debug starts a debugging pod or container'),
  'port-forward': fixed('inspect', 'pods', 'port-forward opens a tunnel into the cluster'),
  proxy: bare('inspect', 'proxy opens a tunnel to the API server'),
  certificate: bare('destructive', 'certificate approval changes who the cluster trusts'),
  login: { toolClass: 'destructive', target: 'none', reason: 'login handles credentials', escalation: true },
  logout: bare('write'),
  policy: { toolClass: 'destructive', target: 'none', reason: 'policy changes grant permissions', escalation: true },
};

const SUBVERBS: Record<string, Record<string, VerbRule>> = {
  rollout: {
    status: typed('read'),
    history: typed('read'),
    restart: typed('write'),
    undo: typed('write'),
    pause: typed('write'),
    resume: typed('write'),
    latest: typed('write'),
    retry: typed('write'),
    cancel: typed('write'),
  },
  auth: { 'can-i': bare('read'), whoami: bare('read'), reconcile: bare('write') },
  apply: {
    'view-last-applied': typed('read'),
    'edit-last-applied': typed('write'),
    'set-last-applied': bare('write'),
  },
  top: { pods: fixed('read', 'pods'), pod: fixed('read', 'pods'), po: fixed('read', 'pods') },
  adm: {
    top: typed('read'),
    inspect: typed('read'),
    'node-logs': fixed('read', 'nodes'),
    'must-gather': bare('inspect', 'must-gather starts collection pods in the cluster'),
    release: bare('read'),
    drain: fixed('destructive', 'nodes', 'drain evicts every pod from the node'),
    cordon: fixed('destructive', 'nodes', 'cordon stops scheduling on the node'),
    uncordon: fixed('write', 'nodes', 'uncordon puts a node back into scheduling'),
    taint: typed('destructive', 'taint changes which pods may run on nodes'),
    prune: bare('destructive', 'prune deletes objects'),
    upgrade: bare('read'),
  },
};

function kubeTopTarget(positionals: readonly string[]): RequestTarget | undefined {
  const what = positionals[1];
  if (!what) return undefined;
  const kind = canonicalKind(what);
  return positionals[2] ? { kind, name: positionals[2] } : { kind };
}

function inferDomain(target: RequestTarget | undefined): Domain | undefined {
  if (!target) return undefined;
  return domainOfKind(target.kind.split(',')[0] ?? target.kind);
}

function classifyKube(program: string, args: readonly string[], wrapped: string[]): Omit<UserRequest, 'raw'> {
  const parsed = parseKubeArgs(args);
  const [verb0, sub] = parsed.positionals;
  const reasons: string[] = [];
  let escalation = wrapped.includes('sudo') || wrapped.includes('doas');
  if (escalation) reasons.push('runs with sudo');

  let verb = verb0 ?? '';
  let rule: VerbRule | undefined;
  let rest = parsed.positionals.slice(1);

  if (!verb0) {
    rule = bare('read');
    verb = 'help';
  } else if (verb0 === 'create') {
    if (sub === 'token') {
      rule = { toolClass: 'destructive', target: { kind: 'serviceaccounts' }, escalation: true };
      reasons.push('create token mints a service account credential');
      verb = 'create token';
      rest = parsed.positionals.slice(2);
    } else if (sub && isKnownKind(sub) && !flag(parsed, 'f', 'filename')) {
      // `create deployment web --image=…`, `create secret generic x`: the subcommand is the kind.
      const generic = ['generic', 'tls', 'docker-registry'].includes(parsed.positionals[2] ?? '');
      const name = parsed.positionals[generic ? 3 : 2];
      rule = { toolClass: 'write', target: { kind: canonicalKind(sub) } };
      rest = name ? [name] : [];
    } else {
      rule = bare('write');
    }
  } else if (verb0 === 'top') {
    rule = bare('read');
    verb = 'top';
    return finishKube(verb, rule, kubeTopTarget(parsed.positionals), parsed, reasons, escalation);
  } else if (verb0 === 'set') {
    rule = typed('write');
    verb = sub ? `set ${sub}` : 'set';
    rest = parsed.positionals.slice(2);
  } else if (verb0 === 'policy' && sub === 'who-can') {
    rule = bare('read');
    verb = 'policy who-can';
  } else if (verb0 === 'certificate') {
    rule = KUBE_VERBS.certificate;
    verb = sub ? `certificate ${sub}` : 'certificate';
  } else if (verb0 === 'config') {
    verb = sub ? `config ${sub}` : 'config';
    rule = bare('read');
    if (flag(parsed, 'raw') === true) {
      rule = bare('destructive');
      reasons.push('config view --raw prints credentials');
      escalation = true;
    }
  } else if (verb0 === 'adm') {
    const admRule = sub ? SUBVERBS.adm?.[sub] : undefined;
    verb = sub ? `adm ${sub}` : 'adm';
    rest = parsed.positionals.slice(2);
    if (sub === 'policy') {
      const action = parsed.positionals[2] ?? '';
      if (action === 'who-can') rule = bare('read');
      else {
        rule = { toolClass: 'destructive', target: 'none', escalation: true };
        reasons.push('adm policy changes who may do what');
      }
    } else if (sub === 'upgrade' && (parsed.positionals.length > 2 || flag(parsed, 'to', 'to-latest', 'to-image'))) {
      rule = bare('destructive', 'adm upgrade starts a cluster upgrade');
    } else {
      rule = admRule ?? bare('destructive', `oc adm ${sub ?? ''} is an administrative change`.replace('  ', ' '));
    }
  } else if (SUBVERBS[verb0] && verb0 !== 'top' && sub && SUBVERBS[verb0]?.[sub]) {
    rule = SUBVERBS[verb0]?.[sub];
    verb = `${verb0} ${sub}`;
    rest = parsed.positionals.slice(2);
  } else {
    rule = KUBE_VERBS[verb0];
  }

  if (!rule) {
    rule = bare('destructive');
    reasons.push(`unknown ${program} command "${verb0}"`);
  }
  if (rule.reason) reasons.push(rule.reason);
  if (rule.escalation) escalation = true;

  let target: RequestTarget | undefined;
  if (rule.target === 'typed') target = targetFrom(rest);
  else if (rule.target !== 'none') {
    const word = rest[0];
    if (word?.includes('/')) target = targetFrom([word]);
    else target = word ? { kind: rule.target.kind, name: word } : { kind: rule.target.kind };
  }
  if (verb0 === 'logs' || verb0 === 'log') {
    const word = rest[0];
    target = word?.includes('/') ? targetFrom([word]) : word ? { kind: 'pods', name: word } : undefined;
  }
  return finishKube(verb, rule, target, parsed, reasons, escalation);
}

function finishKube(
  verb: string,
  rule: VerbRule,
  target: RequestTarget | undefined,
  parsed: ParsedKube,
  reasons: string[],
  escalationIn: boolean,
): Omit<UserRequest, 'raw'> {
  let toolClass = rule.toolClass;
  let escalation = escalationIn;
  const upgrade = (to: ToolClass, reason: string) => {
    if (SEVERITY[to] > SEVERITY[toolClass]) toolClass = to;
    reasons.push(reason);
  };

  const namespaceFlag = flag(parsed, 'n', 'namespace');
  const namespace = typeof namespaceFlag === 'string' ? namespaceFlag : undefined;
  const allNamespaces = flag(parsed, 'A', 'all-namespaces') !== undefined;
  const mutating = SEVERITY[toolClass] >= SEVERITY.write;

  if (flag(parsed, 'force') !== undefined && flag(parsed, 'force') !== 'false') {
    upgrade('destructive', '--force skips graceful handling');
  }
  const grace = flag(parsed, 'grace-period');
  if (grace === '0' || flag(parsed, 'now') !== undefined) {
    upgrade('destructive', '--grace-period=0 kills without a graceful shutdown');
  }
  if (mutating && flag(parsed, 'all') !== undefined) upgrade('destructive', '--all widens the change to every object');
  if (mutating && allNamespaces) upgrade('destructive', '--all-namespaces widens the change to every namespace');
  if (mutating && flag(parsed, 'l', 'selector') !== undefined && verb === 'delete') {
    reasons.push('a label selector may match more than intended');
  }
  if (flag(parsed, 'prune') !== undefined && mutating)
    upgrade('destructive', '--prune deletes objects not in the input');
  const as = flag(parsed, 'as', 'as-group', 'as-uid');
  if (as !== undefined && verb !== 'auth can-i') {
    escalation = true;
    upgrade('destructive', 'impersonates another identity');
  }
  if (typeof flag(parsed, 'token') === 'string') {
    escalation = true;
    upgrade('destructive', 'passes a bearer token on the command line');
  }
  if (verb === 'delete' && target?.kind === 'namespaces') reasons.push('deleting a namespace removes everything in it');

  let replicas: number | undefined;
  const replicasFlag = flag(parsed, 'replicas');
  if (typeof replicasFlag === 'string' && /^\d+$/.test(replicasFlag)) {
    replicas = Number(replicasFlag);
    if (replicas === 0 && verb === 'scale')
      upgrade('destructive', 'scales to zero replicas (takes the workload offline)');
  }

  const dryRun = flag(parsed, 'dry-run');
  if ((dryRun === 'client' || dryRun === 'server' || dryRun === true) && mutating && toolClass !== 'inspect') {
    toolClass = 'read';
    reasons.push(`--dry-run${dryRun === true ? '' : `=${dryRun}`} changes nothing`);
  }
  // kubectl prints the environment and returns before patching when --list is given, even with variables named.
  const list = flag(parsed, 'list');
  if (verb === 'set env' && list !== undefined && list !== 'false' && toolClass === 'write') {
    toolClass = 'read';
    reasons.push('--list only prints the environment');
  }

  if (target?.kind === 'secrets' && toolClass === 'read') reasons.push('Secrets are never read by calmops');

  const kind = toolClass === 'read' ? 'read' : toolClass === 'write' ? 'write' : 'dangerous';
  const domain = inferDomain(target);
  return {
    kind,
    toolClass,
    verb,
    resource: target,
    namespace,
    allNamespaces,
    domain,
    source: 'command',
    reasons,
    escalation,
    malformed: false,
    replicas,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// helm and host tools

const HELM_READ = new Set([
  'list',
  'ls',
  'status',
  'get',
  'history',
  'hist',
  'show',
  'inspect',
  'template',
  'search',
  'version',
  'env',
  'lint',
  'verify',
  'diff',
  'help',
]);
const HELM_WRITE = new Set(['install', 'upgrade', 'rollback', 'repo', 'dependency', 'dep', 'pull', 'push', 'plugin']);
const HELM_DESTRUCTIVE = new Set(['uninstall', 'delete', 'del', 'un']);

function classifyHelm(args: readonly string[]): Omit<UserRequest, 'raw'> {
  const parsed = parseKubeArgs(args);
  const [verb = 'help', sub] = parsed.positionals;
  const reasons: string[] = [];
  let toolClass: ToolClass;
  if (HELM_READ.has(verb)) toolClass = 'read';
  else if (HELM_WRITE.has(verb)) toolClass = verb === 'repo' && sub === 'list' ? 'read' : 'write';
  else if (HELM_DESTRUCTIVE.has(verb)) {
    toolClass = 'destructive';
    reasons.push('helm uninstall removes every object of the release');
  } else {
    toolClass = 'destructive';
    reasons.push(`unknown helm command "${verb}"`);
  }
  if (toolClass !== 'read' && flag(parsed, 'force') !== undefined) {
    toolClass = 'destructive';
    reasons.push('--force replaces objects instead of patching them');
  }
  if (flag(parsed, 'dry-run') !== undefined && toolClass !== 'read') {
    toolClass = 'read';
    reasons.push('--dry-run changes nothing');
  }
  const namespaceFlag = flag(parsed, 'n', 'namespace');
  const release = verb === 'get' || verb === 'show' ? parsed.positionals[2] : sub;
  return {
    kind: toolClass === 'read' ? 'read' : toolClass === 'write' ? 'write' : 'dangerous',
    toolClass,
    verb: `helm ${verb}`,
    resource:
      release && !['list', 'ls', 'search', 'repo'].includes(verb) ? { kind: 'helmreleases', name: release } : undefined,
    namespace: typeof namespaceFlag === 'string' ? namespaceFlag : undefined,
    allNamespaces: flag(parsed, 'A', 'all-namespaces') !== undefined,
    domain: 'platform',
    source: 'command',
    reasons,
    escalation: false,
    malformed: false,
  };
}

interface HostTool {
  domain: Domain;
  /** Subcommands (first, or first two words joined) that only look. `*` = the tool only looks. */
  reads: readonly string[];
  inspect?: readonly string[];
}

const HOST_TOOLS: Record<string, HostTool> = {
  rm: { domain: 'compute', reads: [] },
  rmdir: { domain: 'compute', reads: [] },
  mv: { domain: 'compute', reads: [] },
  dd: { domain: 'storage', reads: [] },
  mkfs: { domain: 'storage', reads: [] },
  'mkfs.ext4': { domain: 'storage', reads: [] },
  'mkfs.xfs': { domain: 'storage', reads: [] },
  wipefs: { domain: 'storage', reads: [] },
  shred: { domain: 'storage', reads: [] },
  truncate: { domain: 'storage', reads: [] },
  reboot: { domain: 'compute', reads: [] },
  shutdown: { domain: 'compute', reads: [] },
  poweroff: { domain: 'compute', reads: [] },
  halt: { domain: 'compute', reads: [] },
  kill: { domain: 'compute', reads: [] },
  killall: { domain: 'compute', reads: [] },
  pkill: { domain: 'compute', reads: [] },
  chmod: { domain: 'compute', reads: [] },
  chown: { domain: 'compute', reads: [] },
  ssh: { domain: 'compute', reads: [], inspect: ['*'] },
  scp: { domain: 'compute', reads: [] },
  systemctl: {
    domain: 'compute',
    reads: ['status', 'show', 'is-active', 'is-enabled', 'is-failed', 'list-units', 'cat'],
  },
  journalctl: { domain: 'compute', reads: ['*'] },
  crictl: {
    domain: 'compute',
    reads: ['ps', 'pods', 'images', 'logs', 'inspect', 'inspectp', 'inspecti', 'stats', 'info', 'version'],
    inspect: ['exec', 'attach'],
  },
  iptables: { domain: 'networking', reads: ['-L', '-S', '--list', '-nL', '-nvL'] },
  ceph: {
    domain: 'storage',
    reads: [
      'status',
      'health',
      'df',
      '-s',
      '-w',
      'versions',
      'osd tree',
      'osd df',
      'osd status',
      'pg stat',
      'mon stat',
    ],
  },
  rbd: { domain: 'storage', reads: ['ls', 'list', 'info', 'status', 'du'] },
  etcdctl: {
    domain: 'platform',
    reads: ['endpoint', 'member list', 'get', 'alarm list', 'version', 'check perf'],
  },
  curl: { domain: 'networking', reads: ['*'] },
  wget: { domain: 'networking', reads: ['*'] },
  dig: { domain: 'networking', reads: ['*'] },
  nslookup: { domain: 'networking', reads: ['*'] },
  host: { domain: 'networking', reads: ['*'] },
  ping: { domain: 'networking', reads: ['*'] },
  traceroute: { domain: 'networking', reads: ['*'] },
  nc: { domain: 'networking', reads: ['*'] },
  openssl: { domain: 'networking', reads: ['*'] },
  grep: { domain: 'compute', reads: ['*'] },
  cat: { domain: 'compute', reads: ['*'] },
  tail: { domain: 'compute', reads: ['*'] },
  head: { domain: 'compute', reads: ['*'] },
  less: { domain: 'compute', reads: ['*'] },
  jq: { domain: 'compute', reads: ['*'] },
  df: { domain: 'storage', reads: ['*'] },
  du: { domain: 'storage', reads: ['*'] },
  free: { domain: 'compute', reads: ['*'] },
  uptime: { domain: 'compute', reads: ['*'] },
};

function classifyHostTool(program: string, args: readonly string[], wrapped: string[]): Omit<UserRequest, 'raw'> {
  const tool = HOST_TOOLS[program] as HostTool;
  const words = args.filter((a) => !a.startsWith('-') || tool.reads.includes(a));
  const one = words[0] ?? '';
  const two = words.slice(0, 2).join(' ');
  const escalation = wrapped.includes('sudo') || wrapped.includes('doas');
  const reasons: string[] = escalation ? ['runs with sudo'] : [];
  let toolClass: ToolClass;
  if (tool.inspect?.includes('*') || tool.inspect?.includes(one)) {
    toolClass = 'inspect';
    reasons.push(`${program} opens a live session on a host or container`);
  } else if (tool.reads.includes('*') || tool.reads.includes(one) || tool.reads.includes(two)) {
    toolClass = 'read';
  } else {
    toolClass = 'destructive';
    reasons.push(`${program}${one ? ` ${one}` : ''} changes a host, a disk or a process outside Kubernetes`);
  }
  if (program === 'curl' && args.some((a) => /^-(X|-request)$/.test(a) || /^--?d(ata.*)?$/.test(a))) {
    toolClass = 'write';
    reasons.push('curl sends a request that may change state');
  }
  return {
    kind: toolClass === 'read' ? 'read' : toolClass === 'write' ? 'write' : 'dangerous',
    toolClass,
    verb: one && !one.startsWith('-') && tool.reads.length > 0 && tool.reads[0] !== '*' ? `${program} ${one}` : program,
    resource: undefined,
    domain: tool.domain,
    allNamespaces: false,
    source: 'command',
    reasons,
    escalation,
    malformed: false,
  };
}

// ---------------------------------------------------------------------------------------------------------------
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
