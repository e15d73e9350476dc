import * as z from 'zod';
import type { ApprovalRecord } from '../store/approvals.js';
import type { SessionRecord } from '../store/sessions.js';
import { replyView } from '../views/intervention.js';
import { breakGlassRevoke } from './break-glass/break-glass-steps.js';
import { postToSession } from './common.js';
import type { WorkflowDeps } from './deps.js';
import { recordEvent } from './events.js';
import { executionIsRunning, resumeSession } from './session-lifecycle.js';
import { tryDeliver } from './wait-delivery.js';

/**
 * The reconciler: every way a session can wait has an owner that outlives any one process. Each run walks the open
 * sessions and repairs what a crash, a lost run or a failed execution left behind:
 * - a session whose execution is gone gets a fresh one from the stored session;
 * - buffered input with no live waiter is handed over (a claimed wait whose sender died is re-sent);
 * - an approval whose task token is dead is withdrawn, and the thread is told;
 * - an override past its deadline that nobody revoked is revoked, and its mandatory review started.
 * Every repair is a conditional write or an idempotent call, so two runs at once (a slow run overlapping the next
 * schedule, or the scheduled run beside a delivery) repair each thing once.
 */

export const ReconcilePayload = z.object({
  step: z.literal('reconcile'),
  /** Bounds one run; the rest waits for the next run. */
  maxSessions: z.number().int().min(1).max(5000).optional(),
});

/** A revoke this late after the deadline means the break-glass run that owns it is not going to. */
const OVERRIDE_GRACE_MS = 10_000;

export interface ReconcileReport {
  sessions: number;
  resumed: string[];
  redelivered: string[];
  approvalsWithdrawn: string[];
  overridesRevoked: string[];
  failures: { sessionId: string; error: string }[];
}

async function tokenIsAlive(deps: Pick<WorkflowDeps, 'engine'>, token: string): Promise<boolean> {
  return (await deps.engine.heartbeat(token)) === 'sent';
}

const WITHDRAWN_TEXT: Record<string, string> = {
  handoff: 'The handoff question above lost its workflow run, so it was withdrawn: nothing was decided.',
  'plan-review':
    'The plan review above lost its workflow run, so it was withdrawn: nothing was approved. Ask for the plan again when ready.',
  'break-glass': 'The break-glass request above lost its workflow run, so it was withdrawn: no override was granted.',
  postmortem: 'The post-incident review above lost its workflow run; it was withdrawn and will be asked again.',
};

async function withdrawDeadApprovals(
  deps: WorkflowDeps,
  session: SessionRecord,
  report: ReconcileReport,
): Promise<void> {
  const pending = await deps.store.approvals.listPendingForSession(session.id);
  for (const approval of pending) {
    if (approval.token === undefined || (await tokenIsAlive(deps, approval.token))) continue;
    // Cancel is conditional on `pending`: a click that won meanwhile keeps its decision.
    if (!(await deps.store.approvals.cancel(approval.id, deps.now()))) continue;
    report.approvalsWithdrawn.push(approval.id);
    await recordEvent(deps, session.id, 'approval.withdrawn', {
      summary: `${approval.kind} ${approval.id}: its task token is no longer waited on`,
      data: { approvalId: approval.id, kind: approval.kind },
    });
    await postToSession(deps, session, replyView(session.id, `:information_source: ${withdrawnText(approval)}`));
  }
}

function withdrawnText(approval: ApprovalRecord): string {
  return WITHDRAWN_TEXT[approval.kind] ?? `The ${approval.kind} request above lost its workflow run and was withdrawn.`;
}

/**
 * Revokes an override whose break-glass run did not (the run was lost, or failed), and starts the mandatory review
 * under the name the run would have used, so whichever comes second finds it started.
 */
async function revokeOverdueOverride(
  deps: WorkflowDeps,
  session: SessionRecord,
  report: ReconcileReport,
): Promise<void> {
  const override = session.override;
  if (!override || Date.parse(override.expiresAt) + OVERRIDE_GRACE_MS > deps.now().getTime()) return;
  const requestId = (await deps.artifacts.getWorkflow(session.id))?.override?.id;
  if (requestId === undefined) {
    // Nothing to audit against: clear the session's copy so the gate stops honouring it.
    await deps.store.sessions.mutate(session.id, (s) => (s.override ? { override: null } : {}), { now: deps.now });
    report.overridesRevoked.push(session.id);
    return;
  }
  await breakGlassRevoke(deps, { step: 'break-glass-revoke', sessionId: session.id, requestId });
  // Already started means the break-glass run got there first: the review exists.
  await deps.engine.start(deps.stateMachines.reviewArn, `${requestId}-postmortem`, {
    sessionId: session.id,
    kind: 'postmortem',
    revision: 0,
    regenerated: false,
    requestId,
    approvalTimeoutSeconds: deps.timeouts.approvalTimeoutSeconds,
  });
  report.overridesRevoked.push(session.id);
}

async function reconcileSession(deps: WorkflowDeps, session: SessionRecord, report: ReconcileReport): Promise<void> {
  await revokeOverdueOverride(deps, session, report);
  await withdrawDeadApprovals(deps, session, report);
  const buffered = (await deps.store.inbox.peekOldest(session.id)) !== undefined;
  // No execution means paused on purpose (idle, or a failure the thread was told about): only input wakes it.
  // An execution that is set but not running was lost.
  const lost = session.executionArn ? !(await executionIsRunning(deps, session.executionArn)) : buffered;
  if (lost) {
    const resumed = await resumeSession(deps, session.id);
    if (resumed.resumed) report.resumed.push(session.id);
    return;
  }
  if (!buffered) return;
  const outcome = await tryDeliver(deps, session.id);
  if (outcome === 'recovered' || outcome === 'delivered') report.redelivered.push(session.id);
  else if (outcome === 'stale') {
    const resumed = await resumeSession(deps, session.id);
    if (resumed.resumed) report.resumed.push(session.id);
  }
}

const CONCURRENCY = 4;

export async function reconcile(
  deps: WorkflowDeps,
  p: z.infer<typeof ReconcilePayload> = { step: 'reconcile' },
): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    sessions: 0,
    resumed: [],
    redelivered: [],
    approvalsWithdrawn: [],
    overridesRevoked: [],
    failures: [],
  };
  const limit = p.maxSessions ?? 1000;
  let after: string | undefined;
  do {
    const page = await deps.store.sessions.listOpen({ limit: Math.min(200, limit - report.sessions), after });
    after = page.next;
    report.sessions += page.sessions.length;
    const queue = [...page.sessions];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let session = queue.shift(); session; session = queue.shift()) {
          try {
            await reconcileSession(deps, session, report);
          } catch (error) {
            // One broken session must not stop the repair of the others; it is tried again next run.
            report.failures.push({ sessionId: session.id, error: (error as Error).message ?? String(error) });
          }
        }
      }),
    );
  } while (after !== undefined && report.sessions < limit);
  const repaired =
    report.resumed.length +
    report.redelivered.length +
    report.approvalsWithdrawn.length +
    report.overridesRevoked.length;
  if (repaired > 0 || report.failures.length > 0) deps.logger.info('reconciled', { ...report });
  return report;
}
