import type { RequestFacts } from './faults.js';
import { isTrue } from './params.js';
import type { Route } from './routes.js';
import { ApiStatusError, reasonForCode } from './status.js';

/** What fault rules match on and what the request log shows: the verb and resource a request addresses. */
export function requestFacts(target: Route, url: URL, method: string): RequestFacts {
  const base = {
    path: url.pathname,
    url: `${method} ${url.pathname}${url.search}`,
    hasContinue: url.searchParams.has('continue') && url.searchParams.get('continue') !== '',
  };
  switch (target.type) {
    case 'list':
      return {
        ...base,
        verb: isTrue(url.searchParams.get('watch')) ? 'watch' : 'list',
        resource: target.info.plural,
        ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
      };
    case 'get':
      return {
        ...base,
        verb: 'get',
        resource: target.info.plural,
        ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
      };
    case 'log':
      return { ...base, verb: 'log', resource: 'pods', namespace: target.namespace };
    case 'secrets':
      return {
        ...base,
        verb: target.name === undefined ? 'list' : 'get',
        resource: 'secrets',
        ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
      };
    case 'metrics':
      if (target.kind === 'pods' || target.kind === 'nodes') {
        return {
          ...base,
          verb: target.name === undefined ? 'list' : 'get',
          resource: `${target.kind}.metrics.k8s.io`,
          ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
        };
      }
      return { ...base, verb: 'discovery' };
    default:
      return { ...base, verb: 'discovery' };
  }
}

/**
 * The Status an injected fault answers with, worded as kube-apiserver words that code (a 403 names the service
 * account and verb), so clients react to it as they would to the real failure.
 */
export function injectedStatus(code: number, facts: RequestFacts, message?: string): ApiStatusError {
  const resource = facts.resource ?? 'the requested resource';
  const verb = facts.verb === 'log' ? 'get' : facts.verb;
  const scope = facts.namespace ? ` in the namespace "${facts.namespace}"` : ' at the cluster scope';
  const text =
    message ??
    (code === 403
      ? `${resource} is forbidden: User "system:serviceaccount:calmops:snapshot-reader" cannot ${verb} resource "${resource}"${scope}`
      : code === 401
        ? 'Unauthorized'
        : `injected fault: ${code} ${reasonForCode(code)} for ${facts.verb} ${resource}`);
  return new ApiStatusError(code, reasonForCode(code), text, facts.resource ? { kind: facts.resource } : undefined);
}
