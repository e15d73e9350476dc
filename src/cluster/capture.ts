import { byCodePoint } from '../code-point-order.js';
import { isConditionTrue } from './conditions.js';
import { ContinueTokenError } from './paging.js';
import { RESOURCES, type ResourceInfo } from './resources.js';
import { logKey } from './snapshot.js';
import {
  ClusterReadError,
  type ClusterReader,
  type KubeObject,
  type ReadFailureReason,
  type ResourceKind,
} from './types.js';

/**
 * Captures what a diagnosis of one namespace needs, through a read-only reader: the namespace's objects of every
 * readable namespaced kind, the cluster-scoped objects its workloads depend on, and the logs of the pods that are
 * failing. One kind failing to read is a warning, not a failure; an unreachable cluster is.
 */

export interface CaptureOptions {
  namespace: string;
  /** Read logs of pods that are not ready or restarting. */
  logs: boolean;
  /** Lines of each log to keep. */
  tailLines: number;
  /** Bound on log reads, so a namespace with hundreds of failing pods stays a reasonable capture. Default 100. */
  maxLogReads?: number;
  /** Reads in flight at once. Default 6. */
  concurrency?: number;
  /** Objects kept per kind; a kind with more is cut here, with a warning. Default 20 000. */
  maxItems?: number;
  /** The whole capture must finish within this; past it the capture fails. Default 5 minutes. */
  deadlineMs?: number;
  signal?: AbortSignal;
}

export interface CaptureResult {
  /** In snapshot order: by kind (as in RESOURCES), namespace, name. `managedFields` removed, as kubectl prints. */
  objects: KubeObject[];
  /** Log text by `logKey`. */
  logs: Record<string, string>;
  warnings: string[];
  /** Names of the ConfigMaps captured (written as they are). */
  configMaps: string[];
}

