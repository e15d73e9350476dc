import { createHash } from 'node:crypto';
import type { App, SlackViewMiddlewareArgs, ViewOutput } from '@slack/bolt';
import * as z from 'zod';
import { BreakGlassValidationError, normalizeUser, validateBreakGlassRequest } from '../../diagnosis/break-glass.js';
import { RecordId, SUMMARY_MAX } from '../../limits.js';
import { type ChannelPolicy, seniorsOf } from '../../policy/channel-policy.js';
import type { ModalRecord } from '../../store/modals.js';
import type { SessionRecord } from '../../store/sessions.js';
import {
  BREAK_GLASS_BLOCKS,
  BREAK_GLASS_CALLBACK,
  INPUT_ACTION,
  REQUEST_CHANGES_CALLBACK,
  untrackedModalView,
} from '../../views/modals.js';
import type { SlackAppDeps } from '../deps.js';
import { decideApproval } from './actions/decide-approval.js';
import { auditRefusal, ephemeral, nowOf } from './common.js';

const BreakGlassMetadataSchema = z.object({
  s: RecordId,
  c: z.string().min(1),
  t: z.string().optional(),
});
const RequestChangesMetadataSchema = z.object({
  a: RecordId,
  c: z.string().optional(),
  m: z.string().optional(),
});

type Values = ViewOutput['state']['values'];

/** The submitted value of an input block, whatever its element type. */
function inputValue(values: Values, blockId: string): string | undefined {
  const element = values[blockId]?.[INPUT_ACTION] as
    | { value?: string | null; selected_user?: string | null; selected_option?: { value?: string } | null }
    | undefined;
  if (element === undefined) return undefined;
  return element.value ?? element.selected_user ?? element.selected_option?.value ?? undefined;
}

type Errors = Record<string, string>;

type BreakGlassRequest = ReturnType<typeof validateBreakGlassRequest>;

/**
 * The request as validated against the session it is for and the channel's seniors; a refusal says, per field of
 * the modal, what is wrong, and is audited on the session's timeline.
 */
async function checkedBreakGlassRequest(
  deps: SlackAppDeps,
  input: {
    raw: Parameters<typeof validateBreakGlassRequest>[0];
    session: SessionRecord | undefined;
    channelId: string;
    channel: ChannelPolicy | undefined;
    seniors: string[];
    userId: string;
  },
): Promise<{ ok: true; request: BreakGlassRequest } | { ok: false; errors: Errors }> {
  const { raw, session, channelId, channel, seniors } = input;
  try {
    if (session === undefined || session.status !== 'open' || session.channelId !== channelId) {
      throw new BreakGlassValidationError({ sessionId: ['This session is no longer open.'] });
    }
    if (channel === undefined) {
      throw new BreakGlassValidationError({ sessionId: ['This channel has no senior group in the calmops policy.'] });
    }
    return {
      ok: true,
      request: validateBreakGlassRequest(raw, {
        session: { id: session.id, state: session.state },
        seniorApprovers: seniors,
      }),
    };
  } catch (error) {
    if (!(error instanceof BreakGlassValidationError)) throw error;
    const errors: Errors = {};
    for (const [field, messages] of Object.entries(error.fieldErrors)) {
      const block = field in BREAK_GLASS_BLOCKS ? field : BREAK_GLASS_BLOCKS.justification;
      errors[block] = [errors[block], ...(messages ?? [])].filter(Boolean).join(' ');
    }
    await auditRefusal(deps, session?.id, {
      actor: input.userId,
      action: 'break-glass.request',
      decision: { allowed: false, code: 'not-senior', reason: error.message },
      detail: { fields: Object.keys(error.fieldErrors) },
    });
    return { ok: false, errors };
  }
}

/**
 * Validates a break-glass request from the modal and, when valid, stores it as a `break-glass` approval for the
 * named senior and hands it to the session; the override itself waits for the senior's click.
 */
