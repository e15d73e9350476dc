import type { ReadSpec } from '../cluster/read-spec.js';
import { RESOURCES } from '../cluster/resources.js';
import type { ClusterReader } from '../cluster/types.js';
import { applyPipeline } from '../diagnosis/commands/pipeline.js';
import { extractCommandLines, normalizeSlackText } from '../diagnosis/commands/slack-text.js';
import { parseTypedRead, type TypedRead } from '../kubectl/parse.js';
import { runKubectl } from '../kubectl/run.js';
import { clip, SUMMARY_MAX } from '../limits.js';
import { redactText } from '../redact/index.js';
import { checkReadScope, type ReadScope, type ScopeDecision } from './read-scope.js';

/**
 * One typed read, start to finish, for every surface that runs one (a thread, the CLI, an MCP tool):
 *
 *   text → parsed read (kubectl's grammar) → scope check → read-only reader → kubectl's output → pipes → redaction
 *
 * The thread runs the two halves on either side of the state machine (`planTypedRead` where the session is known,
 * `runPlannedRead` in the cluster reader); `answerTypedRead` runs both in one call.
 */

export type TypedReadPlan =
  | {
      kind: 'read';
      read: TypedRead;
      /** The read as the state machine carries it to the cluster reader. */
      spec: ReadSpec;
    }
  | {
      kind: 'refused';
      /** The read as typed. */
      title: string;
      /** Why it is not run, in a sentence a person can act on. */
      reason: string;
      /** Set when the read leaves the session's namespaces, with the kind and namespace it would have read. */
      scope?: Extract<ScopeDecision, { allowed: false }>;
      readKind?: string;
      namespace?: string;
    };

export interface PlanOptions {
  /** The namespace a read without `-n` reads: the session's, or the kubeconfig context's. */
  namespace: string;
  /** The namespaces the read may reach; omitted where nothing narrows them (a person's own kubeconfig). */
  scope?: ReadScope;
}

/**
 * The kubectl command line in a message (the message itself, or its one code span or block), or undefined when the
 * message holds none or several.
 */
export function typedCommandLine(text: string): string | undefined {
  const lines = extractCommandLines(normalizeSlackText(text));
  return lines.length === 1 ? lines[0] : undefined;
}

/** The kinds a typed read reads (its resources, pods for logs, events for events). */
export function kindsOf(read: TypedRead): string[] {
  const target = read.target;
  switch (target.verb) {
    case 'get':
    case 'describe':
      return target.resources.map((r) => r.kind);
    case 'logs':
      return ['pods'];
    case 'events':
      return ['events'];
    case 'top':
      return [target.kind];
  }
}

function nameOf(read: TypedRead): string | undefined {
  const target = read.target;
  switch (target.verb) {
    case 'get':
    case 'describe':
      return target.resources[0]?.names[0];
    case 'logs':
    case 'top':
      return target.name;
    case 'events':
      return target.for?.name;
  }
}

/** Parses a typed line and judges it against the scope. Undefined when the line is no kubectl command. */
export function planTypedRead(line: string, options: PlanOptions): TypedReadPlan | undefined {
  const parsed = parseTypedRead(line);
  if (parsed === undefined) return undefined;
  const title = line.trim().slice(0, 300);
  if (!parsed.ok) return { kind: 'refused', title, reason: parsed.refusal };
  const { read } = parsed;
  const namespace = read.namespace ?? options.namespace;
  const verb = read.target.verb === 'logs' ? 'logs' : read.target.verb === 'events' ? 'events' : 'list';
  if (options.scope) {
    for (const kind of kindsOf(read)) {
      const decision = checkReadScope({ verb, kind, namespace }, options.scope, { allNamespaces: read.allNamespaces });
      if (!decision.allowed) {
        return { kind: 'refused', title, reason: decision.reason, scope: decision, readKind: kind, namespace };
      }
    }
  }
  const first = kindsOf(read)[0] ?? 'pods';
  const target = read.target;
  const name = nameOf(read);
  const namespaced = first in RESOURCES ? RESOURCES[first as keyof typeof RESOURCES].namespaced : true;
  const spec: ReadSpec = {
    title,
    verb: target.verb === 'logs' ? 'logs' : target.verb === 'events' ? 'events' : name ? 'get' : 'list',
    kind: first,
    ...(name ? { name: name.slice(0, 253) } : {}),
    ...(namespaced && !read.allNamespaces ? { namespace } : {}),
    ...(read.labelSelector ? { labelSelector: read.labelSelector.slice(0, 500) } : {}),
    ...(read.fieldSelector ? { fieldSelector: read.fieldSelector.slice(0, 500) } : {}),
    command: read.command.slice(0, SUMMARY_MAX),
  };
  return { kind: 'read', read, spec };
}

