import * as z from 'zod';
import { BREAK_GLASS_LIMITS } from '../diagnosis/break-glass.js';
import { RecordId, SessionId, SUMMARY_MAX } from '../limits.js';
import { escapeText } from '../mrkdwn/escape.js';
import { hasMutatingSteps, type RemediationPlan } from '../review/plan.js';
import type { AutomatedReview } from '../review/rubric.js';
import { ApprovalAlreadyExistsError } from '../store/errors.js';
import type { SessionRecord } from '../store/sessions.js';
import { breakGlassApprovalView } from '../views/break-glass.js';
import type { ThreadMessage } from '../views/limits.js';
import { planReviewView, postmortemReviewView } from '../views/plan.js';
import { approvalIdFor, decidersOf, NoEligibleApproverError, postToSession, StepInputError } from './common.js';
import type { WorkflowDeps } from './deps.js';
import { recordEvent } from './events.js';
import { tryDeliver } from './wait-delivery.js';

/**
 * The notifier: every `.waitForTaskToken` state lands here. It stores the token where the deciding side finds it (the
 * wait item for thread input, an approval item for decisions), posts the question with its buttons (whose values are
 * approval ids, never tokens), and returns. The execution stays parked until SendTaskSuccess or its timeout.
 */

const Base = {
  step: z.literal('await'),
  sessionId: SessionId,
  taskToken: z.string().min(1).max(2048),
  executionArn: z.string().optional(),
  approvalTimeoutSeconds: z.number().int().min(1).optional(),
};

export const AwaitPayloadSchema = z.discriminatedUnion('kind', [
  z.object({ ...Base, kind: z.literal('input'), idleTimeoutSeconds: z.number().int().min(1).optional() }),
  z.object({
    ...Base,
    kind: z.literal('plan-review'),
    planId: z.string(),
    automatedReview: z.record(z.string(), z.unknown()).optional(),
    revision: z.number().int().min(0),
  }),
  z.object({
    ...Base,
    kind: z.literal('break-glass'),
    requestId: RecordId,
    approver: z.string().optional(),
  }),
  z.object({ ...Base, kind: z.literal('postmortem'), planId: z.string(), requestId: RecordId }),
]);
export type AwaitPayload = z.infer<typeof AwaitPayloadSchema>;

/** How long the state machine waits for this kind of decision (the same number the definitions use). */
function expiry(deps: WorkflowDeps, payload: AwaitPayload): Date {
  const seconds =
    payload.kind === 'input'
      ? (payload.idleTimeoutSeconds ?? deps.timeouts.idleTimeoutSeconds)
      : payload.kind === 'postmortem'
        ? BREAK_GLASS_LIMITS.reviewDueDays * 86_400
        : (payload.approvalTimeoutSeconds ?? deps.timeouts.approvalTimeoutSeconds);
  return new Date(deps.now().getTime() + seconds * 1000);
}

async function postOnce(
  deps: WorkflowDeps,
  sessionId: string,
  kind: string,
  approvalId: string,
  channelId: string,
  post: () => Promise<string>,
): Promise<void> {
  // A retried invocation finds the message it already posted and does not post it twice.
  const existing = await deps.artifacts.getPending(sessionId, kind, approvalId);
  if (existing?.messageTs) return;
  const messageTs = await post();
  await deps.artifacts.putPending({
    sessionId,
    kind,
    approvalId,
    channelId,
    messageTs,
    createdAt: deps.now().toISOString(),
  });
}

async function createApproval(
  deps: WorkflowDeps,
  input: Parameters<WorkflowDeps['store']['approvals']['create']>[0],
): Promise<void> {
  try {
    await deps.store.approvals.create(input, deps.now());
  } catch (error) {
    if (!(error instanceof ApprovalAlreadyExistsError)) throw error;
  }
}

/** What every kind of wait shares: the session, when the wait ends, the approval id its token gives, and a poster. */
interface AwaitContext {
  session: SessionRecord;
  expiresAt: Date;
  approvalId: string;
  post: (message: ThreadMessage) => () => Promise<string>;
}

