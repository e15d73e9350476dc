import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  parseSnapshotLogs,
  parseSnapshotText,
  type SnapshotLogs,
  siblingLogsPath,
} from '../../src/cluster/snapshot.js';
import type { KubeObject } from '../../src/cluster/types.js';

/**
 * What each demo namespace looks like after someone ran the approved plan. calmops never changes a cluster, so in
 * the sandbox this stands in for the person at the keyboard. Each after-state is captured data in `fixed/`: the
 * namespace as the cluster reports it a few minutes after the fix (new objects with their own uids, controllers'
 * status caught up, Normal events following the fault's warnings, the logs of the new containers), plus the
 * cluster-scoped objects the fix created. Running a fix swaps the namespace for its captured state and leaves
 * everything else untouched.
 */

export interface DemoCluster {
  objects: readonly KubeObject[];
  logs: SnapshotLogs;
}

type DemoFixFunction = (cluster: DemoCluster) => DemoCluster;

export interface DemoFix {
  namespace: string;
  /** The root cause the fix removes. */
  rootCause: string;
  /** What was done, as the person who ran the plan would say it. */
  summary: string;
  /** What the person did on a real cluster, step by step (commands where there is one). */
  steps: readonly string[];
  apply: DemoFixFunction;
}

export class DemoFixError extends Error {
  override readonly name = 'DemoFixError';
}

interface CapturedFix {
  namespaced: KubeObject[];
  clusterScoped: KubeObject[];
  logs: SnapshotLogs;
}

const captured = new Map<string, CapturedFix>();

/** `fixed/<namespace>.yaml` and its `.logs.json`, read once per process. */
function capturedFix(namespace: string): CapturedFix {
  const known = captured.get(namespace);
  if (known !== undefined) return known;
  const file = fileURLToPath(new URL(`./fixed/${namespace}.yaml`, import.meta.url));
  const { objects } = parseSnapshotText(readFileSync(file, 'utf8'), file);
  const logsFile = siblingLogsPath(file);
  const logs = parseSnapshotLogs(readFileSync(logsFile, 'utf8'), logsFile);
  const fix = {
    namespaced: objects.filter((o) => o.metadata.namespace === namespace),
    clusterScoped: objects.filter((o) => o.metadata.namespace === undefined),
    logs,
  };
  captured.set(namespace, fix);
  return fix;
}

/**
 * The cluster with `namespace` replaced by `namespaced`, plus cluster-scoped objects the fix created. Logs of the
 * namespace are replaced as a whole: containers that no longer exist have none.
 */
function replaceNamespace(
  cluster: DemoCluster,
  namespace: string,
  fixed: { namespaced: readonly KubeObject[]; clusterScoped?: readonly KubeObject[]; logs: SnapshotLogs },
): DemoCluster {
  const added = fixed.clusterScoped ?? [];
  const addedKeys = new Set(added.map((o) => `${o.kind}/${o.metadata.name}`));
  const objects: KubeObject[] = [];
  let inserted = false;
  for (const o of cluster.objects) {
    if (o.metadata.namespace === namespace) {
      // Keep the namespace where it was in the file, so a fixed and a restored cluster read in the same order.
      if (!inserted) objects.push(...fixed.namespaced);
      inserted = true;
      continue;
    }
    if (o.metadata.namespace === undefined && addedKeys.has(`${o.kind}/${o.metadata.name}`)) continue;
    objects.push(o);
  }
  if (!inserted) objects.push(...fixed.namespaced);
  objects.push(...added);
  const logs: SnapshotLogs = {};
  for (const [key, text] of Object.entries(cluster.logs)) if (!key.startsWith(`${namespace}/`)) logs[key] = text;
  Object.assign(logs, fixed.logs);
  return { objects, logs };
}

function applyCaptured(namespace: string): DemoFixFunction {
  return (cluster) => {
    if (!cluster.objects.some((o) => o.metadata.namespace === namespace)) {
      throw new DemoFixError(`the cluster has no namespace ${namespace} to fix`);
    }
    const fix = capturedFix(namespace);
    // Copies, so that whoever serves the result may change it without touching the captured state.
    return replaceNamespace(cluster, namespace, {
      namespaced: structuredClone(fix.namespaced),
      clusterScoped: structuredClone(fix.clusterScoped),
      logs: { ...fix.logs },
    });
  };
}

/** One fix per broken demo namespace (wiki is healthy and has none). */
const FIXES: readonly Omit<DemoFix, 'apply'>[] = [
  {
    namespace: 'ml-team',
    rootCause: 'PVC_STORAGECLASS_NOT_FOUND',
    summary: 'created the StorageClass fast-ssd; the claim bound to a new volume and the training pod runs',
    steps: ['kubectl apply -f storageclass-fast-ssd.yaml'],
  },
  {
    namespace: 'payments',
    rootCause: 'POD_INSUFFICIENT_CPU',
    summary: 'lowered payments-api’s CPU request to 1500m; the new pods are scheduled and Ready',
    steps: ['kubectl set resources deployment payments-api -n payments --requests=cpu=1500m'],
  },
  {
    namespace: 'orders',
    rootCause: 'CONTAINER_CRASHLOOP_CONFIG_ERROR',
    summary: 'set DATABASE_URL from the ConfigMap order-worker-config and restarted order-worker; the pods stay up',
    steps: [
      'kubectl apply -f order-worker-config.yaml',
      'kubectl set env deployment/order-worker -n orders --from=configmap/order-worker-config --keys=DATABASE_URL',
      'kubectl rollout restart deployment order-worker -n orders',
    ],
  },
  {
    namespace: 'inventory',
    rootCause: 'ROUTE_PODS_NOT_READY',
    summary: 'brought the inventory database back; both pods pass readiness and the route has backends again',
    steps: [
      'brought the database behind 172.30.41.17:5432 back up',
      'kubectl get endpoints inventory -n inventory   # both pods listed as ready',
    ],
  },
];

export const DEMO_FIXES: readonly DemoFix[] = FIXES.map((fix) => ({ ...fix, apply: applyCaptured(fix.namespace) }));

export function demoFixFor(namespace: string): DemoFix | undefined {
  return DEMO_FIXES.find((f) => f.namespace === namespace);
}
