import { logKey, type SnapshotLogs } from '../cluster/snapshot.js';
import type { KubeObject } from '../cluster/types.js';
import { badRequest } from './status.js';

/**
 * `GET /api/v1/namespaces/NS/pods/NAME/log` with the validation kubelet and the API server apply, so clients see the
 * same 400s for a missing container name, an unknown container, or a previous instance that never existed.
 */

export interface LogOptions {
  container?: string;
  previous: boolean;
  tailLines?: number;
  limitBytes?: number;
}

interface ContainerRef {
  name: string;
}

function names(list: unknown): string[] {
  return Array.isArray(list) ? list.map((c: ContainerRef) => c.name).filter((n) => typeof n === 'string') : [];
}

function containerStatus(
  pod: KubeObject,
  container: string,
): { state?: { waiting?: { reason?: string } } } | undefined {
  const all = [
    ...(Array.isArray(pod.status?.containerStatuses) ? pod.status.containerStatuses : []),
    ...(Array.isArray(pod.status?.initContainerStatuses) ? pod.status.initContainerStatuses : []),
  ];
  return all.find((s: { name?: string }) => s.name === container);
}

export function podLog(pod: KubeObject, logs: SnapshotLogs, options: LogOptions): string {
  const podName = pod.metadata.name;
  const namespace = pod.metadata.namespace ?? '';
  const containers = names(pod.spec?.containers);
  const initContainers = names(pod.spec?.initContainers);
  const ephemeral = names(pod.spec?.ephemeralContainers);
  let container = options.container;
  if (!container) {
    if (containers.length === 1) {
      container = containers[0] as string;
    } else {
      const init = initContainers.length > 0 ? ` or one of the init containers: [${initContainers.join(' ')}]` : '';
      throw badRequest(
        `a container name must be specified for pod ${podName}, choose one of: [${containers.join(' ')}]${init}`,
      );
    }
  }
  if (![...containers, ...initContainers, ...ephemeral].includes(container)) {
    throw badRequest(`container ${container} is not valid for pod ${podName}`);
  }
  const text = logs[logKey(namespace, podName, container, options.previous)];
  if (text === undefined) {
    if (options.previous) {
      throw badRequest(`previous terminated container "${container}" in pod "${podName}" not found`);
    }
    const waiting = containerStatus(pod, container)?.state?.waiting?.reason;
    if (waiting) throw badRequest(`container "${container}" in pod "${podName}" is waiting to start: ${waiting}`);
    return '';
  }
  return limit(text, options);
}

function limit(text: string, options: LogOptions): string {
  let result = text;
  if (options.tailLines !== undefined) {
    const lines = result.split('\n');
    const trailingNewline = lines.length > 0 && lines[lines.length - 1] === '';
    if (trailingNewline) lines.pop();
    const kept = options.tailLines <= 0 ? [] : lines.slice(-options.tailLines);
    result = kept.length > 0 ? `${kept.join('\n')}${trailingNewline ? '\n' : ''}` : '';
  }
  if (options.limitBytes !== undefined) {
    result = Buffer.from(result, 'utf8').subarray(0, options.limitBytes).toString('utf8');
  }
  return result;
}
