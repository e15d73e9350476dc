import {
  ClusterReadError,
  type ClusterReader,
  type KubeObject,
  ReadOnlyViolationError,
  type ResourceKind,
} from '../cluster/types.js';
import { suggest } from './suggest.js';

/**
 * Whether the namespace a triage read exists. A triage of a namespace that is not there reads nothing and finds no
 * fault, which must not pass for a healthy namespace. The answer comes from what the reads return: the Namespace
 * object itself (a 404 from a permitted read means it is absent), else the namespace list; in a snapshot, which may
 * hold objects without their Namespace, also the namespaces its objects live in. When the identity may read none of
 * these, the answer is that it could not be confirmed, never that the namespace is missing.
 */

export type NamespaceCheck =
  | { status: 'found' }
  /** Absent, as far as reads that were permitted can tell; `present` is undefined when the list could not be read. */
  | { status: 'missing'; present: string[] | undefined }
  | { status: 'unconfirmed'; reason: string };

const LIST_LIMIT = 2000;
/** Kinds whose objects say which namespaces a snapshot without Namespace objects holds. */
const NAMESPACED_KINDS: readonly ResourceKind[] = [
  'pods',
  'events',
  'deployments',
  'services',
  'persistentvolumeclaims',
];

type Outcome<T> = { ok: true; value: T } | { ok: false; reason: string; denied: boolean };

async function attempt<T>(read: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await read() };
  } catch (error) {
    if (error instanceof ClusterReadError) {
      return {
        ok: false,
        reason: error.reason,
        denied: error.reason === 'forbidden' || error.reason === 'unauthorized',
      };
    }
    if (error instanceof ReadOnlyViolationError) return { ok: false, reason: error.reason, denied: true };
    throw error;
  }
}

export interface CheckNamespaceOptions {
  signal?: AbortSignal;
  /**
   * A replayed snapshot may hold objects of a namespace without its Namespace object: then the namespaces its
   * objects live in count too. A live cluster has no object in a namespace that does not exist.
   */
  snapshot?: boolean;
  /**
   * Namespaces the triage's own reads returned objects from (see `witnessNamespaces`): an object read in a namespace
   * proves the namespace is there, with no further read, in a cluster and in a snapshot alike.
   */
  seen?: ReadonlySet<string>;
}

/**
 * `reader` with the namespaces of the objects it returns noted in `seen`, so that the namespace check after a triage
 * usually needs no read of its own: a replayed snapshot without its Namespace objects would otherwise list every pod
 * and event of the snapshot once more.
 */
export function witnessNamespaces(reader: ClusterReader): { reader: ClusterReader; seen: ReadonlySet<string> } {
  const seen = new Set<string>();
  const note = (object: KubeObject) => {
    const namespace = object.metadata?.namespace;
    if (namespace) seen.add(namespace);
  };
  return {
    seen,
    reader: {
      list: async (query, signal) => {
        const objects = await reader.list(query, signal);
        // A list holds thousands of objects, nearly all of one namespace in a row: only a change of namespace is
        // looked at twice.
        let previous: string | undefined;
        for (let i = 0; i < objects.length; i++) {
          const namespace = (objects[i] as KubeObject).metadata?.namespace;
          if (namespace !== previous) {
            if (namespace) seen.add(namespace);
            previous = namespace;
          }
        }
        return objects;
      },
      get: async (query, signal) => {
        const object = await reader.get(query, signal);
        note(object);
        return object;
      },
      logs: (query, signal) => reader.logs(query, signal),
      ...(reader.table ? { table: reader.table.bind(reader) } : {}),
      ...(reader.metrics ? { metrics: reader.metrics.bind(reader) } : {}),
    },
  };
}

export async function checkNamespace(
  reader: ClusterReader,
  namespace: string,
  options: CheckNamespaceOptions = {},
): Promise<NamespaceCheck> {
  const { signal } = options;
  if (options.seen?.has(namespace)) return { status: 'found' };
  const get = await attempt(() => reader.get({ kind: 'namespaces', name: namespace }, signal));
  if (get.ok) return { status: 'found' };
  const absentByGet = get.reason === 'not-found';
  if (!absentByGet && !get.denied) {
    return { status: 'unconfirmed', reason: `reading namespace "${namespace}" failed (${get.reason})` };
  }

  const list = await attempt(() => reader.list({ kind: 'namespaces', maxItems: LIST_LIMIT }, signal));
  const listed = list.ok ? list.value.map((n) => n.metadata.name).sort() : [];
  if (listed.includes(namespace)) return { status: 'found' };

  // Every cluster lists some namespaces: an empty list is a snapshot served as a cluster, holding no Namespace objects.
  if (options.snapshot || (list.ok && list.value.length === 0)) {
    const holding = await namespacesHoldingObjects(reader, signal);
    if (holding?.has(namespace)) return { status: 'found' };
    const present = [...new Set([...listed, ...(holding ?? [])])].sort();
    if (holding !== undefined || listed.length > 0) return { status: 'missing', present };
    return { status: 'unconfirmed', reason: 'the snapshot lists no namespaces, and its objects could not be read' };
  }

  if (list.ok) {
    // A list cut short may not reach the name: only the namespace's own 404, or a complete list, says it is absent.
    if (absentByGet || list.value.length < LIST_LIMIT) return { status: 'missing', present: listed };
    return { status: 'unconfirmed', reason: `the identity may not get namespace "${namespace}" (${get.reason})` };
  }
  if (absentByGet) return { status: 'missing', present: undefined };
  return {
    status: 'unconfirmed',
    reason: `the identity may not read namespaces (get: ${get.reason}, list: ${list.reason})`,
  };
}

/** The namespaces that objects of the usual namespaced kinds live in; undefined when none of them could be read. */
async function namespacesHoldingObjects(reader: ClusterReader, signal?: AbortSignal): Promise<Set<string> | undefined> {
  const seen = new Set<string>();
  let readable = 0;
  const lists = await Promise.all(
    NAMESPACED_KINDS.map((kind) => attempt(() => reader.list({ kind, maxItems: LIST_LIMIT }, signal))),
  );
  for (const objects of lists) {
    if (!objects.ok) continue;
    readable++;
    for (const o of objects.value) if (o.metadata.namespace) seen.add(o.metadata.namespace);
  }
  return readable === 0 ? undefined : seen;
}

const SHOWN = 8;

/** `namespace "paymnts" not found (did you mean "payments"?); namespaces present: default, kube-system, payments`. */
export function describeMissing(namespace: string, present: readonly string[] | undefined, where: string): string {
  const head = `namespace "${namespace}" not found in ${where}`;
  if (present === undefined) return `${head} (the identity may not list namespaces, so none can be shown)`;
  if (present.length === 0) return `${head}; it holds no namespaced objects`;
  const close = suggest(namespace, present);
  // The likely meant ones first, then the rest in order, so a long list still shows the useful names.
  const ordered = [...close, ...present.filter((n) => !close.includes(n))];
  const list = ordered.slice(0, SHOWN).join(', ') + (ordered.length > SHOWN ? `, … (${ordered.length} in all)` : '');
  const hint = close.length > 0 ? ` (did you mean "${close[0]}"?)` : '';
  return `${head}${hint}; namespaces present: ${list}`;
}
