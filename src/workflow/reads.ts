import { conditionOf } from '../cluster/conditions.js';
import type { ReadSpec } from '../cluster/read-spec.js';
import {
  ClusterReadError,
  type ClusterReader,
  type KubeObject,
  READABLE_KINDS,
  type ResourceKind,
} from '../cluster/types.js';
import { byCodePoint } from '../code-point-order.js';
import { canonicalKind, isClusterScoped, kindLabel, LOG_OWNER_KINDS } from '../diagnosis/kinds.js';
import { bindingOf, type QuestionId } from '../diagnosis/question-bindings.js';
import type { UserRequest } from '../diagnosis/request.js';
import { clip } from '../limits.js';
import { redactText } from '../redact/index.js';
import type { Hypothesis } from '../store/workflow-records.js';
import type { RankedCause } from '../triage/envelope/index.js';
import { logTarget } from './log-target.js';
import { answerBoundQuestion } from './question-reads.js';
import { planTypedRead, replyLines, runPlannedRead } from './typed-read.js';

/**
 * Targeted reads: what a thread message or a hypothesis asks to look at, as a small spec the cluster reader can run
 * without any other context, and the compact result that travels back through the state machine (a few dozen
 * lines, never raw objects).
 */

const MAX_RESULT_LINES = 30;
const MAX_LINE = 220;

export interface ReadResult {
  title: string;
  outcome: 'ok' | 'empty' | 'failed';
  summary: string;
  lines: string[];
  /** A typed read's whole answer as kubectl prints it (bounded), for the file attached to the reply. */
  text?: string;
  /** What the answer leaves out and why. */
  note?: string;
}

/** The most of a typed read's answer that travels through the state machine. */
const MAX_TEXT = 48 * 1024;

/** A question bound to a computation (`spec.question`): its answer, the fact asked for first. */
async function runQuestionSpec(reader: ClusterReader, spec: ReadSpec, signal?: AbortSignal): Promise<ReadResult> {
  const id = spec.question as QuestionId;
  const binding = bindingOf(id);
  if (binding === undefined)
    return { title: spec.title, outcome: 'failed', summary: 'not a question calmops answers', lines: [] };
  const lines = await answerBoundQuestion(
    { ...binding, ...(spec.windowMinutes ? { windowMinutes: spec.windowMinutes } : {}) },
    { reader, namespace: spec.namespace ?? 'default', now: new Date(), ...(signal ? { signal } : {}) },
  );
  const [first = 'no answer', ...rest] = lines.map((l) => redactText(l));
  return {
    title: spec.title,
    outcome: 'ok',
    summary: readLine(first),
    lines: rest.slice(0, MAX_RESULT_LINES).map((l) => l.slice(0, MAX_LINE)),
  };
}

/** A typed read (`spec.command`), answered as kubectl would: the first lines for the reply, the whole text kept. */
async function runTypedSpec(reader: ClusterReader, spec: ReadSpec, signal?: AbortSignal): Promise<ReadResult> {
  const plan = planTypedRead(spec.command ?? '', { namespace: spec.namespace ?? 'default' });
  if (plan === undefined || plan.kind === 'refused') {
    return {
      title: spec.title,
      outcome: 'failed',
      summary: plan?.kind === 'refused' ? plan.reason : 'not a kubectl read',
      lines: [],
    };
  }
  const answer = await runPlannedRead(plan.read, {
    reader,
    namespace: spec.namespace ?? 'default',
    ...(signal ? { signal } : {}),
  });
  const { lines, total } = replyLines(answer.text);
  const kept = answer.text.length > MAX_TEXT ? answer.text.slice(0, MAX_TEXT) : answer.text;
  const summary =
    answer.outcome === 'ok'
      ? lines.length < total
        ? `first ${lines.length} of ${total} lines`
        : `${total} line${total === 1 ? '' : 's'}`
      : answer.outcome === 'empty'
        ? (answer.text.split('\n')[0] ?? 'nothing found') || 'nothing found'
        : (answer.text.split('\n')[0] ?? 'the read failed');
  return {
    title: spec.title,
    outcome: answer.outcome,
    summary: summary.slice(0, 500),
    lines,
    ...(lines.length < total ? { text: kept } : {}),
    ...(answer.note ? { note: answer.note } : {}),
  };
}

