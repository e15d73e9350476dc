import type { Domain } from '../../triage/envelope/index.js';
import { canonicalKind, domainOfKind, isKnownKind } from '../kinds.js';
import type { RequestTarget, UserRequest } from '../request.js';
import type { ToolClass } from '../state-machine.js';
import { SEVERITY } from './programs.js';

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
  'types',
]);
const SHORT_VALUE_FLAGS = new Set(['n', 'l', 'o', 'c', 'f', 'p', 'k', 's', 'L']);
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

export function flag(parsed: ParsedKube, ...names: string[]): string | true | undefined {
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

export function classifyKube(program: string, args: readonly string[], wrapped: string[]): Omit<UserRequest, 'raw'> {
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
