import type { ClusterReader } from '../cluster/types.js';
import type { TriageEnvelope } from '../triage/envelope/index.js';
import { type TriageLogger, type TriageRequest, triage } from '../triage/index.js';
import {
  AmbiguousNamespaceError,
  InvalidNamespaceError,
  type NamespaceCandidate,
  UnknownIntentError,
} from '../triage/route/index.js';
import { describeScope, type NamespaceScope, namespaceAllowed, scopedReader } from './scope.js';

/**
 * The `triage` tool: ADR-023's entry tool, the person's words in, the envelope out, bounded by the step budget and
 * the deadline the server was started with, and by its namespace scope.
 */

export interface TriageToolArgs {
  text: string;
  namespace?: string | undefined;
  intent?: string | undefined;
  stepBudget?: number | undefined;
}

/** Whether the namespace a triage read is there: the command line's own check, given by whoever starts the server. */
type NamespaceAnswer = { status: 'found' } | { status: 'missing' | 'unconfirmed'; message: string };

/**
 * Watches the reads of one triage, then says whether its namespace exists (a triage of a namespace that is not there
 * reads nothing and must not pass for a healthy one).
 */
export type NamespaceWitness = (reader: ClusterReader) => {
  reader: ClusterReader;
  confirm(namespace: string): Promise<NamespaceAnswer>;
};

export interface TriageToolContext {
  reader: ClusterReader;
  scope: NamespaceScope;
  cluster: string;
  stepBudget: number;
  timeoutMs: number;
  /** A replay's "now": the moment its snapshot was taken. */
  now?: Date;
  witness?: NamespaceWitness;
  logger: TriageLogger;
}

/** A failure the model can act on: the message says what to call next. */
class TriageToolError extends Error {
  override readonly name = 'TriageToolError';
}

export type TriageToolResult = { envelope: TriageEnvelope; text: string };

export async function runTriageTool(args: TriageToolArgs, context: TriageToolContext): Promise<TriageToolResult> {
  if (args.namespace !== undefined) {
    const verdict = namespaceAllowed(args.namespace, context.scope);
    if (!verdict.allowed) throw new TriageToolError(`Not triaged: ${verdict.reason}.`);
  }
  const watched = context.witness?.(scopedReader(context.reader, context.scope));
  const reader = watched?.reader ?? scopedReader(context.reader, context.scope);
  const request: TriageRequest = {
    text: args.text,
    stepBudget: args.stepBudget ?? context.stepBudget,
    timeoutMs: context.timeoutMs,
    cluster: context.cluster,
    ...(args.namespace === undefined ? {} : { namespace: args.namespace }),
    ...(args.intent === undefined ? {} : { intent: args.intent }),
    ...(context.now === undefined ? {} : { now: context.now }),
  };
  let envelope: TriageEnvelope;
  try {
    envelope = await triage(request, { reader, logger: context.logger });
  } catch (error) {
    const meant = request.namespace === undefined ? namespaceMeant(error, context.scope) : undefined;
    if (meant === undefined) throw explain(error, context.scope);
    try {
      envelope = await triage({ ...request, namespace: meant }, { reader, logger: context.logger });
    } catch (retried) {
      throw explain(retried, context.scope);
    }
  }
  const namespace = envelope.routing.namespace;
  const verdict = namespaceAllowed(namespace, context.scope);
  if (!verdict.allowed) {
    // The words named a namespace outside the scope: its reads were refused, so the envelope holds nothing from it.
    throw new TriageToolError(`Not triaged: the request points at namespace "${namespace}": ${verdict.reason}.`);
  }
  const answer = watched === undefined ? { status: 'found' as const } : await watched.confirm(namespace);
  if (answer.status === 'missing') throw new TriageToolError(answer.message);
  const note = answer.status === 'unconfirmed' ? answer.message : undefined;
  return { envelope, text: triageSummaryText(envelope, note) };
}

const inScope = (candidates: readonly NamespaceCandidate[], scope: NamespaceScope) =>
  candidates.filter((c) => namespaceAllowed(c.namespace, scope).allowed);

