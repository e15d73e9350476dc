import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultInjector } from './faults.js';
import { writeStatus } from './http.js';
import { injectedStatus, requestFacts } from './request-facts.js';
import { type Route, route } from './routes.js';
import { SelectorSyntaxError } from './selectors.js';
import type { RecordedRequest, SnapshotState } from './state.js';
import { ApiStatusError, badRequest, methodNotAllowed } from './status.js';

/**
 * The request pipeline every route shares: record the request, apply the injected faults, check the method, then
 * hand over to the route's answer, turning the API errors it throws into `Status` answers.
 */

export const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

export interface RouteRequest {
  state: SnapshotState;
  url: URL;
  req: IncomingMessage;
  res: ServerResponse;
}

interface RouteEntry<T extends Route> {
  /** Any other method is a 405, whatever the path. */
  methods: ReadonlySet<string>;
  answer(target: T, request: RouteRequest): void | Promise<void>;
}

/** One entry per kind of path, so a new kind of route cannot be added without saying how it is answered. */
export type RouteTable = { readonly [K in Route['type']]: RouteEntry<Extract<Route, { type: K }>> };

export function requestListener(
  state: SnapshotState,
  injector: FaultInjector,
  routes: RouteTable,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    state.countRequest();
    handle(state, injector, routes, req, res).catch((error: unknown) => {
      if (!res.headersSent) writeStatus(res, internalError(error));
      else res.destroy();
    });
  };
}

async function handle(
  state: SnapshotState,
  injector: FaultInjector,
  routes: RouteTable,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://snapshot.invalid');
  const method = (req.method ?? 'GET').toUpperCase();
  const target = route(url.pathname);
  const facts = requestFacts(target, url, method);
  const record: RecordedRequest = {
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    verb: READ_METHODS.has(method) ? facts.verb : 'other',
    ...(facts.resource ? { resource: facts.resource } : {}),
    ...(facts.namespace ? { namespace: facts.namespace } : {}),
  };
  state.record(record);
  res.on('finish', () => {
    record.status = res.statusCode;
  });

  const decision = injector.decide(facts);
  if (decision.delayMs > 0) await state.sleep(decision.delayMs);
  if (decision.effect?.type === 'hang') return;
  if (decision.effect?.type === 'reset') {
    req.socket.destroy();
    return;
  }
  if (decision.effect?.type === 'status') {
    writeStatus(res, injectedStatus(decision.effect.status, facts, decision.effect.message));
    return;
  }
  try {
    await dispatch(routes, target, method, { state, url, req, res });
  } catch (error) {
    if (error instanceof ApiStatusError) writeStatus(res, error);
    else if (error instanceof SelectorSyntaxError) writeStatus(res, badRequest(error.message));
    else throw error;
  }
}

function dispatch<T extends Route>(routes: RouteTable, target: T, method: string, request: RouteRequest) {
  // The table is indexed by the target's own type, so its entry takes exactly this kind of target.
  const entry = routes[target.type as T['type']] as RouteEntry<T>;
  if (!entry.methods.has(method)) throw methodNotAllowed();
  return entry.answer(target, request);
}

function internalError(error: unknown): ApiStatusError {
  const message = error instanceof Error ? error.message : String(error);
  return new ApiStatusError(500, 'InternalError', `Internal error occurred: ${message}`);
}