/** Waits for thread input: the wait is recorded, and input already in the inbox is delivered at once. */
async function awaitInput(
  deps: WorkflowDeps,
  payload: Extract<AwaitPayload, { kind: 'input' }>,
  wait: AwaitContext,
): Promise<unknown> {
  const { session, expiresAt } = wait;
  await deps.store.waits.put(
    session.id,
    {
      token: payload.taskToken,
      expiresAt,
      purpose: 'input',
      ...(payload.executionArn ? { executionArn: payload.executionArn } : {}),
    },
    deps.now(),
  );
  const outcome = await tryDeliver(deps, session.id);
  return { waiting: true, delivered: outcome === 'delivered' || outcome === 'recovered' };
}

/** Asks the approvers who may review a remediation plan, its author excluded, to approve it in the thread. */
async function awaitPlanReview(
  deps: WorkflowDeps,
  payload: Extract<AwaitPayload, { kind: 'plan-review' }>,
  wait: AwaitContext,
): Promise<unknown> {
  const { session, expiresAt, approvalId, post } = wait;
  const record = await deps.artifacts.getPlan(session.id, payload.planId);
  if (!record) throw new StepInputError(`Plan ${payload.planId} does not exist`);
  const plan = record.plan as RemediationPlan | undefined;
  const mutating = plan ? hasMutatingSteps(plan) : false;
  const facts = {
    kind: 'plan-review',
    requester: session.requester,
    planAuthor: plan?.author ?? session.requester,
    planHasMutatingSteps: mutating,
  };
  const deciders = await decidersOf(deps, session, facts);
  if (deciders.length === 0)
    throw new NoEligibleApproverError('No approver other than the plan author may review this plan');
  await createApproval(deps, {
    id: approvalId,
    kind: 'plan-review',
    sessionId: session.id,
    token: payload.taskToken,
    allowedDeciders: deciders,
    requester: session.requester,
    expiresAt,
    summary: plan?.summary.slice(0, SUMMARY_MAX) ?? 'Remediation plan',
    data: { ...facts, planId: payload.planId, channelId: session.channelId, threadTs: session.threadTs },
  });
  const message: ThreadMessage = plan
    ? planReviewView({
        sessionId: session.id,
        approvalId,
        plan,
        ...(payload.automatedReview ? { review: payload.automatedReview as unknown as AutomatedReview } : {}),
        revision: payload.revision,
        expiresAt: expiresAt.toISOString(),
      })
    : planReviewFallback(session.id, approvalId, record.message ?? 'No valid plan could be produced.');
  await postOnce(deps, session.id, 'plan-review', approvalId, session.channelId, post(message));
  await recordEvent(deps, session.id, 'approval.requested', {
    summary: 'Plan review requested',
    data: { kind: 'plan-review', approvalId, planId: payload.planId, revision: payload.revision },
  });
  return { approvalId };
}

/** Asks the senior named in a break-glass request to approve the override. */
async function awaitBreakGlass(
  deps: WorkflowDeps,
  payload: Extract<AwaitPayload, { kind: 'break-glass' }>,
  wait: AwaitContext,
): Promise<unknown> {
  const { session, expiresAt, post } = wait;
  const approval = await attachToken(deps, payload.requestId, payload.taskToken, expiresAt);
  const data = approval.data;
  await postOnce(
    deps,
    session.id,
    'break-glass',
    payload.requestId,
    session.channelId,
    post(
      breakGlassApprovalView({
        sessionId: session.id,
        requestId: payload.requestId,
        approvalId: payload.requestId,
        requester: String(approval.requester ?? data['requester'] ?? ''),
        approver: String(payload.approver ?? data['approverUserId'] ?? data['approver'] ?? ''),
        justification: String(data['justification'] ?? ''),
        targetState: String(data['targetState'] ?? ''),
        timeLimitMinutes: Number(data['timeLimitMinutes'] ?? 0),
        expiresAt: expiresAt.toISOString(),
      }),
    ),
  );
  await recordEvent(deps, session.id, 'break-glass.approval-requested', {
    summary: 'Senior approval requested',
    data: { requestId: payload.requestId },
  });
  return { approvalId: payload.requestId };
}

