import type { UserRequest } from '../request.js';
import type { ToolClass } from '../state-machine.js';
import { flag, parseKubeArgs } from './kubectl.js';

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

export function classifyHelm(args: readonly string[]): Omit<UserRequest, 'raw'> {
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
