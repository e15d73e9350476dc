import type { IncomingMessage, ServerResponse } from 'node:http';
import { addBotMessage, checkMessageContent, editMessage, findMessage } from './chat.js';
import { recordCall, type StandInState } from './state.js';
import { type Answer, type Args, errorAnswer, fail, readText, sendJson } from './wire.js';

export const RESPONSE_URL_PATH = '/response/';

/**
 * `POST /response/<id>`: the response_url of an interaction. A post replaces, deletes or adds to the conversation
 * the interaction came from; it needs no token, as in Slack, and is recorded as a `response_url` call.
 */
export function responseUrlRoute(state: StandInState) {
  const postToResponseUrl = (id: string, args: Args): Answer => {
    const context = state.responseUrls.get(id);
    let response: Answer;
    try {
      if (context === undefined) fail('expired_url');
      checkMessageContent(args, !(args['delete_original'] === true || args['delete_original'] === 'true'));
      const original =
        context.messageTs === undefined ? undefined : findMessage(state, context.channel, context.messageTs);
      if (args['delete_original'] === true && original !== undefined) original.deleted = true;
      else if (args['replace_original'] === true && original !== undefined) editMessage(state, original, args);
      else
        addBotMessage(state, context.channel, args, args['response_type'] === 'in_channel' ? undefined : context.user);
      response = { ok: true };
    } catch (error) {
      response = errorAnswer(error);
    }
    recordCall(state, 'response_url', { ...args, response_url_id: id, ...(context ?? {}) }, false, response);
    return response;
  };

  return async (request: IncomingMessage, response: ServerResponse, id: string): Promise<void> => {
    const raw = await readText(request);
    let args: Args;
    try {
      args = raw === '' ? {} : (JSON.parse(raw) as Args);
    } catch {
      sendJson(response, 400, { ok: false, error: 'invalid_json' });
      return;
    }
    const answer = postToResponseUrl(id, args);
    sendJson(response, answer['error'] === 'expired_url' ? 404 : 200, answer);
  };
}
