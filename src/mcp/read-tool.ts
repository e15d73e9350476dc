import type { ClusterReader } from '../cluster/types.js';
import { classifyRequest } from '../diagnosis/commands/index.js';
import { canonicalKind } from '../diagnosis/kinds.js';
import { readSpecFromRequest, runRead } from '../workflow/reads.js';
import { judgeRead, type NamespaceScope } from './scope.js';

/**
 * One kubectl-style read, run as a reply in an incident thread runs it: the thread's parser reads the command line,
 * only a plain read goes on (never a write, an exec, a compound line or a Secret), the scope decides where it may
 * look, the read-only reader runs it, and what comes back is redacted and clipped as the thread shows it. This is
 * the one place the MCP server meets the thread's read path; nothing else in src/mcp knows how a read is parsed or
 * run.
 */

export interface TypedReadContext {
  reader: ClusterReader;
  scope: NamespaceScope;
  /** The namespace a command that names none reads, as kubectl's current namespace. */
  namespace: string;
  signal?: AbortSignal;
}

/** What the read printed, as a thread reply shows it: a title, a one-line summary and the lines under it. */
export interface TypedReadReply {
  status: 'ran';
  title: string;
  outcome: 'ok' | 'empty' | 'failed';
  summary: string;
  lines: string[];
}

export interface TypedReadRefusal {
  status: 'refused';
  code: 'not-a-read' | 'malformed' | 'secret' | 'not-readable' | 'out-of-scope';
  message: string;
}

export type TypedReadOutcome = TypedReadReply | TypedReadRefusal;

const READABLE =
  'pods, events, logs, PVCs, PVs, StorageClasses, nodes, deployments, replicasets, statefulsets, daemonsets, ' +
  'services, endpoints, ingresses, routes, configmaps and the other kinds triage reads';

/** `get pods -n shop` is `kubectl get pods -n shop`: an assistant may leave the program out. */
function asCommandLine(command: string): string {
  const trimmed = command.trim();
  return /^(kubectl|oc)(\s|$)/.test(trimmed) ? trimmed : `kubectl ${trimmed}`;
}

export async function runTypedRead(command: string, context: TypedReadContext): Promise<TypedReadOutcome> {
  const request = classifyRequest(asCommandLine(command));
  if (request.source !== 'command' || request.kind !== 'read' || request.toolClass !== 'read') {
    const why = request.reasons.length > 0 ? ` (${request.reasons.join('; ')})` : '';
    return {
      status: 'refused',
      code: 'not-a-read',
      message:
        `calmops runs reads only, one command at a time: "${request.raw}" is ${request.kind === 'read' ? 'not a plain read' : `a ${request.kind} request`}${why}. ` +
        'Ask for a get, describe, logs or events read, e.g. "kubectl get pods -n shop".',
    };
  }
  if (request.malformed) {
    return {
      status: 'refused',
      code: 'malformed',
      message: `"${request.raw}" could not be read cleanly (${request.reasons.join('; ') || 'unbalanced quote'}); fix the quoting and ask again.`,
    };
  }
  if (request.resource !== undefined && canonicalKind(request.resource.kind) === 'secrets') {
    return {
      status: 'refused',
      code: 'secret',
      message: 'calmops never reads Secrets. Read what uses them instead: the pod or workload, its events or its logs.',
    };
  }
  const spec = readSpecFromRequest(request, context.namespace);
  if (spec === undefined) {
    return {
      status: 'refused',
      code: 'not-readable',
      message: `"${request.raw}" names nothing calmops can read. It reads ${READABLE}; name one, e.g. "kubectl get pods" or "kubectl logs <pod>".`,
    };
  }
  const verdict = judgeRead(spec, context.scope, { allNamespaces: request.allNamespaces });
  if (!verdict.allowed) return { status: 'refused', code: 'out-of-scope', message: `Not run: ${verdict.reason}.` };
  const result = await runRead(context.reader, spec, context.signal);
  return { status: 'ran', ...result };
}

/** The reply as text, as the thread shows it: the read and its summary, then its lines. */
export function readReplyText(reply: TypedReadReply): string {
  const head = `${reply.title}: ${reply.summary}`;
  return reply.lines.length === 0 ? head : `${head}\n${reply.lines.join('\n')}`;
}
