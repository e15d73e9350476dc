import { resetState, type StandInState, viewsOf, visibleMessages } from './state.js';

/**
 * What tests and the sandbox read (and reset) of the stand-in over HTTP, beside the Web API methods, keyed by
 * `METHOD path`:
 *
 *   GET  /_calls[?method=chat.postMessage&after=<seq>]   recorded calls, after a sequence number so a poll reads only
 *                                                         what is new
 *   GET  /_messages[?channel=C…]                         the conversation as people see it
 *   GET  /_views[?user=U…]                               modals and App Home views
 *   POST /_reset                                         forgets calls, messages and views
 */
export function readoutRoutes(state: StandInState): Record<string, (query: URLSearchParams) => unknown> {
  return {
    'GET /_calls': (query) => {
      const method = query.get('method');
      const after = Number(query.get('after') ?? '0');
      return state.calls.filter((c) => (method === null || c.method === method) && c.seq > after);
    },
    'GET /_messages': (query) => visibleMessages(state, query.get('channel') ?? undefined),
    'GET /_views': (query) => viewsOf(state, query.get('user') ?? undefined),
    'POST /_reset': () => {
      resetState(state);
      return { ok: true };
    },
  };
}