/**
 * The namespace a request that names none means when the cluster leaves one choice within the scope: words that
 * match no namespace on a server that reads one, or words that match several of which one is in the scope.
 */
function namespaceMeant(error: unknown, scope: NamespaceScope): string | undefined {
  if (scope.kind !== 'list') return undefined;
  if (error instanceof InvalidNamespaceError && error.value === '' && scope.namespaces.length === 1) {
    return scope.namespaces[0];
  }
  if (error instanceof AmbiguousNamespaceError) {
    const candidates = inScope(error.candidates, scope);
    return candidates.length === 1 ? candidates[0]?.namespace : undefined;
  }
  return undefined;
}

function explain(error: unknown, scope: NamespaceScope): Error {
  if (error instanceof AmbiguousNamespaceError) {
    const candidates = inScope(error.candidates, scope);
    const listed = candidates.map((c) => `${c.namespace} (${c.why})`).join('; ');
    return new TriageToolError(
      candidates.length === 0
        ? `No namespace given, and the request matches several, none of them one this server reads (it reads ${describeScope(scope)}): call triage again with "namespace" set to the one meant.`
        : `No namespace given, and the request matches several namespaces: ${listed}. Call triage again with "namespace" set to the one meant.`,
      { cause: error },
    );
  }
  if (error instanceof UnknownIntentError) {
    const near = error.suggestions.length > 0 ? ` Nearest: ${error.suggestions.join(', ')}.` : '';
    return new TriageToolError(
      `${error.message}.${near} Call the intents tool for the ids, or leave "intent" out and say what is wrong.`,
      { cause: error },
    );
  }
  if (error instanceof InvalidNamespaceError && error.value === '') {
    return new TriageToolError(
      `${error.message}. This server reads ${describeScope(scope)}: call triage again with "namespace" set to the one meant.`,
      { cause: error },
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

function ref(r: { kind: string; name: string; namespace?: string | undefined }): string {
  return `${r.kind}/${r.name}${r.namespace ? ` in ${r.namespace}` : ''}`;
}

const percent = (n: number) => `${Math.round(n * 100)}%`;

/**
 * The envelope in a few lines for a model or a person reading the tool's text: what is wrong and what to change,
 * how sure and what could not be seen, and what to do next with each action's safety label. The structured
 * envelope carries everything else.
 */
function triageSummaryText(envelope: TriageEnvelope, note?: string): string {
  const { routing, rubrics, evidence } = envelope;
  const lines = [
    `Triage of ${routing.namespace}${routing.cluster ? ` (${routing.cluster})` : ''}: ${routing.intent}, priority ${rubrics.priority}, confidence ${rubrics.confidence}.`,
    envelope.summary,
  ];
  const top = envelope.rootCause[0];
  lines.push(
    top === undefined
      ? 'Root cause: none found in what was read.'
      : `Root cause: ${top.code} on ${ref(top.resource)} (confidence ${top.confidence}): ${top.summary}`,
  );
  for (const cause of envelope.rootCause.slice(1, 3)) {
    lines.push(`  also #${cause.rank}: ${cause.code} on ${ref(cause.resource)} (confidence ${cause.confidence})`);
  }
  const proof = top === undefined ? undefined : envelope.findings.find((f) => f.code === top.code);
  for (const line of proof?.evidence.slice(0, 3) ?? []) lines.push(`  evidence: ${line}`);
  const missing = evidence.gaps.map((g) => `${g.type} (${g.reason})`);
  lines.push(
    `Evidence: ${percent(evidence.completeness)} of what this intent needs (threshold ${percent(evidence.threshold)})` +
      (missing.length === 0 ? '; nothing missing.' : `; not read: ${missing.join(', ')}.`),
  );
  if (envelope.execution.timedOut) lines.push('The deadline ended the reads early: what was not read is missing.');
  if (note !== undefined) lines.push(`Note: ${note}.`);
  if (envelope.nextActions.length > 0) {
    lines.push('Next actions:');
    for (const action of envelope.nextActions.slice(0, 5)) {
      lines.push(`  [${action.safety}] ${action.command}: ${action.description}`);
    }
  }
  return lines.join('\n');
}
