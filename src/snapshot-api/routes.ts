import { RESOURCES, type ResourceInfo } from '../cluster/resources.js';
import { apiGroupDocument, apiResourceList, apiVersions, SERVER_VERSION } from './discovery.js';

/** What a request path addresses, decided before any query parameter is looked at. */
export type Route =
  | { type: 'document'; body: object }
  | { type: 'health' }
  | { type: 'list'; info: ResourceInfo; namespace?: string }
  | { type: 'get'; info: ResourceInfo; namespace?: string; name: string }
  | { type: 'log'; namespace: string; name: string }
  /** Secrets exist in every real cluster but are never served: lists are empty and gets are not found. */
  | { type: 'secrets'; namespace?: string; name?: string }
  /** `POST …/selfsubjectrulesreviews` (`kubectl auth can-i --list`, `calmops doctor`): what this server lets a caller do. */
  | { type: 'rulesReview' }
  /** `/apis`: the group list, with metrics.k8s.io when the snapshot holds usage. */
  | { type: 'groups' }
  /** metrics.k8s.io: its discovery documents, and PodMetrics and NodeMetrics (`kubectl top`). */
  | { type: 'metrics'; kind: 'group' | 'resources' | 'pods' | 'nodes'; namespace?: string; name?: string }
  | { type: 'unknown' };

const METRICS_GROUP = 'metrics.k8s.io';
const METRICS_VERSION = 'v1beta1';

const RULES_REVIEW_PATH = ['apis', 'authorization.k8s.io', 'v1', 'selfsubjectrulesreviews'];

const BY_PREFIX = new Map<string, Map<string, ResourceInfo>>();
for (const info of Object.values(RESOURCES)) {
  const prefix = info.group === '' ? `api/${info.version}` : `apis/${info.group}/${info.version}`;
  let plurals = BY_PREFIX.get(prefix);
  if (!plurals) {
    plurals = new Map();
    BY_PREFIX.set(prefix, plurals);
  }
  plurals.set(info.plural, info);
}

export function route(pathname: string): Route {
  let segments: string[];
  try {
    segments = pathname
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    return { type: 'unknown' };
  }
  const [root, a, b] = segments;
  if (segments.length === 1 && root === 'version') return { type: 'document', body: SERVER_VERSION };
  if (segments.length === 1 && (root === 'healthz' || root === 'livez' || root === 'readyz')) return { type: 'health' };
  if (root === 'api') {
    if (segments.length === 1) return { type: 'document', body: apiVersions() };
    if (a !== 'v1') return { type: 'unknown' };
    if (segments.length === 2) return documentOrUnknown(apiResourceList('', 'v1'));
    return resourceRoute('api/v1', segments.slice(2));
  }
  if (segments.length === RULES_REVIEW_PATH.length && RULES_REVIEW_PATH.every((p, i) => segments[i] === p)) {
    return { type: 'rulesReview' };
  }
  if (root === 'apis' && a === METRICS_GROUP) return metricsRoute(segments.slice(2));
  if (root === 'apis') {
    if (segments.length === 1) return { type: 'groups' };
    if (segments.length === 2) return documentOrUnknown(apiGroupDocument(a as string));
    if (segments.length === 3) return documentOrUnknown(apiResourceList(a as string, b as string));
    return resourceRoute(`apis/${a}/${b}`, segments.slice(3));
  }
  return { type: 'unknown' };
}

function metricsRoute(rest: string[]): Route {
  if (rest.length === 0) return { type: 'metrics', kind: 'group' };
  const [version, first, second, third, fourth] = rest;
  if (version !== METRICS_VERSION) return { type: 'unknown' };
  if (rest.length === 1) return { type: 'metrics', kind: 'resources' };
  if ((first === 'pods' || first === 'nodes') && rest.length <= 3) {
    return { type: 'metrics', kind: first, ...(second !== undefined ? { name: second } : {}) };
  }
  if (first === 'namespaces' && second !== undefined && third === 'pods' && rest.length <= 5) {
    return { type: 'metrics', kind: 'pods', namespace: second, ...(fourth !== undefined ? { name: fourth } : {}) };
  }
  return { type: 'unknown' };
}

function documentOrUnknown(body: object | undefined): Route {
  return body ? { type: 'document', body } : { type: 'unknown' };
}

function resourceRoute(prefix: string, rest: string[]): Route {
  const plurals = BY_PREFIX.get(prefix);
  if (!plurals) return { type: 'unknown' };
  const isCore = prefix === 'api/v1';
  const [first, second, third, fourth, fifth] = rest;
  // /namespaces/NS/<plural>[/NAME[/log]]
  if (first === 'namespaces' && rest.length >= 3 && second !== undefined && third !== undefined) {
    if (isCore && third === 'secrets' && rest.length <= 4) return { type: 'secrets', namespace: second, name: fourth };
    const info = plurals.get(third);
    if (!info?.namespaced) return { type: 'unknown' };
    if (rest.length === 3) return { type: 'list', info, namespace: second };
    if (rest.length === 4 && fourth !== undefined) return { type: 'get', info, namespace: second, name: fourth };
    if (rest.length === 5 && info.plural === 'pods' && fifth === 'log' && fourth !== undefined) {
      return { type: 'log', namespace: second, name: fourth };
    }
    return { type: 'unknown' };
  }
  if (first === undefined) return { type: 'unknown' };
  if (isCore && first === 'secrets' && rest.length === 1) return { type: 'secrets' };
  const info = plurals.get(first);
  if (!info) return { type: 'unknown' };
  if (rest.length === 1) return { type: 'list', info };
  if (rest.length === 2 && second !== undefined && !info.namespaced) return { type: 'get', info, name: second };
  return { type: 'unknown' };
}

/**
 * The answer to a SelfSubjectRulesReview: what anyone may do here, which is what the server serves. Every kind it
 * knows may be read (get, list, watch) and pod logs fetched; Secrets are not among them (their lists are empty). As
 * on a real cluster, every caller may also ask about its own access, and read the discovery documents.
 */
export function selfSubjectRulesReview(request: unknown, metricsServed = false): object {
  const spec = (request as { spec?: { namespace?: unknown } } | null)?.spec;
  const namespace = typeof spec?.namespace === 'string' ? spec.namespace : '';
  const byGroup = new Map<string, string[]>();
  for (const info of Object.values(RESOURCES))
    byGroup.set(info.group, [...(byGroup.get(info.group) ?? []), info.plural]);
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: {},
    spec: { namespace },
    status: {
      resourceRules: [
        {
          verbs: ['create'],
          apiGroups: ['authorization.k8s.io'],
          resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        },
        ...[...byGroup].map(([group, resources]) => ({
          verbs: ['get', 'list', 'watch'],
          apiGroups: [group],
          resources,
        })),
        { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
        ...(metricsServed
          ? [{ verbs: ['get', 'list'], apiGroups: [METRICS_GROUP], resources: ['nodes', 'pods'] }]
          : []),
      ],
      nonResourceRules: [
        {
          verbs: ['get'],
          nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/version', '/healthz', '/livez', '/readyz'],
        },
      ],
      incomplete: false,
    },
  };
}