function isReadable(kind: string): kind is ResourceKind {
  return (READABLE_KINDS as readonly string[]).includes(kind);
}

function flagValue(argv: readonly string[] | undefined, ...flags: string[]): string | undefined {
  if (!argv) return undefined;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    for (const flag of flags) {
      if (word === flag) return argv[i + 1];
      if (word.startsWith(`${flag}=`)) return word.slice(flag.length + 1);
    }
  }
  return undefined;
}

/** The read a thread message asks for, or undefined when it names nothing calmops can read. */
export function readSpecFromRequest(request: UserRequest, sessionNamespace: string): ReadSpec | undefined {
  const namespace = request.namespace ?? sessionNamespace;
  const kind = request.resource ? canonicalKind(request.resource.kind) : undefined;
  const name = request.resource?.name;
  const title = request.argv ? request.argv.join(' ') : request.raw;
  if (request.verb === 'logs') {
    // `kubectl logs deployment/web` and `kubectl logs -l app=web` read a pod the workload or selector picks.
    const selector = flagValue(request.argv, '-l', '--selector');
    if (!name && !selector) return undefined;
    const tail = Number(flagValue(request.argv, '--tail'));
    return {
      title,
      verb: 'logs',
      kind: kind !== undefined && LOG_OWNER_KINDS.includes(kind) && name ? kind : 'pods',
      ...(name ? { name } : { labelSelector: selector }),
      namespace,
      ...(flagValue(request.argv, '-c', '--container')
        ? { container: flagValue(request.argv, '-c', '--container') }
        : {}),
      ...(request.argv?.some((w) => w === '-p' || w === '--previous') ? { previous: true } : {}),
      tailLines: Number.isInteger(tail) && tail > 0 ? Math.min(tail, 200) : 50,
    };
  }
  if (request.verb === 'events' || kind === 'events') {
    return { title, verb: 'events', kind: 'events', namespace, ...(name && kind !== 'events' ? { name } : {}) };
  }
  if (!kind || !isReadable(kind)) return undefined;
  const labelSelector = flagValue(request.argv, '-l', '--selector');
  return {
    title,
    verb: name ? 'get' : 'list',
    kind,
    ...(name ? { name } : {}),
    ...(isClusterScoped(kind) ? {} : { namespace }),
    ...(labelSelector ? { labelSelector } : {}),
  };
}

/** The reads that test one ranked cause: the object itself, its events, and for pods their logs. */
export function hypothesesFromCauses(causes: readonly RankedCause[], namespace: string): Hypothesis[] {
  return causes.slice(0, 5).map((cause) => {
    const kind = canonicalKind(cause.resource.kind);
    const ns = isClusterScoped(kind) ? undefined : (cause.resource.namespace ?? namespace);
    const label = `${kindLabel(kind)} ${cause.resource.name}`;
    const reads: ReadSpec[] = [];
    if (isReadable(kind)) {
      reads.push({
        title: `get ${kind} ${cause.resource.name}`,
        verb: 'get',
        kind,
        name: cause.resource.name,
        ...(ns ? { namespace: ns } : {}),
      });
    }
    reads.push({
      title: `events of ${label}`,
      verb: 'events',
      kind: 'events',
      name: cause.resource.name,
      ...(ns ? { namespace: ns } : { namespace }),
    });
    if (kind === 'pods') {
      reads.push({
        title: `logs ${cause.resource.name}`,
        verb: 'logs',
        kind: 'pods',
        name: cause.resource.name,
        namespace: ns ?? namespace,
        tailLines: 30,
      });
    }
    return {
      id: `h${cause.rank}`,
      rank: cause.rank,
      code: cause.code,
      summary: cause.summary.slice(0, 1000),
      confidence: cause.confidence,
      resource: cause.resource,
      reads,
      status: 'proposed' as const,
    };
  });
}

/** One line of a read's answer: on one line, redacted, clipped. */
function readLine(line: string): string {
  return clip(redactText(line.replace(/\s+/g, ' ').trim()), MAX_LINE);
}