export interface TypedReadAnswer {
  outcome: 'ok' | 'empty' | 'failed';
  /** The read as typed. */
  title: string;
  /** What kubectl prints (its output, pipes applied, then its own messages), redacted. */
  text: string;
  /** What the answer leaves out and why ("I can't run `jq` here; this is the read without it"). */
  note?: string;
}

export interface RunOptions {
  reader: ClusterReader;
  /** The namespace a read without `-n` reads. */
  namespace: string;
  /** The clock ages are counted from; now by default. */
  now?: Date;
  signal?: AbortSignal;
}

/** Runs a planned read (or a spec carrying one) with the reader, as kubectl would against the same API server. */
export async function runPlannedRead(read: TypedRead, options: RunOptions): Promise<TypedReadAnswer> {
  const output = await runKubectl(read, {
    reader: options.reader,
    namespace: options.namespace,
    now: options.now ?? new Date(),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  // The shell pipes kubectl's output into the filters; its own messages go to the terminal unfiltered.
  const piped = applyPipeline(output.stdout, read.pipeline);
  const text = redactText(`${piped}${output.stderr}`.replace(/\n+$/, ''));
  const outcome = output.failed && piped.trim() === '' ? 'failed' : piped.trim() === '' ? 'empty' : 'ok';
  const note =
    read.skippedTools.length > 0
      ? `I can't run ${read.skippedTools.map((t) => `\`${t}\``).join(', ')} here; this is the read without ${read.skippedTools.length > 1 ? 'them' : 'it'}.`
      : undefined;
  return { outcome, title: read.command, text, ...(note ? { note } : {}) };
}

export type TypedReadResult = TypedReadAnswer | (Extract<TypedReadPlan, { kind: 'refused' }> & { outcome: 'refused' });

/**
 * Answers one typed read: `kubectl get pods -n shop -o wide | grep Pending` gives what kubectl prints against the
 * same API server, scoped and redacted. Undefined when the text holds no kubectl command.
 */
export async function answerTypedRead(
  text: string,
  options: RunOptions & { scope?: ReadScope },
): Promise<TypedReadResult | undefined> {
  const line = typedCommandLine(text);
  if (line === undefined) return undefined;
  const plan = planTypedRead(line, {
    namespace: options.namespace,
    ...(options.scope ? { scope: options.scope } : {}),
  });
  if (plan === undefined) return undefined;
  if (plan.kind === 'refused') return { ...plan, outcome: 'refused' };
  return runPlannedRead(plan.read, options);
}

/** A thread reply holds this many characters of an answer; the rest goes into the attached file. */
const REPLY_CHARS = 2600;
const REPLY_LINES = 40;

/** The first lines of an answer that fit a reply, and how many lines it has in all. */
export function replyLines(text: string): { lines: string[]; total: number } {
  const all = text === '' ? [] : text.split('\n');
  const lines: string[] = [];
  let size = 0;
  for (const line of all) {
    const clipped = clip(line, 400);
    if (lines.length >= REPLY_LINES || size + clipped.length + 1 > REPLY_CHARS) break;
    lines.push(clipped);
    size += clipped.length + 1;
  }
  return { lines, total: all.length };
}