/** The capture cannot produce a useful snapshot: the cluster is unreachable, credentials fail, or no namespace. */
export class CaptureError extends Error {
  override readonly name = 'CaptureError';
  constructor(
    message: string,
    readonly reason: ReadFailureReason,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const DEFAULT_CAPTURE_MAX_ITEMS = 20_000;
export const DEFAULT_CAPTURE_DEADLINE_MS = 5 * 60 * 1000;

const FATAL: ReadonlySet<ReadFailureReason> = new Set(['unreachable', 'timeout', 'unauthorized']);
const CLUSTER_KINDS: readonly ResourceKind[] = ['nodes', 'storageclasses', 'ingressclasses', 'persistentvolumes'];
const KIND_ORDER = new Map(Object.values(RESOURCES).map((r, i) => [r.kind, i]));

/** What the later stages of one capture share: where they read, how many reads at once, and its warnings. */
interface CaptureRun {
  reader: ClusterReader;
  namespace: string;
  signal: AbortSignal;
  concurrency: number;
  /** Fails the whole capture once its deadline has passed. */
  checkDeadline: () => void;
  warnings: string[];
}

/** The logs of the containers worth reading (failing, restarting), up to the capture's limit. */
async function captureLogs(
  run: CaptureRun,
  pods: KubeObject[],
  options: CaptureOptions,
): Promise<Record<string, string>> {
  const { reader, namespace, signal, concurrency, warnings } = run;
  const logs: Record<string, string> = {};
  const wanted = logReads(pods, options.tailLines);
  const max = options.maxLogReads ?? 100;
  if (wanted.length > max) {
    warnings.push(`logs: ${wanted.length} container logs qualify; only the first ${max} were read`);
  }
  const logWarnings: string[] = [];
  await mapLimit(wanted.slice(0, max), concurrency, async (read, index) => {
    try {
      logs[logKey(namespace, read.pod, read.container, read.previous)] = await reader.logs(
        { namespace, pod: read.pod, container: read.container, previous: read.previous, tailLines: read.tailLines },
        signal,
      );
    } catch (error) {
      run.checkDeadline();
      logWarnings[index] = asReadFailure(error).message;
    }
  });
  run.checkDeadline();
  warnings.push(...logWarnings.filter((w) => w !== undefined));
  return logs;
}

/** Usage from metrics.k8s.io, where metrics-server runs: `kubectl top` and the analyzers answer from it on replay. */
async function captureUsage(run: CaptureRun): Promise<KubeObject[]> {
  const { reader, namespace, signal } = run;
  if (!reader.metrics) return [];
  try {
    const [pods, nodes] = await Promise.all([
      reader.metrics({ kind: 'pods', namespace }, signal),
      reader.metrics({ kind: 'nodes' }, signal),
    ]);
    return [...pods, ...nodes];
  } catch (error) {
    run.checkDeadline();
    const failure = asReadFailure(error);
    run.warnings.push(
      failure.reason === 'not-found'
        ? 'metrics: this cluster does not serve the Metrics API (metrics.k8s.io); no usage captured'
        : `metrics: ${failure.message}`,
    );
    return [];
  }
}

export async function captureNamespace(reader: ClusterReader, options: CaptureOptions): Promise<CaptureResult> {
  const { namespace } = options;
  const concurrency = options.concurrency ?? 6;
  const maxItems = options.maxItems ?? DEFAULT_CAPTURE_MAX_ITEMS;
  const deadlineMs = options.deadlineMs ?? DEFAULT_CAPTURE_DEADLINE_MS;
  if (!Number.isSafeInteger(maxItems) || maxItems < 1) throw new RangeError('maxItems must be a positive integer');
  if (!Number.isSafeInteger(deadlineMs) || deadlineMs < 1)
    throw new RangeError('deadlineMs must be a positive integer');
  // One signal for every read: the caller's, the capture's deadline, and a stop once the capture has failed, so no
  // read keeps going after the result is decided.
  const deadline = AbortSignal.timeout(deadlineMs);
  const stop = new AbortController();
  const signal = AbortSignal.any([deadline, stop.signal, ...(options.signal ? [options.signal] : [])]);
  const pastDeadline = () =>
    new CaptureError(
      `the capture did not finish within ${formatSeconds(deadlineMs)}; nothing was written (raise the deadline, or ` +
        'check why the API server is slow)',
      'timeout',
    );
  const fail = (error: CaptureError): never => {
    stop.abort(error);
    throw error;
  };
  const checkDeadline = () => {
    if (deadline.aborted) fail(pastDeadline());
  };
  const warnings: string[] = [];
  const objects: KubeObject[] = [];

  // The namespace read doubles as the connectivity probe: if it cannot reach the cluster nothing else will.
  try {
    objects.push(await reader.get({ kind: 'namespaces', name: namespace }, signal));
  } catch (error) {
    if (deadline.aborted) fail(pastDeadline());
    const failure = asReadFailure(error);
    if (FATAL.has(failure.reason)) fail(new CaptureError(failure.message, failure.reason, { cause: error }));
    if (failure.reason === 'not-found') {
      fail(new CaptureError(`namespace ${namespace} does not exist`, 'not-found', { cause: error }));
    }
    warnings.push(failure.message);
  }

  const namespacedKinds = Object.values(RESOURCES).filter((r) => r.namespaced);
  const reads: Array<{ info: ResourceInfo; namespace?: string }> = [
    ...namespacedKinds.map((info) => ({ info, namespace })),
    ...CLUSTER_KINDS.map((kind) => ({ info: RESOURCES[kind] })),
  ];
  const byKind = new Map<ResourceKind, KubeObject[]>();
  const failures: ReadFailureReason[] = [];
  // Warnings are kept in read order, whatever order the parallel reads finish in.
  const listWarnings: string[] = [];
  await mapLimit(reads, concurrency, async ({ info, namespace: ns }, index) => {
    if (signal.aborted) return;
    try {
      // One more than the bound tells a kind that was cut from one that fits exactly.
      const list = await reader.list(
        { kind: info.plural, ...(ns ? { namespace: ns } : {}), maxItems: maxItems + 1 },
        signal,
      );
      if (list.length > maxItems) {
        listWarnings[index] =
          `${info.plural}: more than ${maxItems} objects; the snapshot holds the first ${maxItems} (raise --max-items)`;
        list.length = maxItems;
      }
      byKind.set(info.plural, list);
    } catch (error) {
      if (deadline.aborted) fail(pastDeadline());
      // A server that breaks the paging protocol cannot be trusted for the other kinds either.
      if (error instanceof ContinueTokenError) fail(new CaptureError(error.message, error.reason, { cause: error }));
      if (stop.signal.aborted) return;
      const failure = asReadFailure(error);
      failures.push(failure.reason);
      listWarnings[index] =
        failure.reason === 'not-found'
          ? `${info.plural}: this cluster does not serve ${info.group || 'core'}/${info.version} ${info.plural}; skipped`
          : failure.message;
    }
  });
  if (deadline.aborted) fail(pastDeadline());
  warnings.push(...listWarnings.filter((w) => w !== undefined));
  if (failures.length === reads.length) {
    const reason = failures.find((r) => FATAL.has(r)) ?? failures[0] ?? 'server-error';
    throw new CaptureError(`no kind could be read from namespace ${namespace}:\n  ${warnings.join('\n  ')}`, reason);
  }

  const claims = byKind.get('persistentvolumeclaims') ?? [];
  byKind.set('persistentvolumes', relevantVolumes(byKind.get('persistentvolumes') ?? [], claims, namespace));
  for (const list of byKind.values()) objects.push(...list);

  const run: CaptureRun = { reader, namespace, signal, concurrency, checkDeadline, warnings };
  const logs = options.logs ? await captureLogs(run, byKind.get('pods') ?? [], options) : {};
  objects.push(...(await captureUsage(run)));

  const sorted = objects.map(withoutManagedFields).sort(snapshotOrder);
  const configMaps = sorted.filter((o) => o.kind === 'ConfigMap').map((o) => o.metadata.name);
  return { objects: sorted, logs: sortKeys(logs), warnings, configMaps };
}

/**
 * PersistentVolumes are cluster-wide; keep the ones this namespace's claims are bound to (or that claim them), and
 * when a claim is Pending also the Available ones, since why it does not bind to them is the diagnosis.
 */
function relevantVolumes(volumes: KubeObject[], claims: KubeObject[], namespace: string): KubeObject[] {
  const boundNames = new Set(claims.map((c) => c.spec?.volumeName).filter((n): n is string => typeof n === 'string'));
  const somePending = claims.some((c) => c.status?.phase === 'Pending');
  return volumes.filter(
    (pv) =>
      boundNames.has(pv.metadata.name) ||
      pv.spec?.claimRef?.namespace === namespace ||
      (somePending && pv.status?.phase === 'Available'),
  );
}

interface LogRead {
  pod: string;
  container: string;
  previous: boolean;
  tailLines: number;
}

interface ContainerStatus {
  name?: string;
  restartCount?: number;
  state?: { running?: unknown; terminated?: unknown; waiting?: unknown };
  lastState?: { terminated?: unknown };
}

/** Logs worth keeping: containers of pods that are not ready or restarting, and only containers that have run. */
export function logReads(pods: readonly KubeObject[], tailLines: number): LogRead[] {
  const reads: LogRead[] = [];
  for (const pod of pods) {
    if (pod.status?.phase === 'Succeeded') continue;
    const statuses: ContainerStatus[] = [
      ...(Array.isArray(pod.status?.initContainerStatuses) ? pod.status.initContainerStatuses : []),
      ...(Array.isArray(pod.status?.containerStatuses) ? pod.status.containerStatuses : []),
    ];
    const ready = isConditionTrue(pod, 'Ready');
    const restarting = statuses.some((s) => (s.restartCount ?? 0) > 0);
    if (ready && !restarting) continue;
    for (const status of statuses) {
      if (typeof status.name !== 'string') continue;
      const restarted = (status.restartCount ?? 0) > 0 || status.lastState?.terminated !== undefined;
      const hasRun = restarted || status.state?.running !== undefined || status.state?.terminated !== undefined;
      if (!hasRun) continue;
      reads.push({ pod: pod.metadata.name, container: status.name, previous: false, tailLines });
      if (restarted) reads.push({ pod: pod.metadata.name, container: status.name, previous: true, tailLines });
    }
  }
  return reads;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

function asReadFailure(error: unknown): { reason: ReadFailureReason; message: string } {
  if (error instanceof ClusterReadError) return { reason: error.reason, message: error.message };
  if (error instanceof Error && 'reason' in error && typeof error.reason === 'string') {
    return { reason: error.reason as ReadFailureReason, message: error.message };
  }
  throw error;
}

function withoutManagedFields(object: KubeObject): KubeObject {
  if (object.metadata.managedFields === undefined) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

function snapshotOrder(a: KubeObject, b: KubeObject): number {
  const byKind = (KIND_ORDER.get(a.kind ?? '') ?? 99) - (KIND_ORDER.get(b.kind ?? '') ?? 99);
  if (byKind !== 0) return byKind;
  const byNamespace = byCodePoint(a.metadata.namespace ?? '', b.metadata.namespace ?? '');
  return byNamespace !== 0 ? byNamespace : byCodePoint(a.metadata.name, b.metadata.name);
}

function sortKeys(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => byCodePoint(a, b)));
}

async function mapLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
