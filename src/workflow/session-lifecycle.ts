import { StaleVersionError } from '../store/errors.js';
import { resolveEntry, SWEEP_INTENT } from '../triage/route/index.js';
import { type StartSessionInput, StartSessionInputSchema } from './api.js';
import type { WorkflowDeps } from './deps.js';
import { recordEvent } from './events.js';

/**
 * Starting and resuming sessions. A session outlives its executions: each execution is named after the session and
 * a resume counter, so starting is idempotent and a resumed session continues from what DynamoDB holds.
 */

export class SessionClosedError extends Error {
  override readonly name = 'SessionClosedError';
}

/** A new session's first execution name was already taken: never expected, as session ids are unique. */
class SessionStartError extends Error {
  override readonly name = 'SessionStartError';
}

class UnknownIntentForSessionError extends Error {
  override readonly name = 'UnknownIntentForSessionError';
}

export type SessionDeps = Pick<
  WorkflowDeps,
  'store' | 'engine' | 'stateMachines' | 'timeouts' | 'templates' | 'logger' | 'now'
>;

/** The diagnostic execution's input: everything the cluster reader needs travels with it, nothing else. */
function executionInput(
  deps: Pick<SessionDeps, 'timeouts'>,
  session: {
    id: string;
    intent: string;
    namespace: string;
    cluster?: string | undefined;
    scope?: readonly string[] | undefined;
  },
  resume: number,
  text = '',
) {
  return {
    sessionId: session.id,
    resume,
    idleTimeoutSeconds: deps.timeouts.idleTimeoutSeconds,
    approvalTimeoutSeconds: deps.timeouts.approvalTimeoutSeconds,
    session: {
      intent: session.intent,
      namespace: session.namespace,
      cluster: session.cluster ?? 'default',
      text,
      scope: sessionScope(session),
    },
  };
}

/** A session kept from before scopes were recorded reads its own namespace only. */
function sessionScope(session: { namespace: string; scope?: readonly string[] | undefined }): string[] {
  if (session.scope !== undefined && session.scope.length > 0) return [...session.scope];
  return session.namespace === '' ? [] : [session.namespace];
}

export async function startSession(
  deps: SessionDeps,
  input: StartSessionInput,
): Promise<{ sessionId: string; executionArn: string }> {
  const parsed = StartSessionInputSchema.parse(input);
  // Words that name no single intent run the sweep, where the cluster's evidence decides.
  const intent =
    parsed.intent ??
    resolveEntry(parsed.text, deps.templates).intent ??
    (deps.templates.get(SWEEP_INTENT) ? SWEEP_INTENT : undefined);
  if (!intent || !deps.templates.get(intent)) {
    throw new UnknownIntentForSessionError(
      `No triage intent matches "${parsed.text}"${intent ? ` (intent ${intent} is unknown)` : ''}`,
    );
  }
  const now = deps.now();
  const { session, created } = await deps.store.sessions.createIfAbsent(
    {
      ...(parsed.id === undefined ? {} : { id: parsed.id }),
      intent,
      // An empty namespace means "not located yet": the session item keeps one shape either way.
      namespace: parsed.namespace ?? '',
      cluster: parsed.cluster,
      scope: parsed.scope,
      channelId: parsed.channelId,
      threadTs: parsed.threadTs,
      requester: parsed.requester,
    },
    now,
  );
  if (!created && (parsed.id === undefined || session.status !== 'open')) {
    throw new SessionStartError(`Session ${session.id} already exists and is ${session.status}`);
  }
  // Two independent items of the new session: written together, as the Slack acknowledgement waits for this.
  await Promise.all([
    deps.store.threads.bind(parsed.channelId, parsed.threadTs, session.id, now),
    recordEvent(deps, session.id, created ? 'intent_captured' : 'session.start_completed', {
      actor: parsed.requester,
      summary: `${intent} in ${parsed.namespace ?? '(namespace to be located)'} on ${parsed.cluster}`,
      data: {
        intent,
        namespace: parsed.namespace ?? null,
        cluster: parsed.cluster,
        text: parsed.text.slice(0, 500),
        ...(parsed.note ? { note: parsed.note } : {}),
      },
    }),
  ]);
  const started = await deps.engine.start(
    deps.stateMachines.diagnosticArn,
    `${session.id}-0`,
    executionInput(deps, session, 0, parsed.text),
  );
  if (!started.started) {
    if (created) throw new SessionStartError(`Session ${session.id} already has its first execution`);
    // An interrupted start whose first execution was started: the session only lacks the record of it.
    const executionArn = session.executionArn ?? executionArnOf(deps.stateMachines.diagnosticArn, `${session.id}-0`);
    if (session.executionArn === undefined) await recordExecution(deps, session, executionArn);
    return { sessionId: session.id, executionArn };
  }
  const { executionArn } = started;
  await recordExecution(deps, session, executionArn);
  return { sessionId: session.id, executionArn };
}

/** An execution's ARN, as Step Functions forms it from its state machine's and its name. */
function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/**
 * The session is almost always still as it was created, so one conditional write records the execution without
 * reading it first; if the execution has already changed it, the read-modify-write takes over.
 */
async function recordExecution(
  deps: Pick<SessionDeps, 'store' | 'now'>,
  session: { id: string; version: number },
  executionArn: string,
): Promise<void> {
  try {
    await deps.store.sessions.update(session.id, session.version, { executionArn }, deps.now());
  } catch (error) {
    if (!(error instanceof StaleVersionError)) throw error;
    await deps.store.sessions.mutate(session.id, () => ({ executionArn }), { now: deps.now });
  }
}

/** Whether the execution runs; one the endpoint does not know (lost, or evicted) does not. */
export async function executionIsRunning(deps: Pick<SessionDeps, 'engine'>, executionArn: string): Promise<boolean> {
  return (await deps.engine.status(executionArn)) === 'RUNNING';
}

/**
 * Starts the next execution of an open session whose execution has ended (idle timeout, failure, restart of the
 * local stack). Concurrent callers agree on one execution: same name, same input.
 */
export async function resumeSession(
  deps: SessionDeps,
  sessionId: string,
): Promise<{ executionArn: string; resumed: boolean }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const session = await deps.store.sessions.getRequired(sessionId);
    if (session.status !== 'open') throw new SessionClosedError(`Session ${sessionId} is ${session.status}`);
    if (session.executionArn && (await executionIsRunning(deps, session.executionArn))) {
      return { executionArn: session.executionArn, resumed: false };
    }
    const next = session.resumeCount + 1;
    const out = await deps.engine.start(
      deps.stateMachines.diagnosticArn,
      `${sessionId}-${next}`,
      executionInput(deps, session, next),
    );
    // Someone else started (and perhaps already finished) this resume: read the session again.
    if (!out.started) continue;
    const { executionArn } = out;
    try {
      await deps.store.sessions.update(sessionId, session.version, { resumeCount: next, executionArn }, deps.now());
      await recordEvent(deps, sessionId, 'session.resumed', {
        summary: `Resumed in execution ${next}`,
        data: { resume: next },
      });
      return { executionArn, resumed: true };
    } catch (error) {
      if (!(error instanceof StaleVersionError)) throw error;
      const current = await deps.store.sessions.getRequired(sessionId);
      if (current.resumeCount >= next && current.executionArn)
        return { executionArn: current.executionArn, resumed: false };
    }
  }
  throw new Error(`Could not resume session ${sessionId}: it kept changing`);
}
