import type { IncomingMessage, ServerResponse } from 'node:http';
import { chatMethods } from './chat.js';
import { directoryMethods } from './directory.js';
import { fileMethods } from './files.js';
import { recordCall, type StandInState } from './state.js';
import { viewMethods } from './views.js';
import { type Answer, type Args, errorAnswer, fail, parseArgs, readText, sendJson, str } from './wire.js';

export const WEB_API_PATH = '/api/';

/**
 * `POST /api/<method>`: the Web API methods calmops calls, with Slack's checks before any of them runs (a known
 * method, a token, a failure a harness asked for), and every call recorded with its answer.
 */
export function webApiRoute(state: StandInState) {
  const methods: Record<string, (args: Args) => Answer> = {
    ...directoryMethods(state),
    ...chatMethods(state),
    ...viewMethods(state),
    ...fileMethods(state),
  };

  const callMethod = (method: string, args: Args, authenticated: boolean): Answer => {
    let response: Answer;
    try {
      const handler = methods[method];
      if (handler === undefined) fail('unknown_method');
      if (!authenticated) fail('not_authed');
      const failure = state.failures.get(method);
      if (failure !== undefined) {
        failure.count -= 1;
        if (failure.count <= 0) state.failures.delete(method);
        fail(failure.error);
      }
      response = { ok: true, ...handler(args) };
    } catch (error) {
      response = errorAnswer(error);
    }
    recordCall(state, method, args, authenticated, response);
    return response;
  };

  return async (request: IncomingMessage, response: ServerResponse, method: string): Promise<void> => {
    const raw = await readText(request);
    let args: Args;
    try {
      args = parseArgs(raw, request.headers['content-type']);
    } catch {
      sendJson(response, 200, { ok: false, error: 'invalid_json' });
      return;
    }
    const authorization = request.headers.authorization ?? '';
    const authenticated = /^Bearer \S+$/.test(authorization) || str(args['token']) !== undefined;
    delete args['token'];
    sendJson(response, 200, callMethod(method, args, authenticated));
  };
}