/** Asks for the post-incident review of an override, which its requester may not sign off. */
async function awaitPostmortem(
  deps: WorkflowDeps,
  payload: Extract<AwaitPayload, { kind: 'postmortem' }>,
  wait: AwaitContext,
): Promise<unknown> {
  const { session, expiresAt, approvalId, post } = wait;
  const record = await deps.artifacts.getPlan(session.id, payload.planId);
  // The review checks the override, so whoever asked for it cannot sign it off.
  const request = await deps.artifacts.getApprovalItem(payload.requestId);
  const overrideRequester = typeof request?.['requester'] === 'string' ? request['requester'] : undefined;
  const deciders = (await decidersOf(deps, session, { kind: 'postmortem', requester: session.requester })).filter(
    (user) => user !== overrideRequester,
  );
  if (deciders.length === 0) {
    throw new NoEligibleApproverError(
      'Nobody but the override’s requester may complete this post-incident review; name other approvers in the channel policy',
    );
  }
  await createApproval(deps, {
    id: approvalId,
    kind: 'postmortem',
    sessionId: session.id,
    token: payload.taskToken,
    allowedDeciders: deciders,
    requester: session.requester,
    expiresAt,
    summary: `Post-incident review of break-glass ${payload.requestId}`,
    data: {
      kind: 'postmortem',
      requester: session.requester,
      requestId: payload.requestId,
      channelId: session.channelId,
    },
  });
  await postOnce(
    deps,
    session.id,
    'postmortem',
    approvalId,
    session.channelId,
    post(
      postmortemReviewView({
        sessionId: session.id,
        approvalId,
        requestId: payload.requestId,
        summary: record?.message ?? `Break-glass ${payload.requestId} ended.`,
        lines: record?.feedback ?? [],
        expiresAt: expiresAt.toISOString(),
      }),
    ),
  );
  return { approvalId };
}

export async function runAwait(deps: WorkflowDeps, payload: AwaitPayload): Promise<unknown> {
  const session = await deps.store.sessions.getRequired(payload.sessionId);
  const expiresAt = expiry(deps, payload);
  const approvalId = approvalIdFor(payload.taskToken);
  const post = (message: ThreadMessage) => () => postToSession(deps, session, message);
  const wait: AwaitContext = { session, expiresAt, approvalId, post };
  switch (payload.kind) {
    case 'input':
      return awaitInput(deps, payload, wait);
    case 'plan-review':
      return awaitPlanReview(deps, payload, wait);
    case 'break-glass':
      return awaitBreakGlass(deps, payload, wait);
    case 'postmortem':
      return awaitPostmortem(deps, payload, wait);
  }
}

function planReviewFallback(sessionId: string, approvalId: string, message: string): ThreadMessage {
  // The synthesizer's message can quote the plan it rejected, and the plan quotes the cluster.
  const said = escapeText(message);
  return {
    text: said,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `:memo: ${said}`.slice(0, 3000) } },
      {
        type: 'actions',
        block_id: `plan-review:${approvalId}`,
        elements: [
          {
            type: 'button',
            text: { type: 'plain_text', text: 'Request changes' },
            action_id: 'approval_request_changes',
            value: approvalId,
          },
          {
            type: 'button',
            text: { type: 'plain_text', text: 'Reject' },
            action_id: 'approval_deny',
            value: approvalId,
          },
        ],
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `Full report: \`/triage status ${sessionId}\`` }] },
    ],
  };
}

/**
 * The break-glass request was stored by the Slack side before the machine started; its senior-approval wait attaches
 * the task token to that same approval item, so the senior's click finds it.
 */
async function attachToken(deps: WorkflowDeps, requestId: string, token: string, expiresAt: Date) {
  const attached = await deps.artifacts.attachApprovalToken(requestId, 'break-glass', token, expiresAt);
  if (!attached) throw new StepInputError(`Break-glass request ${requestId} is not waiting for a decision`);
  return attached;
}