async function submitBreakGlass(
  deps: SlackAppDeps,
  input: { userId: string; metadata: string; values: Values; modal: ModalRecord },
): Promise<{ ok: true; requestId: string } | { ok: false; errors: Errors }> {
  const meta = BreakGlassMetadataSchema.safeParse(safeJson(input.metadata));
  // The record written when the modal was opened says which session it is for; the metadata must agree with it.
  if (!meta.success || meta.data.s !== input.modal.sessionId || meta.data.c !== input.modal.channelId)
    return { ok: false, errors: { [BREAK_GLASS_BLOCKS.justification]: 'This form is out of date; open it again.' } };
  const { sessionId, channelId, threadTs } = input.modal;
  const session = await deps.store.sessions.get(sessionId);
  const channel = session?.channelId === channelId ? deps.policy.forChannel(channelId) : undefined;
  const seniors = channel === undefined ? [] : [...(await deps.membership.everyone(seniorsOf(channel)))];
  const raw = {
    sessionId,
    requester: input.userId,
    justification: inputValue(input.values, BREAK_GLASS_BLOCKS.justification),
    seniorApprover: inputValue(input.values, BREAK_GLASS_BLOCKS.seniorApprover),
    timeLimitMinutes: inputValue(input.values, BREAK_GLASS_BLOCKS.timeLimitMinutes),
    skipToState: inputValue(input.values, BREAK_GLASS_BLOCKS.skipToState),
    change: inputValue(input.values, BREAK_GLASS_BLOCKS.change),
  };
  const checked = await checkedBreakGlassRequest(deps, {
    raw,
    session,
    channelId,
    channel,
    seniors,
    userId: input.userId,
  });
  if (!checked.ok) return checked;
  const request = checked.request;

  const now = nowOf(deps);
  const approval = await deps.store.approvals.create(
    {
      kind: 'break-glass',
      sessionId: request.sessionId,
      allowedDeciders: [normalizeUser(request.seniorApprover)],
      requester: request.requester,
      expiresAt: new Date(now.getTime() + deps.approvalTimeoutSeconds * 1000),
      summary:
        `Break glass to ${request.skipToState} for ${request.timeLimitMinutes} min: ${request.justification}`.slice(
          0,
          SUMMARY_MAX,
        ),
      data: {
        phase: 'requested',
        approverUserId: request.seniorApprover,
        justification: request.justification,
        targetState: request.skipToState,
        previousState: request.previousState,
        timeLimitMinutes: request.timeLimitMinutes,
        ...(request.change ? { change: request.change } : {}),
        channelId,
        ...(threadTs === undefined ? {} : { threadTs }),
      },
    },
    now,
  );
  await deps.store.timeline.append(
    request.sessionId,
    {
      type: 'break-glass.requested',
      actor: request.requester,
      summary:
        `Break glass to ${request.skipToState} for ${request.timeLimitMinutes} min${request.change ? ` to run ${request.change}` : ''}`.slice(
          0,
          SUMMARY_MAX,
        ),
      data: {
        requestId: approval.id,
        targetState: request.skipToState,
        timeLimitMinutes: request.timeLimitMinutes,
        requester: request.requester,
        approver: request.seniorApprover,
        ...(request.change ? { change: request.change } : {}),
      },
    },
    now,
  );
  await deps.workflow.deliverInput({
    sessionId: request.sessionId,
    userId: input.userId,
    text: 'break glass',
    source: 'button',
    action: { type: 'break-glass', requestId: approval.id },
    messageKey: `break-glass:${approval.id}`,
  });
  return { ok: true, requestId: approval.id };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The parts of Bolt's listener arguments a view listener reads; a test passes a fake payload of this shape. */
export type ViewArgs = Pick<SlackViewMiddlewareArgs, 'ack' | 'body' | 'view'>;

/** The record of this modal, opened for this person; undefined (and logged) for a modal calmops never opened. */
async function openedModal(
  deps: SlackAppDeps,
  view: ViewOutput,
  userId: string,
  kind: ModalRecord['kind'],
): Promise<ModalRecord | undefined> {
  const modal = await deps.store.modals.submitted(view.id, { kind, userId }, nowOf(deps));
  if (modal === undefined) {
    (deps.logger ?? console).warn('refused a submission of a modal that was not opened here', {
      kind,
      viewId: view.id.slice(0, 64),
    });
  }
  return modal;
}

/** The break-glass modal submitted: files the request for the named senior's approval. */
async function onBreakGlassSubmitted(deps: SlackAppDeps, { ack, body, view }: ViewArgs): Promise<void> {
  try {
    // A double click on Submit must not file two requests, but a corrected resubmission after a validation error
    // must go through: Slack keeps the view hash across it, so the submitted values are part of the key.
    const submitted = createHash('sha256').update(JSON.stringify(view.state.values)).digest('hex').slice(0, 32);
    if (!(await deps.store.dedupe.firstDelivery(`view:${view.id}:${view.hash}:${submitted}`))) {
      await ack();
      return;
    }
    const modal = await openedModal(deps, view, body.user.id, 'break-glass');
    if (modal === undefined) {
      await ack({ response_action: 'update', view: untrackedModalView() });
      return;
    }
    const result = await submitBreakGlass(deps, {
      userId: body.user.id,
      metadata: view.private_metadata,
      values: view.state.values,
      modal,
    });
    if (!result.ok) {
      await ack({ response_action: 'errors', errors: result.errors });
      return;
    }
    await ack();
    await deps.store.modals.completed(modal.viewId, nowOf(deps));
    await ephemeral(deps, {
      channel: modal.channelId,
      user: body.user.id,
      text: 'Break-glass request filed. The senior you named gets the approval in the thread; nothing is overridden until they approve.',
      ...(modal.threadTs === undefined ? {} : { threadTs: modal.threadTs }),
    });
  } catch (error) {
    (deps.logger ?? console).error('break-glass submission failed', { error: (error as Error).message });
    await ack({
      response_action: 'errors',
      errors: { [BREAK_GLASS_BLOCKS.justification]: 'Could not file the request right now; try again in a minute.' },
    });
  }
}

/** The request-changes modal submitted: decides the approval with the note as what should change. */
async function onRequestChangesSubmitted(deps: SlackAppDeps, { ack, body, view }: ViewArgs): Promise<void> {
  try {
    const meta = RequestChangesMetadataSchema.safeParse(safeJson(view.private_metadata));
    const note = inputValue(view.state.values, 'note')?.trim() ?? '';
    const modal = await openedModal(deps, view, body.user.id, 'request-changes');
    if (modal === undefined) {
      await ack({ response_action: 'update', view: untrackedModalView() });
      return;
    }
    if (!meta.success || meta.data.a !== modal.approvalId) {
      await ack({ response_action: 'errors', errors: { note: 'This form is out of date; click the button again.' } });
      return;
    }
    if (note.length < 5) {
      await ack({ response_action: 'errors', errors: { note: 'Say what should change (at least 5 characters).' } });
      return;
    }
    const result = await decideApproval(deps, {
      approvalId: meta.data.a,
      userId: body.user.id,
      decision: 'request-changes',
      note,
      channelId: modal.channelId,
      ...(modal.messageTs === undefined ? {} : { messageTs: modal.messageTs }),
    });
    if (!result.ok) {
      await ack({ response_action: 'errors', errors: { note: result.message } });
      return;
    }
    await ack();
    await deps.store.modals.completed(modal.viewId, nowOf(deps));
  } catch (error) {
    (deps.logger ?? console).error('request-changes submission failed', { error: (error as Error).message });
    await ack({
      response_action: 'errors',
      errors: { note: 'Could not send this right now; try again in a minute.' },
    });
  }
}

/**
 * A submission of a modal no other listener knows. A modal has no channel to post an ephemeral to, so the modal
 * itself says it is no longer tracked.
 */
export async function onUnknownSubmission(deps: SlackAppDeps, { ack, view }: Pick<ViewArgs, 'ack' | 'view'>) {
  if (KNOWN_CALLBACKS.has(view.callback_id)) return;
  (deps.logger ?? console).info('modal with an unknown callback id', { callbackId: view.callback_id.slice(0, 64) });
  await ack({ response_action: 'update', view: untrackedModalView() });
}

export function registerSubmissions(app: App, deps: SlackAppDeps): void {
  app.view(BREAK_GLASS_CALLBACK, (args) => onBreakGlassSubmitted(deps, args));
  app.view(REQUEST_CHANGES_CALLBACK, (args) => onRequestChangesSubmitted(deps, args));
  // Registered last: Bolt runs every matching listener, and only these answer callback ids none of the above knows.
  app.view({ type: 'view_submission', callback_id: /[\s\S]*/ }, (args) => onUnknownSubmission(deps, args));
  // calmops asks for no close notifications; any that arrive need only an acknowledgement.
  app.view({ type: 'view_closed', callback_id: /[\s\S]*/ }, async ({ ack }) => {
    await ack();
  });
}

const KNOWN_CALLBACKS: ReadonlySet<string> = new Set([BREAK_GLASS_CALLBACK, REQUEST_CHANGES_CALLBACK]);
