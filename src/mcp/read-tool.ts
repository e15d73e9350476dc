import type { ClusterReader } from '../cluster/types.js';
import { classifyRequest } from '../diagnosis/commands/index.js';
import { kindsOf, planTypedRead, runPlannedRead } from '../workflow/typed-read.js';
import { judgeRead, type NamespaceScope } from './scope.js';

/**
 * One kubectl-style read, run as a reply in an incident thread runs it (`workflow/typed-read.ts`): kubectl's grammar
 * reads the command line, only a plain read goes on (never a write, an exec, a compound line or a Secret), the
 * server's scope decides where it may look, the read-only reader runs it, and what kubectl would print comes back
 * piped and redacted. This is the one place the MCP server meets the thread's read path.
 */

export interface TypedReadContext {
  reader: ClusterReader;
  scope: NamespaceScope;
  /** The namespace a command that names none reads, as kubectl's current namespace. */
  namespace: string;
  signal?: AbortSignal;
  /** The clock ages are counted from; now by default. */
  now?: Date;
}

/** What the read printed: the command, a one-line summary and kubectl's output lines. */
export interface TypedReadReply {
  status: 'ran';
  title: string;
  outcome: 'ok' | 'empty' | 'failed';
  summary: string;
  lines: string[];
}

interface TypedReadRefusal {
  status: 'refused';
  code: 'not-a-read' | 'malformed' | 'secret' | 'not-readable' | 'out-of-scope';
  message: string;
}

export type TypedReadOutcome = TypedReadReply | TypedReadRefusal;

/** An answer longer than this many lines is cut, and says so: a model's context is not a terminal's scrollback. */
const MAX_LINES = 400;

/** `get pods -n shop` is `kubectl get pods -n shop`: an assistant may leave the program out. */
function asCommandLine(command: string): string {
  const trimmed = command.trim();
  return /^(kubectl|oc)(\s|$)/.test(trimmed) ? trimmed : `kubectl ${trimmed}`;
}

function notARead(raw: string): TypedReadRefusal | undefined {
  const request = classifyRequest(raw);
  if (request.source === 'command' && request.kind === 'read' && request.toolClass === 'read') return undefined;
  const why = request.reasons.length > 0 ? ` (${request.reasons.join('; ')})` : '';
  return {
    status: 'refused',
    code: 'not-a-read',
    message:
      `calmops runs reads only, one command at a time: "${request.raw}" is ${request.kind === 'read' ? 'not a plain read' : `a ${request.kind} request`}${why}. ` +
      'Ask for a get, describe, logs, events or top read, e.g. "kubectl get pods -n shop".',
  };
}

export async function runTypedRead(command: string, context: TypedReadContext): Promise<TypedReadOutcome> {
  const line = asCommandLine(command);
  const plan = planTypedRead(line, { namespace: context.namespace });
  if (plan === undefined || plan.kind === 'refused') {
    const refusal = notARead(line);
    if (refusal !== undefined) return refusal;
    if (plan === undefined) {
      return {
        status: 'refused',
        code: 'not-readable',
        message: `"${line.slice(0, 300)}" is no kubectl read calmops runs; ask for get, describe, logs, events or top, e.g. "kubectl get pods".`,
      };
    }
    const secret = /Secrets? are never read/.test(plan.reason);
    return {
      status: 'refused',
      code: secret ? 'secret' : /quote|unterminated|unbalanced/i.test(plan.reason) ? 'malformed' : 'not-readable',
      message: secret
        ? 'calmops never reads Secrets. Read what uses them instead: the pod or workload, its events or its logs.'
        : `Not run: ${plan.reason}.`,
    };
  }
  const { read } = plan;
  const verb = read.target.verb === 'logs' ? 'logs' : read.target.verb === 'events' ? 'events' : 'list';
  for (const kind of kindsOf(read)) {
    const namespace = read.namespace ?? context.namespace;
    const verdict = judgeRead({ verb, kind, namespace }, context.scope, { allNamespaces: read.allNamespaces });
    if (!verdict.allowed) return { status: 'refused', code: 'out-of-scope', message: `Not run: ${verdict.reason}.` };
  }
  const answer = await runPlannedRead(read, {
    reader: context.reader,
    namespace: context.namespace,
    ...(context.now === undefined ? {} : { now: context.now }),
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });
  const all = answer.text === '' ? [] : answer.text.split('\n');
  const lines = all.slice(0, MAX_LINES);
  const counted = all.length > MAX_LINES ? `first ${MAX_LINES} of ${all.length} lines` : `${all.length} line(s)`;
  const summary = [
    answer.outcome === 'failed' ? 'failed' : answer.outcome === 'empty' ? 'nothing found' : counted,
    answer.note,
  ]
    .filter((part) => part !== undefined)
    .join('; ');
  return { status: 'ran', title: answer.title, outcome: answer.outcome, summary, lines };
}

/** The reply as text: the read and its summary, then what kubectl printed. */
export function readReplyText(reply: TypedReadReply): string {
  const head = `${reply.title}: ${reply.summary}`;
  return reply.lines.length === 0 ? head : `${head}\n${reply.lines.join('\n')}`;
}
