import type { Domain } from '../../triage/envelope/index.js';
import type { UserRequest } from '../request.js';
import type { ToolClass } from '../state-machine.js';

interface HostTool {
  domain: Domain;
  /** Subcommands (first, or first two words joined) that only look. `*` = the tool only looks. */
  reads: readonly string[];
  inspect?: readonly string[];
}

export const HOST_TOOLS: Record<string, HostTool> = {
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

export function classifyHostTool(
  program: string,
  args: readonly string[],
  wrapped: string[],
): Omit<UserRequest, 'raw'> {
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
