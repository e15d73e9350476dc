import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { StandInMessage, StandInView } from '../../slack/records.js';
import { failureName } from '../bot-client.js';
import {
  type ActionInput,
  messageBlockActionsBody,
  type ViewStateValues,
  viewBlockActionsBody,
  viewClosedBody,
  viewSubmissionBody,
} from '../payloads.js';
import { type ActionContext, channelFor, checkPersona, slackId, slackTs } from './context.js';
import { parse, SandboxRequestError } from './requests.js';

const OptionSchema = z.object({
  text: z.object({ type: z.literal('plain_text'), text: z.string(), emoji: z.boolean().optional() }),
  value: z.string(),
});

const ActionSchema = z.object({
  action_id: z.string().min(1).max(255),
  block_id: z.string().min(1).max(255),
  type: z.string().min(1).max(64),
  value: z.string().max(2000).optional(),
  text: z.string().max(2000).optional(),
  style: z.string().max(16).optional(),
  selected_option: OptionSchema.optional(),
  selected_user: z.string().optional(),
});

const StateSchema = z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown())));

const ActionRequestSchema = z.object({
  user: slackId,
  container: z.discriminatedUnion('type', [
    z.object({ type: z.literal('message'), channel: slackId, ts: slackTs }),
    z.object({ type: z.literal('view'), viewId: z.string().min(1) }),
  ]),
  action: ActionSchema,
  state: StateSchema.default({}),
});

const ViewRequestSchema = z.object({ user: slackId, viewId: z.string().min(1), state: StateSchema.default({}) });

const FORM = 'application/x-www-form-urlencoded';

/**
 * `POST /sandbox/api/action`, `/sandbox/api/view/submit` and `/sandbox/api/view/close`: a person clicking in a
 * message or a modal, submitting a modal or closing it, sent to the app as Slack's interaction payloads. Slack's own
 * handling of the app's ack (errors shown in the modal, a view replaced or pushed, the stack cleared) happens here.
 */
export function interactionActions(context: ActionContext) {
  const { standIn, workspace, bot, page } = context;

  return {
    async action(body: unknown) {
      const input = parse(ActionRequestSchema, body);
      checkPersona(workspace, input.user);
      const triggerId = standIn.triggerId(input.user);
      const act = stripUndefined(input.action);
      let payload: string;
      if (input.container.type === 'message') {
        const { channel: channelId, ts } = input.container;
        channelFor(workspace, channelId, input.user);
        const message = await page.findMessage(channelId, ts);
        if (message === undefined) throw new SandboxRequestError(`no message ${ts} in ${channelId}`, 404);
        if (message.ephemeral_to !== undefined && message.ephemeral_to !== input.user) {
          throw new SandboxRequestError('that message is visible only to someone else', 403);
        }
        const isEphemeral = message.ephemeral_to !== undefined;
        payload = messageBlockActionsBody(workspace, {
          user: input.user,
          channel: channelId,
          messageTs: ts,
          ...(message.thread_ts === undefined ? {} : { threadTs: message.thread_ts }),
          isEphemeral,
          ...(isEphemeral ? {} : { message: messagePayload(workspace.teamId, message) }),
          action: act,
          state: input.state as ViewStateValues,
          responseUrl: standIn.responseUrl({ channel: channelId, user: input.user, messageTs: ts }),
          triggerId,
        });
      } else {
        const view = page.findView(input.user, input.container.viewId);
        payload = viewBlockActionsBody(workspace, {
          user: input.user,
          view,
          action: act,
          state: input.state as ViewStateValues,
          triggerId,
        });
      }
      const answer = await bot(payload, FORM);
      return { status: answer.status, ...(answer.failure === undefined ? {} : { failure: answer.failure }) };
    },

    async submit(body: unknown) {
      const input = parse(ViewRequestSchema, body);
      checkPersona(workspace, input.user);
      const view = page.findView(input.user, input.viewId);
      const payload = viewSubmissionBody(workspace, {
        user: input.user,
        view,
        state: input.state as ViewStateValues,
        triggerId: standIn.triggerId(input.user),
      });
      const answer = await bot(payload, FORM);
      const failure = failureName(answer);
      // Slack keeps the modal open and says so inside it when the app does not answer properly.
      if (failure !== undefined) return { closed: false, failure };
      if (answer.body.trim() === '') {
        page.closeView(input.user, input.viewId);
        return { closed: true };
      }
      let ack: Record<string, unknown>;
      try {
        ack = JSON.parse(answer.body) as Record<string, unknown>;
      } catch {
        return { closed: false, failure: 'invalid_response' };
      }
      switch (ack['response_action']) {
        case 'errors':
          return { closed: false, errors: (ack['errors'] ?? {}) as Record<string, string> };
        case 'clear':
          page.closeView(input.user, input.viewId, true);
          return { closed: true };
        case 'update':
        case 'push': {
          const next = {
            ...(ack['view'] as Record<string, unknown>),
            id: ack['response_action'] === 'update' ? view.id : `V${randomBytes(5).toString('hex').toUpperCase()}`,
            hash: `${Date.now()}.${randomBytes(4).toString('hex')}`,
            user: input.user,
            type: 'modal',
          } as StandInView;
          page.showAckView(input.user, next, ack['response_action'] === 'push');
          return { closed: false };
        }
        default:
          page.closeView(input.user, input.viewId);
          return { closed: true };
      }
    },

    async close(body: unknown) {
      const input = parse(ViewRequestSchema, body);
      checkPersona(workspace, input.user);
      const view = page.findView(input.user, input.viewId);
      page.closeView(input.user, input.viewId);
      if (view['notify_on_close'] === true) {
        const answer = await bot(
          viewClosedBody(workspace, { user: input.user, view, state: input.state as ViewStateValues }),
          FORM,
        );
        return { closed: true, status: answer.status };
      }
      return { closed: true };
    },
  };
}

function stripUndefined(action: z.infer<typeof ActionSchema>): ActionInput {
  return Object.fromEntries(Object.entries(action).filter(([, v]) => v !== undefined)) as unknown as ActionInput;
}

/** A channel message as Slack echoes it in a block_actions payload. */
function messagePayload(teamId: string, message: StandInMessage): Record<string, unknown> {
  return {
    type: 'message',
    ...(message.bot_id === undefined ? {} : { bot_id: message.bot_id, app_id: 'ACALMOPS' }),
    user: message.user,
    text: message.text,
    ...(message.blocks === undefined ? {} : { blocks: message.blocks }),
    ts: message.ts,
    ...(message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts }),
    ...(message.edited === undefined ? {} : { edited: { user: message.user, ts: message.edited.ts } }),
    team: teamId,
  };
}
