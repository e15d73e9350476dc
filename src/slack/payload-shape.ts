import * as z from 'zod';

/**
 * The least a verified Slack request must carry before Bolt and the handlers see it. Slack always sends these
 * fields; a signed body without them (a bug in a proxy, a hand-made request) is answered 400 here instead of
 * failing somewhere inside a handler with a 500.
 */

const Id = z.string().min(1).max(255);
const User = z.looseObject({ id: Id });

const SlashCommandForm = z.looseObject({ command: z.string().min(2), user_id: Id, channel_id: Id });

const InteractionSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('block_actions'),
    user: User,
    actions: z.array(z.looseObject({ action_id: z.string().max(255) })).min(1),
  }),
  z.looseObject({
    type: z.literal('view_submission'),
    user: User,
    view: z.looseObject({
      id: Id,
      callback_id: z.string().max(255),
      state: z.looseObject({ values: z.record(z.string(), z.unknown()) }),
    }),
  }),
  z.looseObject({
    type: z.literal('view_closed'),
    user: User,
    view: z.looseObject({ id: Id, callback_id: z.string().max(255) }),
  }),
  z.looseObject({ type: z.enum(['shortcut', 'message_action', 'block_suggestion']), user: User }),
]);

const EventsApiSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('url_verification'), challenge: z.string().max(1000) }),
  z.looseObject({ type: z.literal('event_callback'), event: z.looseObject({ type: z.string().min(1) }) }),
  z.looseObject({ type: z.literal('app_rate_limited') }),
]);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export type ShapeCheck = { ok: true } | { ok: false; problem: string };

const bad = (problem: string): ShapeCheck => ({ ok: false, problem });

/** Checks a body by its media type (without parameters): a form (slash command or interaction) or Events API JSON. */
export function checkSlackBody(rawBody: string, mediaType: string): ShapeCheck {
  if (mediaType === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(rawBody);
    const payload = form.get('payload');
    if (payload !== null) {
      return InteractionSchema.safeParse(parseJson(payload)).success
        ? { ok: true }
        : bad('the interaction payload is not a Slack interaction');
    }
    return SlashCommandForm.safeParse(Object.fromEntries(form)).success
      ? { ok: true }
      : bad('the form is neither a slash command nor an interaction');
  }
  if (mediaType === 'application/json') {
    return EventsApiSchema.safeParse(parseJson(rawBody)).success
      ? { ok: true }
      : bad('the JSON body is not an Events API request');
  }
  return bad(`Slack sends forms and JSON, not ${mediaType === '' ? 'a body without a content type' : mediaType}`);
}