/** One line per object, with the fields an on-call engineer looks at first. */
function describeObject(obj: KubeObject): string {
  const name = obj.metadata.name;
  const kind = canonicalKind(obj.kind ?? '');
  switch (kind) {
    case 'pods': {
      const statuses = (obj.status?.containerStatuses ?? []) as Array<{
        ready?: boolean;
        restartCount?: number;
        state?: Record<string, { reason?: string }>;
      }>;
      const ready = statuses.filter((s) => s.ready).length;
      const restarts = statuses.reduce((n, s) => n + (s.restartCount ?? 0), 0);
      const waiting = statuses
        .map((s) => s.state?.['waiting']?.reason ?? s.state?.['terminated']?.reason)
        .find(Boolean);
      return `${name} ${obj.status?.phase ?? '?'} ready ${ready}/${statuses.length} restarts ${restarts}${waiting ? ` ${waiting}` : ''}`;
    }
    case 'persistentvolumeclaims':
      return `${name} ${obj.status?.phase ?? '?'} storageClass=${obj.spec?.storageClassName ?? '(default)'} request=${obj.spec?.resources?.requests?.storage ?? '?'}`;
    case 'nodes':
      return `${name} Ready=${conditionOf(obj, 'Ready')?.status ?? '?'}${obj.spec?.unschedulable ? ' SchedulingDisabled' : ''}`;
    case 'deployments':
    case 'statefulsets':
      return `${name} ready ${obj.status?.readyReplicas ?? 0}/${obj.spec?.replicas ?? '?'}`;
    case 'events':
      return `${obj['type'] ?? ''} ${obj['reason'] ?? ''} ${(obj['involvedObject'] as { kind?: string; name?: string } | undefined)?.kind ?? ''}/${(obj['involvedObject'] as { name?: string } | undefined)?.name ?? ''}: ${obj['message'] ?? ''}`;
    case 'services':
      return `${name} ${obj.spec?.type ?? 'ClusterIP'} selector=${JSON.stringify(obj.spec?.selector ?? {})}`;
    case 'storageclasses':
      return `${name} provisioner=${obj['provisioner'] ?? '?'}${obj.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true' ? ' (default)' : ''}`;
    default:
      return `${kindLabel(kind)} ${name}`;
  }
}

function eventTime(obj: KubeObject): string {
  return String(obj['lastTimestamp'] ?? obj['eventTime'] ?? obj.metadata.creationTimestamp ?? '');
}

/** The log of the pod a read names, or of the pod chosen for the workload it names; the previous run when asked. */
async function readLogs(reader: ClusterReader, spec: ReadSpec, signal?: AbortSignal): Promise<ReadResult> {
  const base = { title: spec.title };
  const { namespace } = spec;
  if (!namespace) return { ...base, outcome: 'failed', summary: 'logs need a namespace', lines: [] };
  let pod = canonicalKind(spec.kind) === 'pods' ? spec.name : undefined;
  let chosen = '';
  if (pod === undefined) {
    const target = await logTarget(
      reader,
      {
        kind: spec.kind,
        namespace,
        ...(spec.name === undefined ? {} : { name: spec.name }),
        ...(spec.labelSelector === undefined ? {} : { labelSelector: spec.labelSelector }),
      },
      signal,
    );
    if (target.pod === undefined) return { ...base, outcome: 'empty', summary: target.note, lines: [] };
    pod = target.pod;
    chosen = `${target.note}: `;
  }
  const read = (previous: boolean) =>
    reader.logs(
      {
        namespace,
        pod,
        ...(spec.container ? { container: spec.container } : {}),
        ...(previous ? { previous: true } : {}),
        tailLines: spec.tailLines ?? 50,
      },
      signal,
    );
  let text: string;
  let current = '';
  try {
    text = await read(spec.previous === true);
  } catch (error) {
    // A container that never restarted has no previous one: its current log is the answer then.
    if (!spec.previous || !(error instanceof ClusterReadError)) throw error;
    text = await read(false);
    current = 'no previous container, current one: ';
  }
  current = `${chosen}${current}`;
  // Redacted as a whole before it is split: a private key or a YAML block spans lines.
  const lines = redactText(text)
    .split('\n')
    .filter((l) => l.trim() !== '');
  if (lines.length === 0) return { ...base, outcome: 'empty', summary: `${current}no log lines`, lines: [] };
  return {
    ...base,
    outcome: 'ok',
    summary: `${current}${lines.length} log line(s)${lines.length > MAX_RESULT_LINES ? `, last ${MAX_RESULT_LINES} shown` : ''}`,
    lines: lines.slice(-MAX_RESULT_LINES).map(readLine),
  };
}

/** Events in a namespace, or about one object, oldest first. */
async function readEvents(reader: ClusterReader, spec: ReadSpec, signal?: AbortSignal): Promise<ReadResult> {
  const base = { title: spec.title };
  const events = await reader.list(
    {
      kind: 'events',
      ...(spec.namespace ? { namespace: spec.namespace } : {}),
      ...(spec.name ? { fieldSelector: `involvedObject.name=${spec.name}` } : {}),
      maxItems: 200,
    },
    signal,
  );
  const sorted = [...events].sort((a, b) => byCodePoint(eventTime(a), eventTime(b)));
  if (sorted.length === 0) return { ...base, outcome: 'empty', summary: 'no events', lines: [] };
  const warnings = sorted.filter((e) => e['type'] === 'Warning').length;
  return {
    ...base,
    outcome: 'ok',
    summary: `${sorted.length} event(s), ${warnings} warning(s)`,
    lines: sorted.slice(-MAX_RESULT_LINES).map((e) => readLine(describeObject({ ...e, kind: 'Event' }))),
  };
}

/** One object by name: its one-line description and its conditions. */
async function readOne(
  reader: ClusterReader,
  spec: ReadSpec,
  kind: ResourceKind,
  name: string,
  signal?: AbortSignal,
): Promise<ReadResult> {
  const base = { title: spec.title };
  const obj = await reader.get({ kind, name, ...(spec.namespace ? { namespace: spec.namespace } : {}) }, signal);
  const conditions = (
    (obj.status?.conditions ?? []) as Array<{ type?: string; status?: string; reason?: string; message?: string }>
  ).map((c) =>
    readLine(`condition ${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`),
  );
  return {
    ...base,
    outcome: 'ok',
    summary: readLine(describeObject(obj)),
    lines: conditions.slice(0, MAX_RESULT_LINES),
  };
}

export async function runRead(reader: ClusterReader, spec: ReadSpec, signal?: AbortSignal): Promise<ReadResult> {
  const base = { title: spec.title };
  if (spec.command !== undefined) return runTypedSpec(reader, spec, signal);
  if (spec.question !== undefined) return runQuestionSpec(reader, spec, signal);
  try {
    if (spec.verb === 'logs') return await readLogs(reader, spec, signal);
    if (spec.verb === 'events') return await readEvents(reader, spec, signal);
    if (!isReadable(spec.kind)) {
      return { ...base, outcome: 'failed', summary: `${spec.kind} cannot be read by calmops`, lines: [] };
    }
    if (spec.verb === 'get' && spec.name) return await readOne(reader, spec, spec.kind, spec.name, signal);
    const objects = await reader.list(
      {
        kind: spec.kind,
        ...(spec.namespace ? { namespace: spec.namespace } : {}),
        ...(spec.labelSelector ? { labelSelector: spec.labelSelector } : {}),
        maxItems: 200,
      },
      signal,
    );
    if (objects.length === 0) return { ...base, outcome: 'empty', summary: `no ${spec.kind}`, lines: [] };
    return {
      ...base,
      outcome: 'ok',
      summary: `${objects.length} ${spec.kind}${objects.length > MAX_RESULT_LINES ? `, first ${MAX_RESULT_LINES} shown` : ''}`,
      lines: objects.slice(0, MAX_RESULT_LINES).map((o) => readLine(describeObject(o))),
    };
  } catch (error) {
    if (error instanceof ClusterReadError || (error instanceof Error && error.name === 'ReadOnlyViolationError')) {
      const reason = (error as { reason?: string }).reason ?? 'invalid';
      return { ...base, outcome: 'failed', summary: readLine(`${reason}: ${error.message}`), lines: [] };
    }
    throw error;
  }
}
